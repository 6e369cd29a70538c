//! Running a future to its end on a fresh current-thread runtime, for tests
//! (property tests, say) that are not `#[tokio::test]` functions.

/// Runs `future` on a current-thread runtime with time enabled.
pub fn block_on<F: std::future::Future>(future: F) -> F::Output {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap()
        .block_on(future)
}

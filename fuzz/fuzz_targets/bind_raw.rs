//! The raw-argument entry of the binder: the input, as UTF-8 text (lossy),
//! is the argument text of a `probe` call, on a lenient and on a strict
//! registry, each with and without the typed fast path.
//!
//! Invariants: no panic (the registry's own panic catching would hide one,
//! so a call must end as `Success` or `InvalidArguments`); an error result
//! has at least one error and a bounded text; a success has no errors and
//! echoes an object; the fast path answers exactly as the full binder; what
//! strict mode accepts, lenient mode accepts unchanged and without warnings.
#![no_main]

use std::sync::LazyLock;

use libfuzzer_sys::fuzz_target;
use tool_runtime::{Outcome, ToolRegistry, ToolResult};
use tool_runtime_fuzz::{registry, runtime};

struct Registries {
    lenient: ToolRegistry,
    lenient_slow: ToolRegistry,
    strict: ToolRegistry,
    strict_slow: ToolRegistry,
}

static REGISTRIES: LazyLock<Registries> = LazyLock::new(|| Registries {
    lenient: registry(false),
    lenient_slow: registry(false).with_fast_path(false),
    strict: registry(true),
    strict_slow: registry(true).with_fast_path(false),
});

/// SPEC 11 bounds a refused call's text at 8 KiB, whatever the input. (An
/// earlier run of this target found texts growing with the input, seeds
/// `finding-error-text-over-8k-*`; they are kept as regressions.)
const MAX_REFUSAL_TEXT: usize = 8 * 1024;

fn check(result: &ToolResult, input: &str) {
    match result.outcome() {
        Outcome::Success => {
            assert!(result.errors.is_empty(), "a success with errors: {result:?}");
            assert!(
                result.structured_content.as_ref().is_some_and(|v| v.is_object()),
                "a success that echoed no object: {result:?}"
            );
        }
        Outcome::InvalidArguments => {
            assert!(result.is_error);
            assert!(
                !result.errors.is_empty(),
                "an error result with no error code: {result:?}"
            );
            let text = result.text();
            assert!(
                text.len() <= MAX_REFUSAL_TEXT,
                "{} bytes of error text for {} bytes of input",
                text.len(),
                input.len()
            );
        }
        other => panic!("the probe call ended as {other:?}: {result:?}"),
    }
}

/// The echo with the `HashSet` parameter sorted: its order is the set's own
/// and differs from one set to the next.
fn echo(result: &ToolResult) -> Option<serde_json::Value> {
    let mut echo = result.structured_content.clone()?;
    if let Some(serde_json::Value::Array(skip)) = echo.get_mut("skip") {
        skip.sort_by_key(|v| v.as_u64());
    }
    Some(echo)
}

fn same(fast: &ToolResult, slow: &ToolResult, mode: &str) {
    assert_eq!(fast.is_error, slow.is_error, "{mode}: the fast path decided otherwise");
    assert_eq!(fast.error_codes(), slow.error_codes(), "{mode}: errors differ by path");
    assert_eq!(
        fast.warning_codes(),
        slow.warning_codes(),
        "{mode}: warnings differ by path"
    );
    assert_eq!(echo(fast), echo(slow), "{mode}: values differ by path");
}

fuzz_target!(|data: &[u8]| {
    thread_local! {
        static RUNTIME: tokio::runtime::Runtime = runtime();
    }
    let input = String::from_utf8_lossy(data);
    let registries = &*REGISTRIES;
    let call =
        |registry: &'static ToolRegistry| RUNTIME.with(|runtime| runtime.block_on(registry.call("probe", &*input)));
    let lenient = call(&registries.lenient);
    let lenient_slow = call(&registries.lenient_slow);
    let strict = call(&registries.strict);
    let strict_slow = call(&registries.strict_slow);
    for result in [&lenient, &lenient_slow, &strict, &strict_slow] {
        check(result, &input);
    }
    same(&lenient, &lenient_slow, "lenient");
    same(&strict, &strict_slow, "strict");
    if !strict.is_error {
        assert!(
            !lenient.is_error,
            "strict accepted what lenient refused: {:?}",
            lenient.errors
        );
        assert!(
            strict.warnings.is_empty(),
            "strict mode changed a value: {:?}",
            strict.warnings
        );
        assert_eq!(echo(&strict), echo(&lenient));
    }
});

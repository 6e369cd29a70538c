//! What `#[tool]`'s return-type check reads: the probe and the two traits
//! that accept a type. The failing case and the other checks (a derived
//! parameter's `Deserialize`, a string default) are traits `#[tool]` and
//! `#[derive(ToolParam)]` define beside the check, carrying the message a
//! user reads, so no error names an item of the runtime's. Not public API.

use serde::Serialize;

use crate::output::IntoToolOutput;

/// A tool's return type (or the `T` of its `Result<T, E>`): read through
/// autoref specialization, as the dispatcher reads it (`IntoToolOutput`
/// first, then `Serialize`). The third case, neither, is a trait that
/// `#[tool]` defines beside the check (so the error names no item of the
/// runtime's): its method's `T: IntoToolOutput` bound fails with the
/// message `IntoToolOutput` carries.
pub struct OutputProbe<T>(std::marker::PhantomData<T>);

impl<T> OutputProbe<T> {
    /// For type `T`.
    pub fn new() -> Self {
        OutputProbe(std::marker::PhantomData)
    }
}

impl<T> Default for OutputProbe<T> {
    fn default() -> Self {
        Self::new()
    }
}

/// The type says how it becomes output.
pub trait AssertIntoToolOutput {
    /// Nothing to check.
    fn assert_return_type(&self) {}
}

impl<T: IntoToolOutput> AssertIntoToolOutput for &&OutputProbe<T> {}

/// The type becomes JSON output.
pub trait AssertSerialize {
    /// Nothing to check.
    fn assert_return_type(&self) {}
}

impl<T: Serialize> AssertSerialize for &OutputProbe<T> {}

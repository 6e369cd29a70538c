//! Marker traits whose only job is a clear compile error. The code that
//! `#[tool]` and `#[derive(ToolParam)]` generate asserts them, spanned at
//! the user's type or default, before anything else uses that type, so the
//! first error says what is wrong in the user's words rather than naming
//! generated internals. Not public API.

use serde::Serialize;
use serde::de::DeserializeOwned;

use crate::output::IntoToolOutput;

/// A derived `ToolParam` type must also derive `Deserialize`.
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be a tool parameter: it does not implement `Deserialize`",
    label = "add `#[derive(ToolParam, Deserialize)]` to this type",
    note = "the model's arguments are JSON: a tool parameter is deserialized from them"
)]
pub trait ParamDeserialize {}

impl<T: DeserializeOwned> ParamDeserialize for T {}

/// A string literal default (`default = "main"`) is converted with `From<&str>`.
#[diagnostic::on_unimplemented(
    message = "a string default needs a type made from `&str`, and `{Self}` is not",
    label = "write the value itself, e.g. `default = {Self}::Variant` for an enum",
    note = "`default = \"...\"` converts the text with `From<&str>`; any other default is an expression of the parameter's type"
)]
pub trait StrDefault {}

impl<T: From<&'static str>> StrDefault for T {}

/// Asserts that `T` can be made from a string default; called with the
/// default's span, so the error points at the default.
pub fn assert_str_default<T: StrDefault>(_: std::marker::PhantomData<T>) {}

/// A tool's return type (or the `T` of its `Result<T, E>`): read through
/// autoref specialization, as the dispatcher reads it (`IntoToolOutput`
/// first, then `Serialize`); neither is one clear error at the type.
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
    fn __assert_output(&self) {}
}

impl<T: IntoToolOutput> AssertIntoToolOutput for &&OutputProbe<T> {}

/// The type becomes JSON output.
pub trait AssertSerialize {
    /// Nothing to check.
    fn __assert_output(&self) {}
}

impl<T: Serialize> AssertSerialize for &OutputProbe<T> {}

/// Neither: the method's bound is the error.
pub trait AssertNeither<T> {
    /// Fails to compile: `T` is no output.
    fn __assert_output(&self)
    where
        T: ToolOutputType,
    {
    }
}

impl<T> AssertNeither<T> for OutputProbe<T> {}

/// What a tool may return. No type implements it: it only names the error.
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be a tool's return type: the return type must implement `Serialize` or `IntoToolOutput`",
    label = "add `#[derive(Serialize)]` to this type, or implement `IntoToolOutput` for it",
    note = "`String`, `ToolOutput`, `Json<T>` and every `Serialize` type can be returned, plain or as the `T` of `Result<T, E>`"
)]
pub trait ToolOutputType {}

//! Procedural macros for `tool-runtime`: `#[tool]` and `#[derive(ToolParam)]`.
//!
//! Depend on `tool-runtime`, which re-exports both; its documentation
//! describes them. This crate only converts token streams: the logic lives in
//! ordinary functions over `proc_macro2::TokenStream` so unit tests can call it.
//!
//! - `ast`: the borrowed model of a `#[tool]` function
//! - `attr`: parsing `#[tool(...)]` and `#[param(...)]`
//! - `docs`: descriptions from doc comments
//! - `valid`: the rules, each error spanned at its token; `ctxt` collects them
//! - `expand`: code generation of the definition; `invoke`: of the dispatcher;
//!   `fallback`: what is emitted on error
//! - `derive`, `case`: `#[derive(ToolParam)]` and serde's rename rules

#![forbid(unsafe_code)]

mod ast;
mod attr;
mod case;
mod ctxt;
mod derive;
mod docs;
mod expand;
mod fallback;
mod invoke;
mod valid;

use proc_macro::TokenStream;

/// Turns a function into a tool. See `tool_runtime::tool`.
#[proc_macro_attribute]
pub fn tool(args: TokenStream, item: TokenStream) -> TokenStream {
    expand::tool(args.into(), item.into()).into()
}

/// Implements `ToolParam` for a struct or a unit-variant enum. See
/// `tool_runtime::ToolParam`.
#[proc_macro_derive(ToolParam, attributes(param))]
pub fn derive_tool_param(input: TokenStream) -> TokenStream {
    derive::tool_param(input.into()).into()
}

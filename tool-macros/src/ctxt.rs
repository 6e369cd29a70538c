//! Collects every error of one macro invocation, so a user who makes two
//! mistakes sees two errors in one build.
//!
//! Errors are kept as `syn::Error`s built from the offending node, which
//! span all of its tokens (`<T: ToString>`, not just `<`); darling's own
//! errors are kept as the tokens it writes.

use std::fmt::Display;

use proc_macro2::{Span, TokenStream};
use quote::ToTokens;

#[derive(Default)]
pub struct Ctxt {
    errors: Vec<TokenStream>,
}

impl Ctxt {
    pub fn new() -> Self {
        Self::default()
    }

    /// An error spanning every token of `node`.
    pub fn spanned(&mut self, node: impl ToTokens, message: impl Display) {
        self.errors
            .push(syn::Error::new_spanned(node, message).to_compile_error());
    }

    /// An error at one span.
    pub fn at(&mut self, span: Span, message: impl Display) {
        self.errors.push(syn::Error::new(span, message).to_compile_error());
    }

    /// Keeps a darling result's errors; the value when there were none.
    pub fn handle<T>(&mut self, result: darling::Result<T>) -> Option<T> {
        match result {
            Ok(value) => Some(value),
            Err(e) => {
                self.errors.push(e.write_errors());
                None
            }
        }
    }

    /// `Err` with every error's `compile_error!` when any was reported.
    pub fn finish(self) -> Result<(), TokenStream> {
        if self.errors.is_empty() {
            Ok(())
        } else {
            Err(self.errors.into_iter().collect())
        }
    }
}

//! Spanned assertions emitted before the generated code, so a type that
//! cannot play its part gets one clear error at the type (or the default)
//! before any error from the code that uses it. The traits they name live
//! in the runtime's `diagnostics` module, each with the message a user reads.
//!
//! Rustc reports a broken impl or where clause before it type-checks any
//! function body, and bodies in the order they appear: so the derive's
//! assertion is an impl placed before the derived impl, and the tool's are
//! one function emitted right after the user's function.

use proc_macro2::TokenStream;
use quote::{quote, quote_spanned};
use syn::spanned::Spanned;

use crate::ast::{ToolFn, ValueKind, contains_impl_trait, outer_kind};

/// Assertions for a `#[tool]`: the return type is `Serialize` or
/// `IntoToolOutput`; a string default's type is made from `&str`.
pub fn tool(model: &ToolFn<'_>) -> TokenStream {
    let rt = &model.rt;
    let mut checks = Vec::new();
    if let Some(ty) = output_type(model) {
        checks.push(quote_spanned! {ty.span()=>
            (&&#rt::__private::OutputProbe::<#ty>::new()).__assert_output();
        });
    }
    for param in model.model_params() {
        let ty = param.ty;
        if let Some(Some(default)) = param.default()
            && is_string_literal(default)
            && outer_kind(ty) != ValueKind::Text
        {
            // The type is inferred, not written in the call: the error then
            // points at the default, not at the type.
            let marker = quote_spanned!(default.span()=> ::core::marker::PhantomData::<#ty>);
            checks.push(quote_spanned! {default.span()=>
                #rt::__private::assert_str_default(#marker);
            });
        }
    }
    if checks.is_empty() {
        return TokenStream::new();
    }
    quote! {
        #[allow(clippy::all, clippy::pedantic, clippy::nursery)]
        const _: () = {
            #[allow(unused_imports)]
            use #rt::__private::{AssertIntoToolOutput as _, AssertNeither as _, AssertSerialize as _};

            #[allow(dead_code)]
            fn __assertions() {
                #(#checks)*
            }
        };
    }
}

/// The assertion for `#[derive(ToolParam)]`: the type is `Deserialize`.
/// Only for a type without generics (a generic one is checked where used).
pub fn derive(input: &syn::DeriveInput, rt: &syn::Path) -> TokenStream {
    if !input.generics.params.is_empty() {
        return TokenStream::new();
    }
    let ident = &input.ident;
    let assert = quote_spanned!(ident.span()=> impl __AssertDeserialize for #ident {});
    quote! {
        const _: () = {
            trait __AssertDeserialize: #rt::__private::ParamDeserialize {}
            #assert
        };
    }
}

/// The type the output is read from: the return type, or `T` of a
/// `Result<T, E>`; `None` for `()` and types naming `impl Trait`.
fn output_type<'a>(model: &'a ToolFn<'_>) -> Option<&'a syn::Type> {
    let syn::ReturnType::Type(_, ty) = &model.item.sig.output else {
        return None;
    };
    let ty = crate::emit::result_ok_type(ty).unwrap_or(ty);
    (!contains_impl_trait(ty)).then_some(ty)
}

fn is_string_literal(expr: &syn::Expr) -> bool {
    match expr {
        syn::Expr::Lit(lit) => matches!(lit.lit, syn::Lit::Str(_)),
        syn::Expr::Group(group) => is_string_literal(&group.expr),
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_generic_derive_has_no_assertion() {
        let rt: syn::Path = syn::parse_quote!(::tool_runtime);
        let generic: syn::DeriveInput = syn::parse_quote!(
            struct Page<T> {
                items: Vec<T>,
            }
        );
        assert!(derive(&generic, &rt).is_empty());
        let plain: syn::DeriveInput = syn::parse_quote!(
            struct Window {
                start: u32,
            }
        );
        assert!(derive(&plain, &rt).to_string().contains("ParamDeserialize"));
    }
}

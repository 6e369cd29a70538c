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

use crate::ast::{ToolFn, contains_impl_trait};

/// Assertions for a `#[tool]`: the return type is `Serialize` or
/// `IntoToolOutput`; a string default's type is made from `&str`. Items for
/// the generated block, which imports the runtime as `__rt`.
pub fn tool(model: &ToolFn<'_>) -> TokenStream {
    let rt = &model.rt;
    let p = crate::emit::private();
    // Neither `IntoToolOutput` nor `Serialize`: the method's bound fails
    // with the message `IntoToolOutput` carries.
    let output = output_type(model).map(|ty| {
        // The call is spanned at the type, so the error points at it.
        let call = quote_spanned! {ty.span()=>
            (&&#p::OutputProbe::<#ty>::new()).assert_return_type();
        };
        quote! {
            trait ToolReturnType<T> {
                fn assert_return_type(&self)
                where
                    T: #rt::IntoToolOutput,
                {
                }
            }

            impl<T> ToolReturnType<T> for #p::OutputProbe<T> {}

            fn return_type() {
                #[allow(unused_imports)]
                use #p::{AssertIntoToolOutput as _, AssertSerialize as _};
                #call
            }
        }
    });
    // The type is inferred, not written in the call: the error then points
    // at the default, not at the type.
    let defaults: Vec<TokenStream> = model
        .model_params()
        .filter_map(|param| {
            let default = crate::emit::converted_string_default(param)?;
            let ty = param.ty;
            Some(crate::emit::respan(quote!(#ty: StringDefault,), default.span()))
        })
        .collect();
    let defaults = (!defaults.is_empty()).then(|| {
        quote! {
            #[diagnostic::on_unimplemented(
                message = "a string default needs a type made from `&str`, and `{Self}` is not",
                label = "write the value itself, e.g. `default = {Self}::Variant` for an enum",
                note = "`default = \"...\"` converts the text with `From<&str>`; any other default is an expression of the parameter's type"
            )]
            trait StringDefault {}

            #[diagnostic::do_not_recommend]
            impl<T: ::core::convert::From<&'static str>> StringDefault for T {}

            fn string_default() where #(#defaults)* {}
        }
    });
    // Each check is a trait and a where clause or method bound defined
    // here, so the error's notes name nothing of the runtime's. They open
    // the generated block (see `expand::generate`), before any code that
    // relies on what they check.
    quote!(#output #defaults)
}

/// The assertion for `#[derive(ToolParam)]`: the type is `Deserialize`.
/// Only for a type without generics (a generic one is checked where used).
///
/// A where clause that can never hold, on a function nobody calls: rustc
/// reports it at the type, and the trait, defined here, names nothing of
/// the runtime's.
pub fn derive(input: &syn::DeriveInput, rt: &syn::Path) -> TokenStream {
    if !input.generics.params.is_empty() {
        return TokenStream::new();
    }
    let ident = &input.ident;
    let bound = crate::emit::respan(quote!(#ident: Deserialize), ident.span());
    quote! {
        const _: () = {
            #[diagnostic::on_unimplemented(
                message = "`{Self}` cannot be a tool parameter: it does not implement `Deserialize`",
                label = "add `#[derive(ToolParam, Deserialize)]` to this type",
                note = "the model's arguments are JSON: a tool parameter is deserialized from them"
            )]
            trait Deserialize {}

            #[diagnostic::do_not_recommend]
            impl<T: #rt::__private::serde::de::DeserializeOwned> Deserialize for T {}

            #[allow(dead_code)]
            fn deserialize() where #bound {}
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
        assert!(derive(&plain, &rt).to_string().contains("Window : Deserialize"));
    }
}

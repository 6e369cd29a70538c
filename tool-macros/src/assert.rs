//! Spanned assertions around the generated code, so a type that cannot
//! play its part gets one clear error at the type (or the default) before
//! any error from the code that uses it. Each names a trait defined beside
//! it, with the message a user reads, so the error names nothing of the
//! runtime's.
//!
//! Rustc reports a broken impl or where clause before it type-checks any
//! function body, and bodies in the order they appear: so the tool's
//! assertions are one block opening the generated code, except the check
//! that each parameter type is `Deserialize`, which follows the `Tool` impl:
//! a type that is no `ToolParam` at all is reported as that first.

use proc_macro2::TokenStream;
use quote::{quote, quote_spanned};
use syn::spanned::Spanned;

use crate::ast::{ToolFn, contains_impl_trait};

/// Assertions for a `#[tool]`: the return type is `Serialize` or
/// `IntoToolOutput`; a `Result`'s error type is `Display`; a string
/// default's type is made from `&str`. A block of its own inside the
/// generated one, which imports the runtime as `__rt`: its items (named
/// `return_type`, `string_default`, ...) then shadow nothing the dispatcher
/// or a default expression names, such as a user's function of that name.
pub fn tool(model: &ToolFn<'_>) -> TokenStream {
    let output = output_type(model).map(|ty| {
        let p = crate::emit::private();
        let probe = quote!(#p::OutputProbe::<#ty>::new());
        let check = return_type_check(model, probe, ty);
        quote! {
            fn return_type() {
                #check
            }
        }
    });
    let error = error_type(model);
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
        bound_check(Check {
            name: quote!(StringDefault),
            message: "a string default needs a type made from `&str`, and `{Self}` is not",
            label: "write the value itself, e.g. `default = {Self}::Variant` for an enum",
            note: "`default = \"...\"` converts the text with `From<&str>`; any other default is an expression of the parameter's type",
            holds_for: quote!(::core::convert::From<&'static str>),
            function: quote!(string_default),
            bounds: quote!(#(#defaults)*),
        })
    });
    // Each check is a trait and a where clause or method bound defined
    // here, so the error's notes name nothing of the runtime's. They open
    // the generated block (see `expand::generate`), before any code that
    // relies on what they check.
    quote! {
        const _: () = {
            #output
            #error
            #defaults
        };
    }
}

/// `T: Deserialize` for each parameter type of the user's (a derived
/// struct or enum, or one made of them), spanned at the type: checked where
/// the type is a parameter, not where it derives `ToolParam`, since a type
/// that is only returned (for its output schema) needs no `Deserialize`.
/// The runtime's own parameter types are left out: they all are. Emitted
/// after the `Tool` impl (see the module docs).
pub fn deserialize_params(model: &ToolFn<'_>) -> Option<TokenStream> {
    let bounds: Vec<TokenStream> = model
        .model_params()
        .filter(|param| !runtime_param_type(param.ty))
        .map(|param| {
            let ty = param.ty;
            crate::emit::respan(quote!(#ty: Deserialize,), ty.span())
        })
        .collect();
    let p = crate::emit::private();
    (!bounds.is_empty()).then(|| {
        let check = bound_check(Check {
            name: quote!(Deserialize),
            message: "`{Self}` cannot be a tool parameter: it does not implement `Deserialize`",
            label: "add `#[derive(Deserialize)]` to this type",
            note: "the model's arguments are JSON: a tool parameter is deserialized from them",
            holds_for: quote!(#p::serde::de::DeserializeOwned),
            function: quote!(param_types),
            bounds: quote!(#(#bounds)*),
        });
        quote!(const _: () = { #check };)
    })
}

/// One spanned check: a trait of its own, with the message a user reads,
/// that every type meeting `holds_for` has, and a function whose where
/// clause (`bounds`, each spanned where the error should point) asks for it.
struct Check {
    name: TokenStream,
    message: &'static str,
    label: &'static str,
    note: &'static str,
    holds_for: TokenStream,
    function: TokenStream,
    bounds: TokenStream,
}

fn bound_check(check: Check) -> TokenStream {
    let Check {
        name,
        message,
        label,
        note,
        holds_for,
        function,
        bounds,
    } = check;
    quote! {
        #[diagnostic::on_unimplemented(message = #message, label = #label, note = #note)]
        trait #name {}

        #[diagnostic::do_not_recommend]
        impl<T: #holds_for> #name for T {}

        fn #function() where #bounds {}
    }
}

/// Whether `ty` is plainly built of the standard types the runtime
/// implements `ToolParam` for, all of which are `Deserialize`: primitives,
/// and `String`, `Option`, `Vec`, `Box`, the sets and the maps, written
/// alone (the prelude's names, and `std::collections`') or under `std::`,
/// `alloc::` or `core::`; and `serde_json::Value` written with its crate.
/// Any other spelling is checked: `Value` alone is as often a user's own
/// enum as serde_json's (whose error would otherwise surface far from the
/// type), and `my::String` is not the standard one. (Checking every type
/// would be as correct, at about a million more instructions of rustc per
/// tool for bounds that hold.)
fn runtime_param_type(ty: &syn::Type) -> bool {
    const KNOWN: &[&str] = &[
        "String", "bool", "u8", "u16", "u32", "u64", "u128", "usize", "i8", "i16", "i32", "i64", "i128", "isize",
        "f32", "f64", "Option", "Vec", "HashSet", "BTreeSet", "HashMap", "BTreeMap", "Box",
    ];
    let path = match ty {
        syn::Type::Path(path) => path,
        syn::Type::Group(group) => return runtime_param_type(&group.elem),
        syn::Type::Paren(paren) => return runtime_param_type(&paren.elem),
        _ => return false,
    };
    let segments: Vec<&syn::PathSegment> = path.path.segments.iter().collect();
    let Some((last, prefix)) = segments.split_last() else {
        return false;
    };
    if path.qself.is_some() || prefix.iter().any(|segment| !segment.arguments.is_none()) {
        return false;
    }
    let known = match prefix.first().map(|segment| segment.ident.to_string()).as_deref() {
        None => KNOWN.iter().any(|known| last.ident == known),
        Some("std" | "alloc" | "core") => KNOWN.iter().any(|known| last.ident == known),
        Some("serde_json") => prefix.len() == 1 && last.ident == "Value",
        Some(_) => false,
    };
    if !known {
        return false;
    }
    match &last.arguments {
        syn::PathArguments::None => true,
        syn::PathArguments::AngleBracketed(args) => args.args.iter().all(|arg| match arg {
            syn::GenericArgument::Type(ty) => runtime_param_type(ty),
            _ => false,
        }),
        syn::PathArguments::Parenthesized(_) => false,
    }
}

/// The statements that check the return type `ty`, read by `probe`, an
/// `OutputProbe<T>` expression: the failing case, a trait whose method's
/// `T: IntoToolOutput` bound fails with the message `IntoToolOutput`
/// carries, and the call that autoref specialization resolves to an
/// accepting trait when `T` has a reading (`IntoToolOutput`, a `Result` of
/// a `Serialize` value, `Serialize`). Also emitted where the value is at
/// hand, for a type that cannot be written (`impl Trait`): see `invoke`.
pub fn return_type_check(model: &ToolFn<'_>, probe: TokenStream, ty: &syn::Type) -> TokenStream {
    let rt = &model.rt;
    let p = crate::emit::private();
    // The call is spanned at the type, so the error points at it.
    let call = quote_spanned!(ty.span()=> (&&&#probe).assert_return_type(););
    quote! {
        trait ToolReturnType<T> {
            fn assert_return_type(&self)
            where
                T: #rt::IntoToolOutput,
            {
            }
        }

        impl<T> ToolReturnType<T> for #p::OutputProbe<T> {}

        #[allow(unused_imports)]
        use #p::{AssertIntoToolOutput as _, AssertResult as _, AssertSerialize as _};
        #call
    }
}

/// `E: Display` for a tool returning `Result<T, E>`, spanned at `E`: the
/// message of `Err(e)` is what the model reads.
fn error_type(model: &ToolFn<'_>) -> Option<TokenStream> {
    let syn::ReturnType::Type(_, ty) = &model.item.sig.output else {
        return None;
    };
    let error = crate::emit::result_err_type(ty)?;
    let bound = crate::emit::respan(quote!(#error: ToolErrorType,), error.span());
    Some(bound_check(Check {
        name: quote!(ToolErrorType),
        message: "`{Self}` cannot be a tool's error type: it does not implement `Display`",
        label: "implement `Display` for this type, or return `ToolError`",
        note: "a tool's `Err(e)` becomes an error result whose text, `e.to_string()`, is what the model reads",
        holds_for: quote!(::core::fmt::Display),
        function: quote!(error_type),
        bounds: bound,
    }))
}

/// The type the output is read from: the return type, or `T` of a
/// `Result<T, E>`; `None` for `()` and types naming `impl Trait` (checked
/// where the value is at hand instead).
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
    fn only_types_of_the_user_s_are_checked_for_deserialize() {
        for known in [
            "String",
            "std::string::String",
            "Option<Vec<u32>>",
            "BTreeMap<String, Vec<f64>>",
            "serde_json::Value",
        ] {
            let ty: syn::Type = syn::parse_str(known).unwrap();
            assert!(runtime_param_type(&ty), "{known}");
        }
        for users in [
            "Window",
            "Option<Window>",
            "Vec<Page<u32>>",
            "HashMap<String, Mode>",
            "(u32, u32)",
        ] {
            let ty: syn::Type = syn::parse_str(users).unwrap();
            assert!(!runtime_param_type(&ty), "{users}");
        }
    }

    #[test]
    fn a_standard_name_under_another_path_is_checked_for_deserialize() {
        for known in [
            "::std::collections::HashMap<String, u32>",
            "core::option::Option<bool>",
            "::serde_json::Value",
            "Vec<serde_json::Value>",
        ] {
            let ty: syn::Type = syn::parse_str(known).unwrap();
            assert!(runtime_param_type(&ty), "{known}");
        }
        // `Value` alone may be a user's own enum: only serde_json's, named
        // so, is known to be `Deserialize`.
        for users in [
            "Value",
            "Option<Value>",
            "model::Value",
            "crate::String",
            "types::Vec<u32>",
            "serde_json::Map<String, Value>",
            "std::Value",
        ] {
            let ty: syn::Type = syn::parse_str(users).unwrap();
            assert!(!runtime_param_type(&ty), "{users}");
        }
    }
}

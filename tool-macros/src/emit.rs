//! Pieces of generated code that the normal expansion, the dispatcher and
//! the fallback all emit: the function without `#[param]`, the unit struct,
//! a parameter's default, the bounds the tool's impls carry, and the `Ok`
//! type of a `Result`.

use proc_macro2::TokenStream;
use quote::{quote, quote_spanned};
use syn::spanned::Spanned;

use crate::ast::{Param, ToolFn, ValueKind, last_segment, outer_kind};

/// The name `#[tool]`'s generated code gives the runtime's `__private`
/// module, imported once at the top of the block that holds it (see
/// `expand::generate`): every path into it is then four tokens, not nine.
pub fn private() -> proc_macro2::Ident {
    proc_macro2::Ident::new("__rt", proc_macro2::Span::call_site())
}

/// The function as written, minus the `#[param]` attributes.
pub fn stripped_fn(function: &syn::ItemFn) -> syn::ItemFn {
    let mut function = function.clone();
    for input in &mut function.sig.inputs {
        let attrs = match input {
            syn::FnArg::Typed(pat_type) => &mut pat_type.attrs,
            syn::FnArg::Receiver(receiver) => &mut receiver.attrs,
        };
        attrs.retain(|a| !crate::attr::is_param_attr(a));
    }
    function
}

/// The generated unit struct, named `ident`.
pub fn struct_item(model: &ToolFn<'_>, ident: &syn::Ident) -> TokenStream {
    let vis = &model.item.vis;
    let fn_name = model.fn_ident();
    let doc = format!("The tool made of [`{fn_name}`] by `#[tool]`; register it with `ToolRegistry::register`.");
    let name = ident.to_string();
    // What `#[derive(Clone, Copy, Debug, Default)]` would write, written
    // out: four derive expansions cost the compiler more than the impls.
    // Marked derived, so dead-code analysis still ignores them.
    quote! {
        #[doc = #doc]
        #vis struct #ident;

        #[automatically_derived]
        impl ::core::clone::Clone for #ident {
            #[inline]
            fn clone(&self) -> Self {
                #ident
            }
        }

        #[automatically_derived]
        impl ::core::marker::Copy for #ident {}

        #[automatically_derived]
        impl ::core::fmt::Debug for #ident {
            fn fmt(&self, __formatter: &mut ::core::fmt::Formatter<'_>) -> ::core::fmt::Result {
                ::core::fmt::Formatter::write_str(__formatter, #name)
            }
        }

        #[automatically_derived]
        impl ::core::default::Default for #ident {
            #[inline]
            fn default() -> Self {
                #ident
            }
        }
    }
}

/// The default's value as an expression of type `ty`. A string literal is
/// converted with `Into`, so `default = "main"` works for `String`.
pub fn default_value(ty: &syn::Type, expr: Option<&syn::Expr>) -> TokenStream {
    match expr {
        None => quote_spanned!(ty.span()=> <#ty as ::core::default::Default>::default()),
        Some(
            expr @ syn::Expr::Lit(syn::ExprLit {
                lit: syn::Lit::Str(_), ..
            }),
        ) => {
            quote_spanned!(expr.span()=> { let __value: #ty = ::core::convert::Into::into(#expr); __value })
        }
        Some(expr) => quote_spanned!(expr.span()=> { let __value: #ty = #expr; __value }),
    }
}

/// The default of a parameter that is converted from a string literal
/// (`default = "normal"` for a type that is not text).
pub fn converted_string_default<'p>(param: &'p Param<'_>) -> Option<&'p syn::Expr> {
    let default = param.default()??;
    (is_string_literal(default) && outer_kind(param.ty) != ValueKind::Text).then_some(default)
}

fn is_string_literal(expr: &syn::Expr) -> bool {
    match expr {
        syn::Expr::Lit(lit) => matches!(lit.lit, syn::Lit::Str(_)),
        syn::Expr::Group(group) => is_string_literal(&group.expr),
        _ => false,
    }
}

/// `T` when `ty` is `Result<T, ...>` (any path ending in `Result`).
pub fn result_ok_type(ty: &syn::Type) -> Option<&syn::Type> {
    result_type_args(ty)?.next()
}

/// `E` when `ty` is `Result<T, E>` written with both and `E` can be named
/// (not `io::Result<T>`, not `impl Trait`): the error type the assertions
/// check for `Display`. Only then does the dispatcher read `Err(e)` through
/// a reading that keeps a second error away; otherwise the bound of
/// `error_output` is what checks it.
pub fn result_err_type(ty: &syn::Type) -> Option<&syn::Type> {
    result_type_args(ty)?
        .nth(1)
        .filter(|error| !crate::ast::contains_impl_trait(error))
}

fn result_type_args(ty: &syn::Type) -> Option<impl Iterator<Item = &syn::Type>> {
    let segment = last_segment(ty)?;
    if segment.ident != "Result" {
        return None;
    }
    let syn::PathArguments::AngleBracketed(args) = &segment.arguments else {
        return None;
    };
    Some(args.args.iter().filter_map(|a| match a {
        syn::GenericArgument::Type(t) => Some(t),
        _ => None,
    }))
}

/// `T: ToolParam, for<'de> T: Deserialize<'de>,` for every model-visible
/// parameter type, spanned wholly at the type: the tool's impls carry these
/// bounds, so a type that cannot be a parameter gets one error, at the type,
/// and the code relying on the bounds gets none.
pub fn param_bounds(model: &ToolFn<'_>) -> TokenStream {
    let p = private();
    model
        .model_params()
        .map(|param| {
            let ty = param.ty;
            // The type keeps its own spans and the rest takes its last
            // token's, so the error underlines the whole type.
            let last = end_span(ty);
            let bound = respan(quote!(: #p::ToolParam,), last);
            // Higher-ranked, so rustc does not report it where it fails: a
            // derived type checks `Deserialize` itself, at the type, and
            // the generated code must not add a second error.
            let deserialize = respan(quote!(for<'__de> #ty: #p::serde::Deserialize<'__de>,), last);
            let default = string_default_bound(param);
            quote!(#ty #bound #deserialize #default)
        })
        .collect()
}

/// `for<'__s> T: From<&'static str>,` for a parameter whose default is
/// converted from a string, spanned at the type: on the tool's impl and on
/// the default's function, so the conversion adds no error of its own. The
/// binder lifetime is unused, only there to keep rustc from reporting the
/// bound; the assertion reports it, at the default.
pub fn string_default_bound(param: &Param<'_>) -> Option<TokenStream> {
    converted_string_default(param)?;
    let ty = param.ty;
    Some(respan(
        quote!(for<'__s> #ty: ::core::convert::From<&'static str>,),
        end_span(ty),
    ))
}

/// The span of `ty`'s last token: a bound spanned there (with the type
/// keeping its own spans) underlines the whole type.
fn end_span(ty: &syn::Type) -> proc_macro2::Span {
    quote!(#ty).into_iter().last().map_or_else(|| ty.span(), |t| t.span())
}

/// `tokens` with every span replaced by `span`.
pub fn respan(tokens: TokenStream, span: proc_macro2::Span) -> TokenStream {
    tokens
        .into_iter()
        .map(|mut tree| {
            if let proc_macro2::TokenTree::Group(group) = &tree {
                let mut inner = proc_macro2::Group::new(group.delimiter(), respan(group.stream(), span));
                inner.set_span(span);
                tree = proc_macro2::TokenTree::Group(inner);
            }
            tree.set_span(span);
            tree
        })
        .collect()
}

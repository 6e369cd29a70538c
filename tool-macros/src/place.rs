//! Where the function under `#[tool]` sits. An attribute macro sees only
//! its item, not what surrounds it; but `#[tool]` adds a struct beside the
//! function, which an `impl` block cannot hold, so a tool written as an
//! associated function drowned in four unrelated errors. Reading the
//! function's own source file tells: when every function of that name
//! under a `tool` attribute in the file sits in an `impl` (or trait), the
//! one being expanded does too. When the file cannot be read or parsed, or
//! a free function has the same name, nothing is said and expansion goes on.

use proc_macro2::{Span, TokenStream};
use quote::quote;

/// The error and the function alone (no struct, no impl) when `item` is a
/// function without `self` that sits in an `impl` block; `None` otherwise.
/// `source` reads the file a span comes from.
pub fn associated_fn(item: &TokenStream, source: impl FnOnce(Span) -> Option<String>) -> Option<TokenStream> {
    let function: syn::ItemFn = syn::parse2(item.clone()).ok()?;
    if function.sig.receiver().is_some() {
        // `valid` reports `self` at the receiver.
        return None;
    }
    let name = &function.sig.ident;
    let text = source(name.span())?;
    if !in_impl(&text, &crate::ast::unraw(name))? {
        return None;
    }
    let message = format!(
        "a tool is a free function: move `{name}` out of the `impl` block, to module level (#[tool] adds a struct `{}` beside it, which an `impl` cannot hold)",
        crate::ast::upper_camel(&crate::ast::unraw(name)),
    );
    let error = syn::Error::new_spanned(name, message).to_compile_error();
    let function = crate::emit::stripped_fn(&function);
    Some(quote!(#error #function))
}

/// Whether the functions named `name` under a `tool` attribute in `source`
/// all sit in an `impl` block or trait: `Some(true)`; `Some(false)` when one
/// is free; `None` when there is none or the file does not parse.
fn in_impl(source: &str, name: &str) -> Option<bool> {
    let file = syn::parse_file(source).ok()?;
    let mut found = Found::default();
    items(&file.items, name, &mut found);
    match found {
        Found { free: 0, associated: 0 } => None,
        Found { free, .. } => Some(free == 0),
    }
}

#[derive(Default)]
struct Found {
    free: usize,
    associated: usize,
}

fn is_tool(attrs: &[syn::Attribute], ident: &syn::Ident, name: &str) -> bool {
    crate::ast::unraw(ident) == name
        && attrs
            .iter()
            .any(|a| a.path().segments.last().is_some_and(|s| s.ident == "tool"))
}

fn items(list: &[syn::Item], name: &str, found: &mut Found) {
    for item in list {
        match item {
            syn::Item::Fn(f) => {
                if is_tool(&f.attrs, &f.sig.ident, name) {
                    found.free += 1;
                }
                block(&f.block, name, found);
            }
            syn::Item::Mod(m) => {
                if let Some((_, content)) = &m.content {
                    items(content, name, found);
                }
            }
            syn::Item::Impl(i) => {
                for item in &i.items {
                    if let syn::ImplItem::Fn(f) = item {
                        if is_tool(&f.attrs, &f.sig.ident, name) {
                            found.associated += 1;
                        }
                        block(&f.block, name, found);
                    }
                }
            }
            syn::Item::Trait(t) => {
                for item in &t.items {
                    if let syn::TraitItem::Fn(f) = item {
                        if is_tool(&f.attrs, &f.sig.ident, name) {
                            found.associated += 1;
                        }
                        if let Some(body) = &f.default {
                            block(body, name, found);
                        }
                    }
                }
            }
            _ => {}
        }
    }
}

/// Items declared inside a function body are free too.
fn block(body: &syn::Block, name: &str, found: &mut Found) {
    let nested: Vec<syn::Item> = body
        .stmts
        .iter()
        .filter_map(|s| match s {
            syn::Stmt::Item(item) => Some(item.clone()),
            _ => None,
        })
        .collect();
    items(&nested, name, found);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_tool_in_an_impl_block_is_found() {
        let source = "struct Notes;\nimpl Notes {\n    /// Search.\n    #[tool]\n    async fn search(q: String) -> String { q }\n}\n";
        assert_eq!(in_impl(source, "search"), Some(true));
    }

    #[test]
    fn free_tools_are_left_alone() {
        let source = "#[tool]\nasync fn search(q: String) -> String { q }\nmod m { #[tool_runtime::tool] fn list() {} }\nfn main() { #[tool] fn local() {} }";
        assert_eq!(in_impl(source, "search"), Some(false));
        assert_eq!(in_impl(source, "list"), Some(false));
        assert_eq!(in_impl(source, "local"), Some(false));
        assert_eq!(in_impl(source, "missing"), None);
        assert_eq!(in_impl("not rust {", "search"), None);
    }

    #[test]
    fn a_free_tool_of_the_same_name_wins() {
        let source = "impl A { #[tool] fn search() {} }\n#[tool] fn search() {}";
        assert_eq!(in_impl(source, "search"), Some(false));
    }

    #[test]
    fn the_error_keeps_the_function() {
        let item = quote!(
            /// Search.
            async fn search(#[param(description = "q")] q: String) -> String {
                q
            }
        );
        let source = "impl Notes { #[tool] async fn search(q: String) -> String { q } }".to_owned();
        let out = associated_fn(&item, |_| Some(source)).unwrap().to_string();
        assert!(out.contains("a tool is a free function"), "{out}");
        assert!(out.contains("async fn search"), "{out}");
        assert!(!out.contains("param"), "{out}");
        assert!(associated_fn(&item, |_| None).is_none());
    }
}

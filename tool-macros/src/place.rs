//! Where the function under `#[tool]` sits. An attribute macro sees only
//! its item, not what surrounds it; but `#[tool]` adds a struct beside the
//! function, which an `impl` block cannot hold, so a tool written as an
//! associated function drowned in four unrelated errors. Reading the
//! function's own source file tells: when every function of that name
//! under a `tool` attribute in the file sits in an `impl` (or trait), the
//! one being expanded does too. When the file cannot be read or parsed, or
//! a free function has the same name, nothing is said and expansion goes on.
//!
//! Each file is read and indexed once per compilation, however many tools
//! it holds: the index is kept for the macro's later calls.

use std::cell::RefCell;
use std::collections::HashMap;
use std::path::PathBuf;
use std::rc::Rc;

use proc_macro2::{Span, TokenStream};
use quote::quote;

/// For each tool name in a file: how many such tools are free functions and
/// how many sit in an `impl` or trait.
type Index = HashMap<String, Found>;

thread_local! {
    /// Files already indexed in this compilation (`None`: unreadable).
    static INDEXED: RefCell<HashMap<PathBuf, Option<Rc<Index>>>> = RefCell::default();
}

/// The index of the file at `path`, read and parsed on first use.
pub fn file_index(path: PathBuf) -> Option<Rc<Index>> {
    INDEXED.with(|indexed| {
        indexed
            .borrow_mut()
            .entry(path)
            .or_insert_with_key(|path| {
                std::fs::read_to_string(path)
                    .ok()
                    .and_then(|text| index(&text))
                    .map(Rc::new)
            })
            .clone()
    })
}

/// The error and the function alone (no struct, no impl) when `item` is a
/// function without `self` that sits in an `impl` block; `None` otherwise.
/// `source` gives the index of the file a span comes from.
pub fn associated_fn(item: &TokenStream, source: impl FnOnce(Span) -> Option<Rc<Index>>) -> Option<TokenStream> {
    let function: syn::ItemFn = syn::parse2(item.clone()).ok()?;
    if function.sig.receiver().is_some() {
        // `valid` reports `self` at the receiver.
        return None;
    }
    let name = &function.sig.ident;
    let index = source(name.span())?;
    if !placed_in_impl(&index, &crate::ast::unraw(name))? {
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

/// Every function under a `tool` attribute in `source`, by name; `None`
/// when the file does not parse.
fn index(source: &str) -> Option<Index> {
    let file = syn::parse_file(source).ok()?;
    let mut index = Index::new();
    items(&file.items, &mut index);
    Some(index)
}

/// Whether the functions named `name` under a `tool` attribute all sit in
/// an `impl` block or trait: `Some(true)`; `Some(false)` when one is free;
/// `None` when there is none.
fn placed_in_impl(index: &Index, name: &str) -> Option<bool> {
    let found = index.get(name)?;
    Some(found.free == 0)
}

#[derive(Default)]
pub struct Found {
    free: usize,
    associated: usize,
}

/// The tool's name, when the function carries a `tool` attribute.
fn tool_name(attrs: &[syn::Attribute], ident: &syn::Ident) -> Option<String> {
    attrs
        .iter()
        .any(|a| a.path().segments.last().is_some_and(|s| s.ident == "tool"))
        .then(|| crate::ast::unraw(ident))
}

fn items(list: &[syn::Item], index: &mut Index) {
    for item in list {
        match item {
            syn::Item::Fn(f) => {
                if let Some(name) = tool_name(&f.attrs, &f.sig.ident) {
                    index.entry(name).or_default().free += 1;
                }
                block(&f.block, index);
            }
            syn::Item::Mod(m) => {
                if let Some((_, content)) = &m.content {
                    items(content, index);
                }
            }
            syn::Item::Impl(i) => {
                for item in &i.items {
                    if let syn::ImplItem::Fn(f) = item {
                        if let Some(name) = tool_name(&f.attrs, &f.sig.ident) {
                            index.entry(name).or_default().associated += 1;
                        }
                        block(&f.block, index);
                    }
                }
            }
            syn::Item::Trait(t) => {
                for item in &t.items {
                    if let syn::TraitItem::Fn(f) = item {
                        if let Some(name) = tool_name(&f.attrs, &f.sig.ident) {
                            index.entry(name).or_default().associated += 1;
                        }
                        if let Some(body) = &f.default {
                            block(body, index);
                        }
                    }
                }
            }
            _ => {}
        }
    }
}

/// Items declared inside a function body are free too.
fn block(body: &syn::Block, index: &mut Index) {
    let nested: Vec<syn::Item> = body
        .stmts
        .iter()
        .filter_map(|s| match s {
            syn::Stmt::Item(item) => Some(item.clone()),
            _ => None,
        })
        .collect();
    items(&nested, index);
}

#[cfg(test)]
mod tests {
    use super::*;

    fn in_impl(source: &str, name: &str) -> Option<bool> {
        placed_in_impl(&index(source)?, name)
    }

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
        let source = "impl Notes { #[tool] async fn search(q: String) -> String { q } }";
        let out = associated_fn(&item, |_| index(source).map(Rc::new))
            .unwrap()
            .to_string();
        assert!(out.contains("a tool is a free function"), "{out}");
        assert!(out.contains("async fn search"), "{out}");
        assert!(!out.contains("param"), "{out}");
        assert!(associated_fn(&item, |_| None).is_none());
    }
}

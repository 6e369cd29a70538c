//! Checks a `#[tool]` function against the rules, reporting every problem
//! with a span on the token it is about.

use std::collections::HashSet;

use darling::FromMeta;
use darling::util::SpannedValue;

use crate::ast::{Param, Role, ToolFn, ValueKind, find_reference, inner_kind, last_segment, outer_kind};
use crate::attr::{Bounds, NumberLit, is_valid_tool_name};
use crate::ctxt::Ctxt;

/// Adds one error per broken rule to `cx`.
pub fn check(tool: &ToolFn<'_>, cx: &mut Ctxt) {
    let sig = &tool.item.sig;
    if !sig.generics.params.is_empty() {
        cx.spanned(
            &sig.generics,
            "a tool cannot be generic: its schema is fixed at compile time; use concrete types",
        );
    } else if let Some(where_clause) = &sig.generics.where_clause {
        cx.spanned(where_clause, "a tool cannot have a where clause: use concrete types");
    }

    let (name, name_span) = tool.wire_name();
    if !is_valid_tool_name(&name) {
        let length = match name.len() {
            0 => "it is empty".to_owned(),
            n if n > 64 => format!("it is {n} characters long"),
            _ => "it has other characters".to_owned(),
        };
        cx.at(
            name_span,
            format!(
                "`{name}` is not a valid tool name ({length}): use 1 to 64 ASCII letters, digits, `_` or `-` (^[a-zA-Z0-9_-]{{1,64}}$)"
            ),
        );
    }

    if tool.description().is_none_or(|d| d.trim().is_empty()) {
        cx.spanned(
            tool.fn_ident(),
            "this tool has no description: add a doc comment saying what it does and when to use it, or #[tool(description = \"...\")]",
        );
    }

    let mut seen = HashSet::new();
    for param in &tool.params {
        check_param(tool, param, cx);
        if matches!(param.role, Role::Model) && param.ident.is_some() && !seen.insert(param.wire_name()) {
            let message = format!(
                "two parameters have the wire name `{}`; rename one with #[param(rename = \"...\")]",
                param.wire_name()
            );
            match &param.attrs.rename {
                Some(rename) => cx.at(rename.span(), message),
                None => cx.at(param.span(), message),
            }
        }
    }
}

fn check_param(tool: &ToolFn<'_>, param: &Param<'_>, cx: &mut Ctxt) {
    match param.arg {
        syn::FnArg::Receiver(receiver) => {
            cx.spanned(
                receiver,
                "a tool is a free function: remove `self` and pass what it needs as parameters or `State<T>`",
            );
            return;
        }
        syn::FnArg::Typed(pat_type) if param.ident.is_none() => {
            cx.spanned(
                &pat_type.pat,
                "a tool parameter needs a plain name (the model sees it): destructure inside the function instead",
            );
            return;
        }
        syn::FnArg::Typed(_) => {}
    }

    if !matches!(param.role, Role::Model) {
        if let syn::FnArg::Typed(pat_type) = param.arg
            && let Some(attr) = pat_type.attrs.iter().find(|a| crate::attr::is_param_attr(a))
        {
            cx.spanned(
                attr,
                "this parameter is supplied by the runtime and never seen by the model: remove #[param]",
            );
        }
        return;
    }
    if let Some(reference) = find_reference(param.ty) {
        cx.spanned(reference, borrowed_message(reference));
        return;
    }
    if !param.attrs_ok {
        // The attribute's own error is reported; checks that read it would
        // only add false ones (a misspelt `descripton` is not a missing one).
        return;
    }

    if tool.param_description(param).is_none_or(|d| d.trim().is_empty()) {
        let name = param.wire_name();
        cx.at(
            param.span(),
            format!(
                "the parameter `{name}` has no description: add #[param(description = \"...\")], or a line * `{name}` - ... under # Arguments in the doc comment"
            ),
        );
    }

    if let Some(default) = &param.attrs.default
        && last_segment(param.ty).is_some_and(|s| s.ident == "Option")
    {
        cx.at(
            default.span(),
            "an `Option` parameter is already optional (absent means `None`); remove the default, or use the inner type with a default",
        );
    }

    if let Some(rename) = &param.attrs.rename
        && rename.is_empty()
    {
        cx.at(rename.span(), "the wire name cannot be empty");
    }

    check_bounds(&param.attrs.bounds, param.ty, cx);
    if let Some(Some(default)) = param.default() {
        check_default(default, &param.attrs.bounds, param.ty, cx);
    }
}

/// A borrowed parameter cannot outlive the arguments it would borrow from:
/// the message names the owned type to use instead.
fn borrowed_message(reference: &syn::TypeReference) -> String {
    let elem = &*reference.elem;
    let owned = match elem {
        syn::Type::Path(path) if path.path.is_ident("str") => "String".to_owned(),
        syn::Type::Slice(slice) => {
            let inner = &slice.elem;
            format!("Vec<{}>", quote::quote!(#inner))
        }
        other => quote::quote!(#other).to_string(),
    };
    let written = quote::quote!(#reference).to_string().replace("& ", "&");
    format!(
        "a tool parameter cannot borrow (`{written}`): the arguments are owned JSON that the call outlives; use `{owned}`"
    )
}

/// Checks bounds shared by parameters and struct fields: the pattern must
/// compile, a lower bound may not exceed its upper bound, and each bound
/// must fit the type it bounds (read from its syntax; a type the macro
/// cannot see into, such as a user's struct, is left alone).
pub fn check_bounds(bounds: &Bounds, ty: &syn::Type, cx: &mut Ctxt) {
    if let Some(pattern) = &bounds.pattern
        && let Err(e) = regex_lite::Regex::new(pattern.as_str())
    {
        cx.at(pattern.span(), format!("this pattern does not compile: {e}"));
    }
    if let (Some(min), Some(max)) = (&bounds.min, &bounds.max)
        && min.as_f64() > max.as_f64()
    {
        cx.at(
            min.span(),
            format!(
                "`min` ({}) is greater than `max` ({}): no value could pass",
                min.as_f64(),
                max.as_f64()
            ),
        );
    }
    check_pair(cx, "min_length", &bounds.min_length, "max_length", &bounds.max_length);
    check_pair(cx, "min_items", &bounds.min_items, "max_items", &bounds.max_items);
    check_fit(bounds, ty, cx);
}

/// Each bound against the kind of value it applies to: numeric and string
/// bounds to the innermost value (through `Option`, lists and maps), item
/// bounds to the outermost list or map.
fn check_fit(bounds: &Bounds, ty: &syn::Type, cx: &mut Ctxt) {
    let (inner, inner_ty) = inner_kind(ty);
    let inner_name = type_name(inner_ty);
    for (key, bound) in [("min", &bounds.min), ("max", &bounds.max)] {
        let Some(bound) = bound else { continue };
        match inner {
            ValueKind::Int { lo, hi } => {
                let value = bound.as_f64();
                if value < lo as f64 || value > hi as f64 {
                    let why = if value < 0.0 && lo == 0 {
                        format!("`{inner_name}` cannot be negative")
                    } else {
                        format!("`{inner_name}` holds {lo} to {hi}")
                    };
                    cx.at(
                        bound.span(),
                        format!("`{key} = {}` does not fit the type: {why}", number(bound)),
                    );
                }
            }
            ValueKind::Float | ValueKind::Other | ValueKind::Collection => {}
            ValueKind::Text => cx.at(
                bound.span(),
                format!(
                    "`{key}` bounds a number, but `{inner_name}` is a string: bound its length with `{key}_length`"
                ),
            ),
            ValueKind::Bool => cx.at(
                bound.span(),
                format!("`{key}` bounds a number, but `{inner_name}` is not one"),
            ),
        }
    }
    let text_bounds = [
        ("min_length", bounds.min_length.as_ref().map(|b| b.span())),
        ("max_length", bounds.max_length.as_ref().map(|b| b.span())),
        ("pattern", bounds.pattern.as_ref().map(|b| b.span())),
    ];
    for (key, span) in text_bounds {
        let Some(span) = span else { continue };
        let what = match inner {
            ValueKind::Text | ValueKind::Other | ValueKind::Collection => continue,
            ValueKind::Int { .. } | ValueKind::Float => "a number: bound its value with `min`/`max`",
            ValueKind::Bool => "a boolean",
        };
        let applies = if key == "pattern" {
            "matches strings"
        } else {
            "bounds the length of a string"
        };
        cx.at(span, format!("`{key}` {applies}, but `{inner_name}` is {what}"));
    }
    let outer = outer_kind(ty);
    for (key, bound) in [("min_items", &bounds.min_items), ("max_items", &bounds.max_items)] {
        let Some(bound) = bound else { continue };
        let hint = match outer {
            ValueKind::Collection | ValueKind::Other => continue,
            ValueKind::Text => format!(": bound a string's length with `{}`", key.replace("items", "length")),
            _ => String::new(),
        };
        cx.at(
            bound.span(),
            format!(
                "`{key}` bounds the number of items of a list, set or map, but `{}` holds a single value{hint}",
                type_name(ty)
            ),
        );
    }
}

/// A literal default checked against the parameter's own bounds and type.
fn check_default(default: &syn::Expr, bounds: &Bounds, ty: &syn::Type, cx: &mut Ctxt) {
    if !matches!(
        outer_kind(ty),
        ValueKind::Int { .. } | ValueKind::Float | ValueKind::Text | ValueKind::Bool
    ) {
        return;
    }
    let (kind, _) = inner_kind(ty);
    if let Some(text) = string_literal(default) {
        if kind != ValueKind::Text {
            cx.spanned(
                default,
                format!(
                    "the default is a string, but `{}` is not one: write the value itself, `default = {text}` without quotes",
                    type_name(ty)
                ),
            );
            return;
        }
        let length = text.chars().count() as u64;
        if let Some(min) = &bounds.min_length
            && length < **min
        {
            cx.spanned(
                default,
                format!(
                    "the default is outside the parameter's own bounds: {length} characters, below `min_length` ({})",
                    **min
                ),
            );
        }
        if let Some(max) = &bounds.max_length
            && length > **max
        {
            cx.spanned(
                default,
                format!(
                    "the default is outside the parameter's own bounds: {length} characters, above `max_length` ({})",
                    **max
                ),
            );
        }
        if let Some(pattern) = &bounds.pattern
            && let Ok(regex) = regex_lite::Regex::new(pattern.as_str())
            && !regex.is_match(&text)
        {
            cx.spanned(
                default,
                format!(
                    "the default is outside the parameter's own bounds: it does not match `pattern` (`{}`)",
                    pattern.as_str()
                ),
            );
        }
        return;
    }
    let Ok(value) = NumberLit::from_expr(default) else {
        return;
    };
    let value = value.as_f64();
    if let Some(min) = &bounds.min
        && value < min.as_f64()
    {
        cx.spanned(
            default,
            format!(
                "the default ({value}) is outside the parameter's own bounds: below `min` ({})",
                number(min)
            ),
        );
    }
    if let Some(max) = &bounds.max
        && value > max.as_f64()
    {
        cx.spanned(
            default,
            format!(
                "the default ({value}) is outside the parameter's own bounds: above `max` ({})",
                number(max)
            ),
        );
    }
}

fn string_literal(expr: &syn::Expr) -> Option<String> {
    match expr {
        syn::Expr::Lit(syn::ExprLit {
            lit: syn::Lit::Str(s), ..
        }) => Some(s.value()),
        syn::Expr::Group(group) => string_literal(&group.expr),
        _ => None,
    }
}

fn number(n: &NumberLit) -> String {
    match n {
        NumberLit::Int(i) => i.to_string(),
        NumberLit::Float(f) => f.to_string(),
    }
}

/// The type as written, without the spaces `quote` puts between tokens.
fn type_name(ty: &syn::Type) -> String {
    let text = quote::quote!(#ty).to_string();
    text.replace(" < ", "<")
        .replace(" <", "<")
        .replace("< ", "<")
        .replace(" >", ">")
        .replace(" ,", ",")
        .replace(" :: ", "::")
        .replace(":: ", "::")
        .replace("& ", "&")
}

fn check_pair(
    cx: &mut Ctxt,
    lo_name: &str,
    lo: &Option<SpannedValue<u64>>,
    hi_name: &str,
    hi: &Option<SpannedValue<u64>>,
) {
    if let (Some(lo), Some(hi)) = (lo, hi)
        && **lo > **hi
    {
        cx.at(
            lo.span(),
            format!(
                "`{lo_name}` ({}) is greater than `{hi_name}` ({}): no value could pass",
                **lo, **hi
            ),
        );
    }
}

#[cfg(test)]
mod tests {
    use darling::FromAttributes;

    use super::*;
    use crate::attr::ParamAttrs;

    fn errors(attr: syn::Attribute, ty: syn::Type) -> usize {
        let attrs = ParamAttrs::from_attributes(&[attr]).unwrap();
        let mut cx = Ctxt::new();
        check_bounds(&attrs.bounds, &ty, &mut cx);
        match cx.finish() {
            Ok(()) => 0,
            Err(tokens) => tokens.to_string().matches("compile_error").count(),
        }
    }

    #[test]
    fn bounds_that_fit_their_type_pass() {
        assert_eq!(
            errors(
                syn::parse_quote!(#[param(min = 1, max_items = 3)]),
                syn::parse_quote!(Option<Vec<u32>>)
            ),
            0
        );
        assert_eq!(
            errors(
                syn::parse_quote!(#[param(min_length = 1, min_items = 1)]),
                syn::parse_quote!(HashMap<String, String>)
            ),
            0
        );
        assert_eq!(
            errors(syn::parse_quote!(#[param(min = -1.5)]), syn::parse_quote!(f64)),
            0
        );
        assert_eq!(
            errors(
                syn::parse_quote!(#[param(min = -128, max = 127)]),
                syn::parse_quote!(i8)
            ),
            0
        );
    }

    #[test]
    fn a_type_the_macro_cannot_see_into_is_left_alone() {
        assert_eq!(
            errors(
                syn::parse_quote!(#[param(min = 1, min_length = 1, min_items = 1)]),
                syn::parse_quote!(Window)
            ),
            0
        );
        assert_eq!(
            errors(
                syn::parse_quote!(#[param(pattern = "x")]),
                syn::parse_quote!(Vec<serde_json::Value>)
            ),
            0
        );
    }

    #[test]
    fn bounds_that_do_not_fit_are_errors() {
        assert_eq!(
            errors(syn::parse_quote!(#[param(min_length = 1)]), syn::parse_quote!(u32)),
            1
        );
        assert_eq!(
            errors(syn::parse_quote!(#[param(min = 1)]), syn::parse_quote!(String)),
            1
        );
        assert_eq!(errors(syn::parse_quote!(#[param(min = -5)]), syn::parse_quote!(u32)), 1);
        assert_eq!(
            errors(syn::parse_quote!(#[param(max = 300)]), syn::parse_quote!(Vec<u8>)),
            1
        );
        assert_eq!(
            errors(syn::parse_quote!(#[param(min_items = 1)]), syn::parse_quote!(String)),
            1
        );
        assert_eq!(
            errors(
                syn::parse_quote!(#[param(pattern = "x", min = 1)]),
                syn::parse_quote!(bool)
            ),
            2
        );
    }
}

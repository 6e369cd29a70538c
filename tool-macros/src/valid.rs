//! Checks a `#[tool]` function against the rules, reporting every problem
//! with a span on the token it is about.

use std::collections::HashSet;

use darling::util::SpannedValue;

use crate::ast::{Param, Role, ToolFn, find_reference, last_segment};
use crate::attr::{Bounds, is_valid_tool_name};
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

    check_bounds(&param.attrs.bounds, cx);
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
/// compile, a lower bound may not exceed its upper bound.
pub fn check_bounds(bounds: &Bounds, cx: &mut Ctxt) {
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

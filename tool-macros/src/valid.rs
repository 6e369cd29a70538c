//! Checks a `#[tool]` function against the rules, reporting every problem
//! with a span on the token it is about.

use std::collections::HashMap;

use darling::Error;
use syn::spanned::Spanned;

use crate::ast::{Param, Role, ToolFn, last_segment};
use crate::attr::{Bounds, is_valid_tool_name};

/// Adds one error per broken rule to `errors`.
pub fn check(tool: &ToolFn<'_>, errors: &mut darling::error::Accumulator) {
    let sig = &tool.item.sig;
    if !sig.generics.params.is_empty() || sig.generics.where_clause.is_some() {
        errors.push(
            Error::custom("a tool cannot be generic: its schema is fixed at compile time; use concrete types")
                .with_span(&sig.generics),
        );
    }

    let (name, name_span) = tool.wire_name();
    if !is_valid_tool_name(&name) {
        errors.push(
            Error::custom(format!(
                "`{name}` is not a valid tool name: use 1 to 64 ASCII letters, digits, `_` or `-` (^[a-zA-Z0-9_-]{{1,64}}$)"
            ))
            .with_span(&name_span),
        );
    }

    if tool.description().is_none_or(|d| d.trim().is_empty()) {
        errors.push(
            Error::custom(
                "this tool has no description: add a doc comment saying what it does and when to use it, or #[tool(description = \"...\")]",
            )
            .with_span(tool.fn_ident()),
        );
    }

    let mut seen: HashMap<String, ()> = HashMap::new();
    for param in &tool.params {
        check_param(tool, param, errors);
        if matches!(param.role, Role::Model) && param.ident.is_some() {
            let wire = param.wire_name();
            if seen.insert(wire.clone(), ()).is_some() {
                let span = param
                    .attrs
                    .rename
                    .as_ref()
                    .map(|r| r.span())
                    .unwrap_or_else(|| param.span());
                errors.push(
                    Error::custom(format!(
                        "two parameters have the wire name `{wire}`; rename one with #[param(rename = \"...\")]"
                    ))
                    .with_span(&span),
                );
            }
        }
    }
}

fn check_param(tool: &ToolFn<'_>, param: &Param<'_>, errors: &mut darling::error::Accumulator) {
    match param.arg {
        syn::FnArg::Receiver(receiver) => {
            errors.push(
                Error::custom(
                    "a tool is a free function: remove `self` and pass what it needs as parameters or `State<T>`",
                )
                .with_span(receiver),
            );
            return;
        }
        syn::FnArg::Typed(pat_type) if param.ident.is_none() => {
            errors.push(
                Error::custom(
                    "a tool parameter needs a plain name (the model sees it): destructure inside the function instead",
                )
                .with_span(&pat_type.pat),
            );
            return;
        }
        syn::FnArg::Typed(_) => {}
    }

    if !matches!(param.role, Role::Model) {
        if param.has_param_attr {
            errors.push(
                Error::custom("this parameter is supplied by the runtime and never seen by the model: remove #[param]")
                    .with_span(&param.ty),
            );
        }
        return;
    }

    if tool.param_description(param).is_none_or(|d| d.trim().is_empty()) {
        let name = param.wire_name();
        errors.push(
            Error::custom(format!(
                "the parameter `{name}` has no description: add #[param(description = \"...\")] or a `* `{name}` - ...` line under `# Arguments` in the doc comment"
            ))
            .with_span(&param.span()),
        );
    }

    if let Some(default) = &param.attrs.default
        && last_segment(param.ty).is_some_and(|s| s.ident == "Option")
    {
        errors.push(
            Error::custom("an `Option` parameter is already optional (absent means `None`); remove the default, or use the inner type with a default")
                .with_span(&default.span()),
        );
    }

    if let Some(rename) = &param.attrs.rename
        && rename.is_empty()
    {
        errors.push(Error::custom("the wire name cannot be empty").with_span(&rename.span()));
    }

    check_bounds(&param.attrs.bounds, param.ty, errors);
}

/// Checks bounds shared by parameters and struct fields: the pattern must
/// compile, a lower bound may not exceed its upper bound.
pub fn check_bounds(bounds: &Bounds, ty: &syn::Type, errors: &mut darling::error::Accumulator) {
    if let Some(pattern) = &bounds.pattern
        && let Err(e) = regex_lite::Regex::new(pattern.as_str())
    {
        errors.push(Error::custom(format!("this pattern does not compile: {e}")).with_span(&pattern.span()));
    }
    let as_f64 = |n: &crate::attr::NumberLit| match n {
        crate::attr::NumberLit::Int(i) => *i as f64,
        crate::attr::NumberLit::Float(f) => *f,
    };
    if let (Some(min), Some(max)) = (&bounds.min, &bounds.max)
        && as_f64(min) > as_f64(max)
    {
        errors.push(Error::custom("`min` is greater than `max`: no value could pass").with_span(&ty.span()));
    }
    let pairs = [
        ("min_length", bounds.min_length, "max_length", bounds.max_length),
        ("min_items", bounds.min_items, "max_items", bounds.max_items),
    ];
    for (lo_name, lo, hi_name, hi) in pairs {
        if let (Some(lo), Some(hi)) = (lo, hi)
            && lo > hi
        {
            errors.push(
                Error::custom(format!("`{lo_name}` is greater than `{hi_name}`: no value could pass"))
                    .with_span(&ty.span()),
            );
        }
    }
}

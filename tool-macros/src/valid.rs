//! Checks a `#[tool]` function against the rules, reporting every problem
//! with a span on the token it is about.

use std::collections::HashSet;

use darling::FromMeta;
use darling::util::SpannedValue;

use proc_macro2::Span;

use crate::ast::{
    Param, Role, ToolFn, ValueKind, contains_impl_trait, find_reference, inner_kind, item_type, last_segment,
    outer_kind, unraw,
};
use crate::attr::{Bounds, NumberLit, is_valid_property_name, is_valid_tool_name, property_name_message};
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

    if let Some(unsafety) = &sig.unsafety {
        cx.spanned(
            unsafety,
            "a tool cannot be an `unsafe fn`: the model calls it, and cannot uphold its safety conditions; make the function safe, with `unsafe` blocks inside where their conditions hold",
        );
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

    check_struct_name(tool, cx);
    check_unread_docs(tool, cx);
    check_plain_fn_future(tool, cx);

    if tool.description().is_none_or(|d| d.trim().is_empty()) {
        cx.spanned(
            tool.fn_ident(),
            "this tool has no description: add a doc comment saying what it does and when to use it, or #[tool(description = \"...\")]",
        );
    }

    check_doc_arguments(tool, cx);

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

/// The function's name must give the generated struct one (`__` gives
/// none): reported at the name, never a panic in the macro.
fn check_struct_name(tool: &ToolFn<'_>, cx: &mut Ctxt) {
    if tool.has_receiver() || tool.struct_ident().is_some() {
        return;
    }
    let name = unraw(tool.fn_ident());
    let camel = crate::ast::upper_camel(&name);
    let why = if camel.is_empty() {
        "it has no letters or digits".to_owned()
    } else if crate::ast::PRELUDE.contains(&camel.as_str()) {
        format!("`{camel}` would hide the prelude's `{camel}` in this module")
    } else {
        format!("`{camel}` is a keyword")
    };
    cx.spanned(
        tool.fn_ident(),
        format!(
            "#[tool] adds a struct named after `{name}` in UpperCamelCase, and this name gives none ({why}): rename the function (#[tool(name = \"...\")] keeps the name the model sees)"
        ),
    );
}

/// A doc comment written by a macro (`#[doc = include_str!(...)]`) reaches
/// `#[tool]` unexpanded: the description would silently leave it out.
/// Only when the description is read from the docs.
fn check_unread_docs(tool: &ToolFn<'_>, cx: &mut Ctxt) {
    if tool.args.description.is_some() {
        return;
    }
    for (value, what) in &tool.docs.unread {
        cx.spanned(
            value,
            format!(
                "#[tool] reads the description from doc comments as written, and cannot expand {what}: the model would not see this text; write the description with #[tool(description = \"...\")]"
            ),
        );
    }
}

/// A plain `fn` runs on the blocking pool and its value is read as it is:
/// a future it returns would never be awaited, and every call would fail.
fn check_plain_fn_future(tool: &ToolFn<'_>, cx: &mut Ctxt) {
    let sig = &tool.item.sig;
    if sig.asyncness.is_some() {
        return;
    }
    if let syn::ReturnType::Type(_, ty) = &sig.output
        && is_impl_future(ty)
    {
        cx.spanned(
            ty,
            "a plain `fn` tool runs on the blocking pool and its return value is shown as it is, so this future would never be awaited: write `async fn` returning the future's output",
        );
    }
}

/// Whether `ty` is `impl Future<...>` (or `impl IntoFuture`), read from
/// its bounds' last path segment.
fn is_impl_future(ty: &syn::Type) -> bool {
    match ty {
        syn::Type::ImplTrait(imp) => imp.bounds.iter().any(|bound| {
            matches!(bound, syn::TypeParamBound::Trait(t)
                if t.path.segments.last().is_some_and(|s| s.ident == "Future" || s.ident == "IntoFuture"))
        }),
        syn::Type::Group(group) => is_impl_future(&group.elem),
        syn::Type::Paren(paren) => is_impl_future(&paren.elem),
        _ => false,
    }
}

/// An `# Arguments` entry that names no parameter but is one slip from an
/// undescribed one is an error: it would describe nothing, and the
/// parameter it meant would go without.
fn check_doc_arguments(tool: &ToolFn<'_>, cx: &mut Ctxt) {
    let known: HashSet<String> = tool
        .params
        .iter()
        .flat_map(|p| [p.ident.map(unraw), p.ident.map(|_| p.wire_name())])
        .flatten()
        .collect();
    // The parameters no entry describes yet are the likely meant ones.
    let undocumented: Vec<String> = tool
        .model_params()
        .filter_map(|p| p.ident.map(unraw))
        .filter(|name| !tool.docs.arguments.contains_key(name))
        .collect();
    for (name, span) in &tool.docs.argument_spans {
        if known.contains(name) {
            continue;
        }
        // Only a likely slip is an error: a list item that names nothing
        // close (`- Note: ...`) may be prose the section holds.
        let Some(close) = closest(name, undocumented.iter().map(String::as_str)) else {
            continue;
        };
        cx.at(
            *span,
            format!("the `# Arguments` entry `{name}` names no parameter of this tool: did you mean `{close}`?"),
        );
    }
}

/// The candidate nearest to `name` by edit distance, when it is near
/// enough to be a slip: within a third of the name's length, at least one.
fn closest<'a>(name: &str, candidates: impl Iterator<Item = &'a str>) -> Option<&'a str> {
    let limit = (name.chars().count() / 3).max(1);
    candidates
        .map(|c| (edit_distance(name, c), c))
        .filter(|(d, _)| *d <= limit)
        .min_by_key(|(d, _)| *d)
        .map(|(_, c)| c)
}

/// Edit distance by characters, a swap of two neighbours counting as one
/// edit (optimal string alignment): `qeury` is one slip from `query`.
fn edit_distance(a: &str, b: &str) -> usize {
    let (a, b): (Vec<char>, Vec<char>) = (a.chars().collect(), b.chars().collect());
    // d[i][j]: the distance between a[..i] and b[..j].
    let mut d = vec![vec![0; b.len() + 1]; a.len() + 1];
    for (i, row) in d.iter_mut().enumerate() {
        row[0] = i;
    }
    for (j, cell) in d[0].iter_mut().enumerate() {
        *cell = j;
    }
    for i in 1..=a.len() {
        for j in 1..=b.len() {
            let cost = usize::from(a[i - 1] != b[j - 1]);
            let mut best = (d[i - 1][j] + 1).min(d[i][j - 1] + 1).min(d[i - 1][j - 1] + cost);
            if i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] {
                best = best.min(d[i - 2][j - 2] + 1);
            }
            d[i][j] = best;
        }
    }
    d[a.len()][b.len()]
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
        // The model never sees an injected parameter's name: `_: ToolContext`.
        syn::FnArg::Typed(pat_type) if param.ident.is_none() && matches!(param.role, Role::Model) => {
            cx.spanned(
                &pat_type.pat,
                "a tool parameter needs a plain name (the model sees it): destructure inside the function instead",
            );
            return;
        }
        syn::FnArg::Typed(_) => {}
    }
    if contains_impl_trait(param.ty) {
        // The function itself compiles (it is emitted as written); the
        // generated code could not name the hidden type.
        cx.spanned(
            param.ty,
            "a tool parameter cannot be `impl Trait` (a hidden generic): its schema is fixed at compile time; use a concrete type",
        );
        return;
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
        && last_segment(param.ty).is_some_and(is_option)
    {
        cx.at(
            default.span(),
            "an `Option` parameter is already optional (absent means `None`); remove the default, or use the inner type with a default",
        );
    }

    check_wire_name(param, cx);

    check_bounds(&param.attrs.bounds, param.ty, cx);
    match (param.default(), &param.attrs.default) {
        (Some(Some(default)), _) => check_default(default, &param.attrs.bounds, param.ty, cx),
        (Some(None), Some(token)) => check_std_default(token.span(), &param.attrs.bounds, param.ty, cx),
        _ => {}
    }
}

/// The parameter's wire name must be one every provider accepts as a
/// property key: reported at the rename string, else at the name.
fn check_wire_name(param: &Param<'_>, cx: &mut Ctxt) {
    let wire = param.wire_name();
    if is_valid_property_name(&wire) {
        return;
    }
    match &param.attrs.rename {
        Some(rename) => cx.at(rename.span(), property_name_message(&wire, "choose another")),
        None => cx.at(
            param.span(),
            property_name_message(&wire, "give it one with #[param(rename = \"...\")]"),
        ),
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

/// The first construct of `pattern` (which compiles for the binder) that
/// ECMA-262, the dialect a schema's `pattern` is read in, lacks or reads
/// otherwise: inline flags and other `(?` groups than `(?:` and named
/// ones, `\A` and `\z`, POSIX classes such as `[[:alpha:]]`.
fn non_portable(pattern: &str) -> Option<&'static str> {
    let chars: Vec<char> = pattern.chars().collect();
    let mut i = 0;
    while i < chars.len() {
        match chars[i] {
            '\\' => {
                match chars.get(i + 1) {
                    Some('A') => return Some("`\\A`"),
                    Some('z') => return Some("`\\z`"),
                    _ => {}
                }
                i += 2;
                continue;
            }
            '(' if chars.get(i + 1) == Some(&'?') => {
                let named = chars.get(i + 2) == Some(&'<') && chars.get(i + 3).is_some_and(|c| c.is_alphabetic());
                if chars.get(i + 2) != Some(&':') && !named {
                    return Some("a `(?` group other than `(?:` or `(?<name>` (inline flags such as `(?i)`, say)");
                }
            }
            '[' if chars.get(i + 1) == Some(&':') => {
                let rest: String = chars[i + 2..].iter().take_while(|c| c.is_ascii_alphabetic()).collect();
                if !rest.is_empty() && chars[i + 2 + rest.len()..].starts_with(&[':', ']']) {
                    return Some("a POSIX class such as `[:alpha:]`");
                }
            }
            _ => {}
        }
        i += 1;
    }
    None
}

/// Checks bounds shared by parameters and struct fields: the pattern must
/// compile, a lower bound may not exceed its upper bound, and each bound
/// must fit the type it bounds (read from its syntax; a type the macro
/// cannot see into, such as a user's struct, is left alone).
pub fn check_bounds(bounds: &Bounds, ty: &syn::Type, cx: &mut Ctxt) {
    if let Some(pattern) = &bounds.pattern {
        if let Err(e) = regex_lite::Regex::new(pattern.as_str()) {
            cx.at(pattern.span(), format!("this pattern does not compile: {e}"));
        } else if let Some(construct) = non_portable(pattern.as_str()) {
            cx.at(
                pattern.span(),
                format!(
                    "this pattern uses {construct}, which JSON Schema's regular expressions (ECMA-262) do not \
                     have: clients and models would read it otherwise than the binder checks it"
                ),
            );
        }
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
                if let NumberLit::Float(f) = **bound
                    && f.fract() != 0.0
                {
                    // `+ 0.0` turns a `-0` into `0`.
                    let whole = if key == "min" { f.ceil() } else { f.floor() } + 0.0;
                    cx.at(
                        bound.span(),
                        format!(
                            "`{key} = {f}` does not fit `{inner_name}`: an integer parameter's bound must be a whole number (`{key} = {whole}` allows the same values)"
                        ),
                    );
                    continue;
                }
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
    if outer_kind(ty) == ValueKind::Collection {
        check_collection_default(default, bounds, ty, cx);
        check_item_defaults(default, bounds, ty, cx);
        return;
    }
    check_scalar_default(default, bounds, ty, cx);
}

/// The items of a literal list default (`vec![a, b]`), each checked
/// against the bounds its values are held to (`min`, `max_length`,
/// `pattern`, ...), through nested lists.
fn check_item_defaults(default: &syn::Expr, bounds: &Bounds, ty: &syn::Type, cx: &mut Ctxt) {
    let (Some(items), Some(item)) = (vec_items(default), item_type(ty)) else {
        return;
    };
    for default in &items {
        if outer_kind(item) == ValueKind::Collection {
            check_item_defaults(default, bounds, item, cx);
        } else {
            check_scalar_default(unconverted(default), bounds, item, cx);
        }
    }
}

/// The string literal a list item is made from (`"a".into()`,
/// `"a".to_string()`, `"a".to_owned()`, `String::from("a")`), which a
/// list of `String` needs; `expr` itself otherwise.
fn unconverted(expr: &syn::Expr) -> &syn::Expr {
    let literal = match expr {
        syn::Expr::MethodCall(call)
            if call.args.is_empty() && ["into", "to_string", "to_owned"].iter().any(|m| call.method == m) =>
        {
            &*call.receiver
        }
        syn::Expr::Call(call) if call.args.len() == 1 => match &*call.func {
            syn::Expr::Path(path)
                if path
                    .path
                    .segments
                    .iter()
                    .map(|s| s.ident.to_string())
                    .eq(["String", "from"]) =>
            {
                &call.args[0]
            }
            _ => return expr,
        },
        _ => return expr,
    };
    if string_literal(literal).is_some() {
        literal
    } else {
        expr
    }
}

/// A literal default of a number or a string checked against its bounds.
fn check_scalar_default(default: &syn::Expr, bounds: &Bounds, ty: &syn::Type, cx: &mut Ctxt) {
    if !matches!(
        outer_kind(ty),
        ValueKind::Int { .. } | ValueKind::Float | ValueKind::Text | ValueKind::Bool
    ) {
        return;
    }
    let (kind, _) = inner_kind(ty);
    if let Some(text) = string_literal(default) {
        if kind != ValueKind::Text {
            // Unquoted, the text is the value only when it reads as one.
            let (reads, example) = match kind {
                ValueKind::Int { .. } => (text.parse::<i128>().is_ok(), "an integer, `default = 10`"),
                ValueKind::Float => (text.parse::<f64>().is_ok(), "a number, `default = 0.5`"),
                _ => (
                    text == "true" || text == "false",
                    "`default = true` or `default = false`",
                ),
            };
            let advice = match reads {
                true => format!("write the value itself, `default = {text}` without quotes"),
                false => format!("write {example}, without quotes"),
            };
            cx.spanned(
                default,
                format!("the default is a string, but `{}` is not one: {advice}", type_name(ty)),
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

/// A bare `default` (`Default::default()`) checked against the bounds,
/// where the type's syntax tells its default: 0 for a number, `""` for a
/// string, no items for a list, set or map. `span` is the `default` token.
pub fn check_std_default(span: Span, bounds: &Bounds, ty: &syn::Type, cx: &mut Ctxt) {
    if is_optional(ty) || is_array(ty) {
        // An `Option`'s default is reported on its own; an array's is
        // not empty.
        return;
    }
    let name = type_name(ty);
    let outside = |what: String| {
        format!("the default (`Default::default()`, {what} for `{name}`) is outside the parameter's own bounds")
    };
    match outer_kind(ty) {
        ValueKind::Int { .. } | ValueKind::Float => {
            if let Some(min) = &bounds.min
                && min.as_f64() > 0.0
            {
                cx.at(span, format!("{}: below `min` ({})", outside("0".into()), number(min)));
            }
            if let Some(max) = &bounds.max
                && max.as_f64() < 0.0
            {
                cx.at(span, format!("{}: above `max` ({})", outside("0".into()), number(max)));
            }
        }
        ValueKind::Text => {
            if let Some(min) = &bounds.min_length
                && **min > 0
            {
                cx.at(
                    span,
                    format!(
                        "{}: 0 characters, below `min_length` ({})",
                        outside("\"\"".into()),
                        **min
                    ),
                );
            }
            if let Some(pattern) = &bounds.pattern
                && let Ok(regex) = regex_lite::Regex::new(pattern.as_str())
                && !regex.is_match("")
            {
                cx.at(
                    span,
                    format!(
                        "{}: it does not match `pattern` (`{}`)",
                        outside("\"\"".into()),
                        pattern.as_str()
                    ),
                );
            }
        }
        ValueKind::Collection => {
            if let Some(min) = &bounds.min_items
                && **min > 0
            {
                cx.at(
                    span,
                    format!("{}: below `min_items` ({})", outside("no items".into()), **min),
                );
            }
        }
        ValueKind::Bool | ValueKind::Other => {}
    }
}

/// A literal default of a list, set or map checked against its item
/// bounds, where its item count can be read: `vec![a, b]`, `Vec::new()`.
fn check_collection_default(default: &syn::Expr, bounds: &Bounds, ty: &syn::Type, cx: &mut Ctxt) {
    if bounds.min_items.is_none() && bounds.max_items.is_none() {
        return;
    }
    let Some(items) = item_count(default, ty) else {
        return;
    };
    if let Some(min) = &bounds.min_items
        && items < **min
    {
        cx.spanned(
            default,
            format!(
                "the default is outside the parameter's own bounds: {items} items, below `min_items` ({})",
                **min
            ),
        );
    }
    if let Some(max) = &bounds.max_items
        && items > **max
    {
        cx.spanned(
            default,
            format!(
                "the default is outside the parameter's own bounds: {items} items, above `max_items` ({})",
                **max
            ),
        );
    }
}

/// How many items `vec![a, b, ...]` or `T::new()` (`T` the type's own
/// name) holds; `None` for anything else.
fn item_count(expr: &syn::Expr, ty: &syn::Type) -> Option<u64> {
    match expr {
        syn::Expr::Group(group) => item_count(&group.expr, ty),
        syn::Expr::Macro(_) => vec_items(expr).map(|items| items.len() as u64),
        syn::Expr::Call(call) if call.args.is_empty() => {
            let syn::Expr::Path(path) = &*call.func else {
                return None;
            };
            let segments: Vec<_> = path.path.segments.iter().collect();
            let [.., owner, new] = segments[..] else {
                return None;
            };
            let own = last_segment(ty)?;
            (new.ident == "new" && owner.ident == own.ident).then_some(0)
        }
        _ => None,
    }
}

/// The items of `vec![a, b, ...]`; `None` for anything else (`vec![x; n]`
/// included).
fn vec_items(expr: &syn::Expr) -> Option<syn::punctuated::Punctuated<syn::Expr, syn::Token![,]>> {
    match expr {
        syn::Expr::Group(group) => vec_items(&group.expr),
        syn::Expr::Macro(mac) if mac.mac.path.is_ident("vec") => mac
            .mac
            .parse_body_with(syn::punctuated::Punctuated::<syn::Expr, syn::Token![,]>::parse_terminated)
            .ok(),
        _ => None,
    }
}

/// Whether `segment` reads as `Option<T>`: the name alone is no proof (a
/// user's own `Option` type without a type argument is no option).
fn is_option(segment: &syn::PathSegment) -> bool {
    segment.ident == "Option"
        && matches!(&segment.arguments, syn::PathArguments::AngleBracketed(args)
            if args.args.len() == 1 && matches!(args.args[0], syn::GenericArgument::Type(_)))
}

/// Whether `ty` is an `Option`, directly or in a `Box`.
fn is_optional(mut ty: &syn::Type) -> bool {
    while let Some(segment) = last_segment(ty) {
        if is_option(segment) {
            return true;
        }
        let syn::PathArguments::AngleBracketed(args) = &segment.arguments else {
            return false;
        };
        match args.args.first() {
            Some(syn::GenericArgument::Type(inner)) if segment.ident == "Box" => ty = inner,
            _ => return false,
        }
    }
    false
}

fn is_array(ty: &syn::Type) -> bool {
    match ty {
        syn::Type::Array(_) => true,
        syn::Type::Group(group) => is_array(&group.elem),
        syn::Type::Paren(paren) => is_array(&paren.elem),
        _ => false,
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

    #[test]
    fn patterns_ecma_262_reads_otherwise_are_found() {
        for pattern in [
            "(?i)^[a-z]+$",
            "(?P<n>x)",
            "(?s:.)",
            r"\Aabc\z",
            "abc\\z",
            "^[[:alpha:]]+$",
        ] {
            assert!(non_portable(pattern).is_some(), "{pattern}");
        }
        for pattern in [
            "^[a-z]+$",
            "(?:ab)+",
            "(?<year>[0-9]{4})",
            r"\\Az",
            r"\(\?i\)",
            r"[\[:]",
            "^\\d{3}-\\w+$",
        ] {
            assert_eq!(non_portable(pattern), None, "{pattern}");
        }
    }

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
    fn the_closest_name_is_a_near_one() {
        let names = ["pattern", "root", "limit"];
        assert_eq!(closest("patern", names.into_iter()), Some("pattern"));
        assert_eq!(closest("rot", names.into_iter()), Some("root"));
        assert_eq!(closest("query", names.into_iter()), None);
        assert_eq!(closest("y", ["x"].into_iter()), Some("x"));
        assert_eq!(closest("qeury", ["query"].into_iter()), Some("query"));
        assert_eq!(edit_distance("kitten", "sitting"), 3);
        assert_eq!(edit_distance("qeury", "query"), 1);
    }

    #[test]
    fn fractional_bounds_on_integers_are_errors() {
        assert_eq!(
            errors(syn::parse_quote!(#[param(min = 0.5)]), syn::parse_quote!(u32)),
            1
        );
        assert_eq!(
            errors(syn::parse_quote!(#[param(max = 2.0)]), syn::parse_quote!(i64)),
            0
        );
        assert_eq!(
            errors(syn::parse_quote!(#[param(min = 0.5)]), syn::parse_quote!(f32)),
            0
        );
    }

    fn default_errors(attr: syn::Attribute, ty: syn::Type) -> usize {
        let attrs = ParamAttrs::from_attributes(&[attr]).unwrap();
        let mut cx = Ctxt::new();
        match attrs.default.as_deref() {
            Some(darling::util::Override::Explicit(crate::attr::DefaultExpr(expr))) => {
                check_default(expr, &attrs.bounds, &ty, &mut cx)
            }
            Some(darling::util::Override::Inherit) => check_std_default(Span::call_site(), &attrs.bounds, &ty, &mut cx),
            None => {}
        }
        match cx.finish() {
            Ok(()) => 0,
            Err(tokens) => tokens.to_string().matches("compile_error").count(),
        }
    }

    #[test]
    fn a_standard_default_is_checked_against_the_bounds() {
        let check = |attr, ty| default_errors(attr, ty);
        assert_eq!(
            check(syn::parse_quote!(#[param(default, min = 1)]), syn::parse_quote!(u32)),
            1
        );
        assert_eq!(
            check(syn::parse_quote!(#[param(default, min = 0)]), syn::parse_quote!(u32)),
            0
        );
        assert_eq!(
            check(syn::parse_quote!(#[param(default, max = -1)]), syn::parse_quote!(f64)),
            1
        );
        assert_eq!(
            check(
                syn::parse_quote!(#[param(default, min_length = 1)]),
                syn::parse_quote!(String)
            ),
            1
        );
        assert_eq!(
            check(
                syn::parse_quote!(#[param(default, pattern = "^a")]),
                syn::parse_quote!(String)
            ),
            1
        );
        assert_eq!(
            check(
                syn::parse_quote!(#[param(default, pattern = "^a*$")]),
                syn::parse_quote!(String)
            ),
            0
        );
        assert_eq!(
            check(
                syn::parse_quote!(#[param(default, min_items = 1)]),
                syn::parse_quote!(Vec<u32>)
            ),
            1
        );
        assert_eq!(
            check(
                syn::parse_quote!(#[param(default, min = 1)]),
                syn::parse_quote!(Vec<u32>)
            ),
            0
        );
        assert_eq!(
            check(
                syn::parse_quote!(#[param(default, min_items = 1)]),
                syn::parse_quote!([u32; 2])
            ),
            0
        );
        assert_eq!(
            check(syn::parse_quote!(#[param(default, min = 1)]), syn::parse_quote!(Window)),
            0
        );
    }

    #[test]
    fn a_literal_collection_default_is_checked_when_it_can_be_counted() {
        let check = |attr, ty| default_errors(attr, ty);
        assert_eq!(
            check(
                syn::parse_quote!(#[param(default = vec![], min_items = 1)]),
                syn::parse_quote!(Vec<u32>)
            ),
            1
        );
        assert_eq!(
            check(
                syn::parse_quote!(#[param(default = vec![1, 2, 3], max_items = 2)]),
                syn::parse_quote!(Vec<u32>)
            ),
            1
        );
        assert_eq!(
            check(
                syn::parse_quote!(#[param(default = vec![1], min_items = 1)]),
                syn::parse_quote!(Vec<u32>)
            ),
            0
        );
        assert_eq!(
            check(
                syn::parse_quote!(#[param(default = HashSet::new(), min_items = 1)]),
                syn::parse_quote!(HashSet<u32>)
            ),
            1
        );
        assert_eq!(
            check(
                syn::parse_quote!(#[param(default = defaults(), min_items = 1)]),
                syn::parse_quote!(Vec<u32>)
            ),
            0
        );
    }

    /// What `#[tool]` expands `item` to, errors included.
    fn expanded(item: proc_macro2::TokenStream) -> String {
        crate::expand::tool(proc_macro2::TokenStream::new(), item, |_| None).to_string()
    }

    #[test]
    fn only_an_option_with_a_type_argument_is_already_optional() {
        let optional = "is already optional";
        for (ty, default, refused) in [
            (quote::quote!(Option<String>), quote::quote!("notes"), true),
            (quote::quote!(std::option::Option<u32>), quote::quote!(Some(3)), true),
            // A type of the user's named `Option`: a default is its own.
            (quote::quote!(Option), quote::quote!(Option::new()), false),
            (quote::quote!(filters::Option), quote::quote!(Default::default()), false),
        ] {
            let out = expanded(quote::quote! {
                #[doc = "Find notes."]
                async fn find(#[param(description = "Where", default = #default)] folder: #ty) -> String {
                    String::new()
                }
            });
            assert_eq!(out.contains(optional), refused, "{ty}: {out}");
        }
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

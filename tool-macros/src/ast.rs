//! A borrowed model of a `#[tool]` function that keeps the original syn
//! nodes, so every later error can point at the token it is about.

use darling::FromAttributes;
use darling::util::Override;
use proc_macro2::Span;
use syn::spanned::Spanned;

use crate::attr::{DefaultExpr, ParamAttrs, ToolArgs};
use crate::ctxt::Ctxt;
use crate::docs::{self, Docs};

/// Attributes that leave a function's body as written.
const INERT_ATTRIBUTES: &[&str] = &[
    "doc",
    "allow",
    "warn",
    "deny",
    "forbid",
    "expect",
    "deprecated",
    "must_use",
    "inline",
    "cold",
];

/// Macros of the standard library that never expand to an `.await` of
/// their own (an `.await` in their arguments is still seen).
const NON_AWAITING_MACROS: &[&str] = &[
    "assert",
    "assert_eq",
    "assert_ne",
    "debug_assert",
    "debug_assert_eq",
    "debug_assert_ne",
    "format",
    "format_args",
    "print",
    "println",
    "eprint",
    "eprintln",
    "write",
    "writeln",
    "vec",
    "panic",
    "unreachable",
    "unimplemented",
    "todo",
    "matches",
    "concat",
    "stringify",
    "line",
    "column",
    "file",
    "module_path",
    "dbg",
];

/// Keywords a `!` may follow without making a macro call (`if !done {`).
const KEYWORDS_BEFORE_NOT: &[&str] = &["if", "while", "match", "return", "break", "in", "else", "yield"];

/// Whether `tokens` hold no `.await` and no call of a macro that might
/// hide one, at any depth.
fn tokens_never_await(tokens: proc_macro2::TokenStream) -> bool {
    use proc_macro2::{Spacing, TokenTree};
    let tokens: Vec<TokenTree> = tokens.into_iter().collect();
    tokens.iter().enumerate().all(|(i, token)| match token {
        TokenTree::Ident(ident) => {
            let name = ident.to_string();
            // `name!(...)`, `name![...]`, `name! {...}`; not `a != b`.
            let called = matches!(
                (tokens.get(i + 1), tokens.get(i + 2)),
                (Some(TokenTree::Punct(bang)), Some(TokenTree::Group(_)))
                    if bang.as_char() == '!' && bang.spacing() == Spacing::Alone
            );
            name != "await"
                && (!called
                    || KEYWORDS_BEFORE_NOT.contains(&name.as_str())
                    || NON_AWAITING_MACROS.contains(&name.as_str()))
        }
        TokenTree::Group(group) => tokens_never_await(group.stream()),
        _ => true,
    })
}

/// The function under `#[tool]`.
pub struct ToolFn<'a> {
    pub item: &'a syn::ItemFn,
    pub args: ToolArgs,
    pub docs: Docs,
    pub params: Vec<Param<'a>>,
    /// The runtime crate's path: `::tool_runtime` or `#[tool(crate = ...)]`.
    pub rt: syn::Path,
}

/// One parameter of the function.
pub struct Param<'a> {
    pub arg: &'a syn::FnArg,
    /// The parameter's name; `None` for a receiver or a pattern.
    pub ident: Option<&'a syn::Ident>,
    pub ty: &'a syn::Type,
    pub role: Role<'a>,
    pub attrs: ParamAttrs,
    /// Whether its `#[param]` parsed; when not, its error is reported and
    /// the checks that read the attribute are skipped.
    pub attrs_ok: bool,
}

/// Who supplies a parameter's value.
pub enum Role<'a> {
    /// The model, through the arguments: in the schema.
    Model,
    /// The runtime: the call's `ToolContext`.
    Context,
    /// The runtime: shared state of the inner type, held by the registry.
    State(&'a syn::Type),
}

impl<'a> ToolFn<'a> {
    /// Builds the model, collecting every attribute error into `cx`.
    pub fn from_item(item: &'a syn::ItemFn, args: ToolArgs, cx: &mut Ctxt) -> Self {
        let rt: syn::Path = args.krate.clone().unwrap_or_else(|| syn::parse_quote!(::tool_runtime));
        let params = item
            .sig
            .inputs
            .iter()
            .map(|arg| Param::from_arg(arg, &rt, cx))
            .collect();
        ToolFn {
            item,
            docs: docs::parse(&item.attrs),
            args,
            params,
            rt,
        }
    }

    /// The function's name.
    pub fn fn_ident(&self) -> &syn::Ident {
        &self.item.sig.ident
    }

    /// The wire name and the span to blame for it.
    pub fn wire_name(&self) -> (String, Span) {
        match &self.args.name {
            Some(name) => (name.as_str().to_owned(), name.span()),
            None => (unraw(self.fn_ident()), self.fn_ident().span()),
        }
    }

    /// The tool description: `#[tool(description)]`, else the doc comment.
    pub fn description(&self) -> Option<&str> {
        self.args.description.as_deref().or(self.docs.description.as_deref())
    }

    /// The generated struct's name: `search_files` -> `SearchFiles`; `None`
    /// when the function's name gives none (`__`), which `valid` reports.
    pub fn struct_ident(&self) -> Option<syn::Ident> {
        let name = struct_name(&unraw(self.fn_ident()))?;
        Some(syn::Ident::new(&name, self.fn_ident().span()))
    }

    /// Whether the function takes `self` (then no item can be emitted
    /// beside it: it sits in an `impl` block).
    pub fn has_receiver(&self) -> bool {
        self.item.sig.receiver().is_some()
    }

    /// Whether the function is `async` and its body finishes on its first
    /// poll, as far as its tokens show: no `.await` anywhere in it, no macro
    /// but the standard library's formatting and assertion ones (any other
    /// might expand to an `.await`), and no attribute on the function that
    /// might rewrite it. The registry may then run such a call to its end
    /// while starting it, with no future to allocate.
    pub fn never_awaits(&self) -> bool {
        self.item.sig.asyncness.is_some()
            && self
                .item
                .attrs
                .iter()
                .all(|attr| INERT_ATTRIBUTES.iter().any(|name| attr.path().is_ident(name)))
            && tokens_never_await(quote::ToTokens::to_token_stream(&self.item.block))
    }

    /// The parameters the model sees.
    pub fn model_params(&self) -> impl Iterator<Item = &Param<'a>> {
        self.indexed_model_params().map(|(_, p)| p)
    }

    /// The model parameters with their index among all parameters (the
    /// `N` of the generated `__pN` and `__defaultN`).
    pub fn indexed_model_params(&self) -> impl Iterator<Item = (usize, &Param<'a>)> {
        self.params
            .iter()
            .enumerate()
            .filter(|(_, p)| matches!(p.role, Role::Model))
    }

    /// The description of a model parameter: `#[param(description)]`, else
    /// the `# Arguments` list of the doc comment.
    pub fn param_description(&self, param: &Param<'_>) -> Option<String> {
        if let Some(d) = &param.attrs.description {
            return Some(d.clone());
        }
        let ident = param.ident.map(unraw)?;
        self.docs
            .arguments
            .get(&ident)
            .or_else(|| self.docs.arguments.get(&param.wire_name()))
            .cloned()
    }
}

impl<'a> Param<'a> {
    fn from_arg(arg: &'a syn::FnArg, rt: &syn::Path, cx: &mut Ctxt) -> Self {
        let (attrs, ident, ty) = match arg {
            syn::FnArg::Receiver(receiver) => (&receiver.attrs, None, &*receiver.ty),
            syn::FnArg::Typed(pat_type) => {
                let ident = match &*pat_type.pat {
                    syn::Pat::Ident(pat) if pat.subpat.is_none() => Some(&pat.ident),
                    _ => None,
                };
                (&pat_type.attrs, ident, &*pat_type.ty)
            }
        };
        let param_attrs = cx.handle(ParamAttrs::from_attributes(attrs));
        let mut attrs_ok = param_attrs.is_some();
        for attr in attrs.iter().filter(|a| crate::attr::is_cfg(a)) {
            cx.spanned(
                attr.path(),
                "#[tool] cannot see whether `cfg` removes this parameter (cfg is evaluated after the macro runs): gate the whole tool with #[cfg(...)] instead, or keep the parameter",
            );
        }
        for path in attrs.iter().filter_map(crate::attr::cfg_param) {
            cx.spanned(
                path,
                "#[tool] cannot see `param` inside `cfg_attr` (cfg is evaluated after the macro runs): write #[param(...)] directly",
            );
            attrs_ok = false;
        }
        let param_attrs = param_attrs.unwrap_or_default();
        Param {
            arg,
            ident,
            ty,
            role: role_of(ty, rt),
            attrs: param_attrs,
            attrs_ok,
        }
    }

    /// The wire name: `#[param(rename)]`, else the Rust name.
    pub fn wire_name(&self) -> String {
        match (&self.attrs.rename, self.ident) {
            (Some(rename), _) => rename.as_str().to_owned(),
            (None, Some(ident)) => unraw(ident),
            (None, None) => String::new(),
        }
    }

    /// The span to blame for the parameter as a whole.
    pub fn span(&self) -> Span {
        match (self.ident, self.arg) {
            (Some(ident), _) => ident.span(),
            (None, syn::FnArg::Typed(pat_type)) => pat_type.pat.span(),
            (None, arg) => arg.span(),
        }
    }

    /// The default, if any: `Some(None)` for `#[param(default)]`,
    /// `Some(Some(expr))` for `#[param(default = EXPR)]`.
    pub fn default(&self) -> Option<Option<&syn::Expr>> {
        self.attrs.default.as_ref().map(|d| match &**d {
            Override::Inherit => None,
            Override::Explicit(DefaultExpr(expr)) => Some(expr),
        })
    }
}

/// `ToolContext` is the call's context, `State<T>` shared state; anything
/// else comes from the model.
///
/// Only the runtime's own types are injected, recognised by their path: the
/// bare name (`State<Db>`, as imported from the runtime), or a path through
/// the runtime crate (`tool_runtime::State<Db>`, `tool_runtime::tool::State<Db>`,
/// or through the `#[tool(crate = ...)]` path). Another type that happens to
/// be named `State` (`geo::State<String>`) is a model parameter like any other.
fn role_of<'a>(ty: &'a syn::Type, rt: &syn::Path) -> Role<'a> {
    let path = match ty {
        syn::Type::Path(path) => path,
        // A type handed through a `macro_rules!` fragment (`$t:ty`) comes
        // wrapped in an invisible group.
        syn::Type::Group(group) => return role_of(&group.elem, rt),
        syn::Type::Paren(paren) => return role_of(&paren.elem, rt),
        _ => return Role::Model,
    };
    if path.qself.is_some() || !is_runtime_path(&path.path, rt) {
        return Role::Model;
    }
    let Some(last) = path.path.segments.last() else {
        return Role::Model;
    };
    if last.ident == "ToolContext" && last.arguments.is_none() {
        return Role::Context;
    }
    if last.ident == "State"
        && let syn::PathArguments::AngleBracketed(args) = &last.arguments
        && let [syn::GenericArgument::Type(inner)] = args.args.iter().collect::<Vec<_>>()[..]
    {
        return Role::State(inner);
    }
    Role::Model
}

/// Whether `path` names an item of the runtime: a single segment, or the
/// runtime crate's path (`tool_runtime` or the `crate = ...` override)
/// followed by the item, directly or through its `tool` module.
fn is_runtime_path(path: &syn::Path, rt: &syn::Path) -> bool {
    let idents: Vec<&syn::Ident> = path.segments.iter().map(|s| &s.ident).collect();
    let Some((_, prefix)) = idents.split_last() else {
        return false;
    };
    if prefix.is_empty() {
        return path.leading_colon.is_none();
    }
    let prefix = match prefix.split_last() {
        Some((module, rest)) if *module == "tool" => rest,
        _ => prefix,
    };
    let runtime: Vec<&syn::Ident> = rt.segments.iter().map(|s| &s.ident).collect();
    prefix == runtime.as_slice() || (prefix.len() == 1 && prefix[0] == "tool_runtime")
}

/// The last segment's name when `ty` is a path type (`Option`, `Result`, ...).
pub fn last_segment(ty: &syn::Type) -> Option<&syn::PathSegment> {
    match ty {
        syn::Type::Path(path) if path.qself.is_none() => path.path.segments.last(),
        syn::Type::Group(group) => last_segment(&group.elem),
        syn::Type::Paren(paren) => last_segment(&paren.elem),
        _ => None,
    }
}

/// What a type's syntax says about its values, for the bound checks. Read
/// from the last path segment: a type the macro cannot see into (a user's
/// struct or enum, an alias, `serde_json::Value`) is `Other`, and nothing is
/// said about it.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum ValueKind {
    /// An integer type and its range.
    Int {
        lo: i128,
        hi: i128,
    },
    Float,
    Text,
    Bool,
    /// A list, set or map (the outermost type only).
    Collection,
    Other,
}

/// `T` of `Option<T>` or `Box<T>`, looked through repeatedly.
fn through_option(mut ty: &syn::Type) -> &syn::Type {
    while let Some(inner) = wrapped(ty, &["Option", "Box"]) {
        ty = inner;
    }
    ty
}

/// The only type argument of a path type whose last segment is one of `names`.
fn wrapped<'t>(ty: &'t syn::Type, names: &[&str]) -> Option<&'t syn::Type> {
    let segment = last_segment(ty)?;
    if !names.iter().any(|n| segment.ident == n) {
        return None;
    }
    type_args(segment).next()
}

fn type_args(segment: &syn::PathSegment) -> impl Iterator<Item = &syn::Type> {
    let args = match &segment.arguments {
        syn::PathArguments::AngleBracketed(args) => Some(args.args.iter()),
        _ => None,
    };
    args.into_iter().flatten().filter_map(|a| match a {
        syn::GenericArgument::Type(t) => Some(t),
        _ => None,
    })
}

/// The element type when `ty` is a list or set, the value type when it is a
/// map; `None` otherwise.
fn element(ty: &syn::Type) -> Option<&syn::Type> {
    match ty {
        syn::Type::Slice(slice) => return Some(&slice.elem),
        syn::Type::Array(array) => return Some(&array.elem),
        syn::Type::Group(group) => return element(&group.elem),
        syn::Type::Paren(paren) => return element(&paren.elem),
        _ => {}
    }
    const LISTS: &[&str] = &[
        "Vec",
        "VecDeque",
        "LinkedList",
        "HashSet",
        "BTreeSet",
        "IndexSet",
        "BinaryHeap",
    ];
    const MAPS: &[&str] = &["HashMap", "BTreeMap", "IndexMap"];
    let segment = last_segment(ty)?;
    if LISTS.iter().any(|n| segment.ident == n) {
        type_args(segment).next()
    } else if MAPS.iter().any(|n| segment.ident == n) {
        type_args(segment).nth(1)
    } else {
        None
    }
}

/// The type of a parameter's items (through `Option`): a list's or set's
/// elements, a map's values; `None` for a type that holds none.
pub fn item_type(ty: &syn::Type) -> Option<&syn::Type> {
    element(through_option(ty))
}

/// The outermost value of a parameter type (through `Option`), which item
/// bounds apply to.
pub fn outer_kind(ty: &syn::Type) -> ValueKind {
    let ty = through_option(ty);
    if element(ty).is_some() {
        ValueKind::Collection
    } else {
        scalar_kind(ty)
    }
}

/// The innermost value of a parameter type (through `Option`, lists and
/// maps), which numeric and string bounds apply to, and that type.
pub fn inner_kind(ty: &syn::Type) -> (ValueKind, &syn::Type) {
    let mut ty = through_option(ty);
    while let Some(elem) = element(ty) {
        ty = through_option(elem);
    }
    (scalar_kind(ty), ty)
}

fn scalar_kind(ty: &syn::Type) -> ValueKind {
    let Some(segment) = last_segment(ty) else {
        return ValueKind::Other;
    };
    if !segment.arguments.is_none() {
        return ValueKind::Other;
    }
    let int = |lo: i128, hi: i128| ValueKind::Int { lo, hi };
    match segment.ident.to_string().as_str() {
        "u8" => int(0, u8::MAX.into()),
        "u16" => int(0, u16::MAX.into()),
        "u32" => int(0, u32::MAX.into()),
        "u64" | "usize" => int(0, u64::MAX.into()),
        "u128" => int(0, i128::MAX),
        "i8" => int(i8::MIN.into(), i8::MAX.into()),
        "i16" => int(i16::MIN.into(), i16::MAX.into()),
        "i32" => int(i32::MIN.into(), i32::MAX.into()),
        "i64" | "isize" => int(i64::MIN.into(), i64::MAX.into()),
        "i128" => int(i128::MIN, i128::MAX),
        "f32" | "f64" => ValueKind::Float,
        "String" | "str" => ValueKind::Text,
        "bool" => ValueKind::Bool,
        _ => ValueKind::Other,
    }
}

/// The first reference type anywhere in `ty` (`&str`, `Option<&[u8]>`).
pub fn find_reference(ty: &syn::Type) -> Option<&syn::TypeReference> {
    match ty {
        syn::Type::Reference(reference) => Some(reference),
        syn::Type::Path(path) => {
            let qself = path.qself.as_ref().and_then(|q| find_reference(&q.ty));
            qself.or_else(|| path.path.segments.iter().flat_map(type_args).find_map(find_reference))
        }
        syn::Type::Slice(slice) => find_reference(&slice.elem),
        syn::Type::Array(array) => find_reference(&array.elem),
        syn::Type::Group(group) => find_reference(&group.elem),
        syn::Type::Paren(paren) => find_reference(&paren.elem),
        syn::Type::Tuple(tuple) => tuple.elems.iter().find_map(find_reference),
        _ => None,
    }
}

/// Whether `ty` contains an `impl Trait` anywhere (`impl Serialize`,
/// `Vec<impl Serialize>`), read from the syntax tree.
pub fn contains_impl_trait(ty: &syn::Type) -> bool {
    match ty {
        syn::Type::ImplTrait(_) => true,
        syn::Type::Path(path) => {
            path.qself.as_ref().is_some_and(|q| contains_impl_trait(&q.ty))
                || path.path.segments.iter().any(|segment| match &segment.arguments {
                    syn::PathArguments::AngleBracketed(args) => args.args.iter().any(|a| match a {
                        syn::GenericArgument::Type(t) => contains_impl_trait(t),
                        syn::GenericArgument::AssocType(assoc) => contains_impl_trait(&assoc.ty),
                        _ => false,
                    }),
                    syn::PathArguments::Parenthesized(args) => {
                        args.inputs.iter().any(contains_impl_trait)
                            || matches!(&args.output, syn::ReturnType::Type(_, t) if contains_impl_trait(t))
                    }
                    syn::PathArguments::None => false,
                })
        }
        syn::Type::Reference(r) => contains_impl_trait(&r.elem),
        syn::Type::Ptr(p) => contains_impl_trait(&p.elem),
        syn::Type::Slice(s) => contains_impl_trait(&s.elem),
        syn::Type::Array(a) => contains_impl_trait(&a.elem),
        syn::Type::Group(g) => contains_impl_trait(&g.elem),
        syn::Type::Paren(p) => contains_impl_trait(&p.elem),
        syn::Type::Tuple(t) => t.elems.iter().any(contains_impl_trait),
        _ => false,
    }
}

/// The identifier without a raw `r#` prefix.
pub fn unraw(ident: &syn::Ident) -> String {
    let s = ident.to_string();
    s.strip_prefix("r#").map(str::to_owned).unwrap_or(s)
}

/// The name of the struct `#[tool]` makes of a function named `fn_name`:
/// its UpperCamelCase, with one leading `_` kept when it would start with a
/// digit (`_3d_view` -> `_3dView`). `None` when that is no identifier a
/// struct can have: empty (`__`) or a keyword (`self_` -> `Self`), or a
/// type or value of the standard prelude ([`PRELUDE`]), which the struct
/// would hide from the module's own code (`result` -> `Result`, and
/// `Result<T, E>` no longer names the prelude's).
pub fn struct_name(fn_name: &str) -> Option<String> {
    let camel = upper_camel(fn_name);
    let name = if camel.starts_with(|c: char| c.is_ascii_digit()) {
        format!("_{camel}")
    } else {
        camel
    };
    if PRELUDE.contains(&name.as_str()) {
        return None;
    }
    // `syn` parses no keyword and no digit-led text as an identifier, and
    // unlike `Ident::new` it returns an error instead of panicking.
    syn::parse_str::<syn::Ident>(&name).ok().map(|_| name)
}

/// The types and values the standard prelude puts in every module, which
/// a module's code names all the time: a struct of one of them would hide
/// it (`Result<T, E>`, `Ok(x)`). Traits (`Send`, `Copy`, ...) are left
/// out: they name plausible tools (`copy`, `send`), and code reaches them
/// in bounds, where a clash is reported at its use.
pub const PRELUDE: &[&str] = &["Box", "Err", "None", "Ok", "Option", "Result", "Some", "String", "Vec"];

/// `search_files` -> `SearchFiles`.
pub fn upper_camel(snake: &str) -> String {
    snake
        .split('_')
        .filter(|part| !part.is_empty())
        .map(|part| {
            let mut chars = part.chars();
            match chars.next() {
                Some(first) => first.to_uppercase().chain(chars).collect::<String>(),
                None => String::new(),
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn struct_names_are_upper_camel_case() {
        assert_eq!(upper_camel("search_files"), "SearchFiles");
        assert_eq!(upper_camel("get_v2_data"), "GetV2Data");
        assert_eq!(upper_camel("_private_tool"), "PrivateTool");
    }

    #[test]
    fn every_function_name_gives_a_struct_name_or_none() {
        assert_eq!(struct_name("search_files").as_deref(), Some("SearchFiles"));
        assert_eq!(struct_name("_3d_view").as_deref(), Some("_3dView"));
        assert_eq!(struct_name("v2").as_deref(), Some("V2"));
        assert_eq!(struct_name("größe").as_deref(), Some("Größe"));
        assert_eq!(struct_name("__"), None);
        assert_eq!(struct_name("_"), None);
        assert_eq!(struct_name("self_"), None);
        assert_eq!(struct_name("result"), None);
        assert_eq!(struct_name("ok"), None);
        assert_eq!(struct_name("results").as_deref(), Some("Results"));
    }

    #[test]
    fn injected_parameters_are_recognised_by_type() {
        let rt: syn::Path = syn::parse_quote!(::tool_runtime);
        let role = |ty: syn::Type| role_of(Box::leak(Box::new(ty)), &rt);
        assert!(matches!(
            role(syn::parse_quote!(tool_runtime::ToolContext)),
            Role::Context
        ));
        assert!(matches!(role(syn::parse_quote!(ToolContext)), Role::Context));
        assert!(matches!(role(syn::parse_quote!(State<Db>)), Role::State(_)));
        assert!(matches!(
            role(syn::parse_quote!(::tool_runtime::State<Db>)),
            Role::State(_)
        ));
        assert!(matches!(
            role(syn::parse_quote!(tool_runtime::tool::State<Db>)),
            Role::State(_)
        ));
        assert!(matches!(role(syn::parse_quote!(Vec<String>)), Role::Model));
        // Through a `macro_rules!` fragment (`$t:ty`), in an invisible group.
        let grouped = |ty: syn::Type| {
            syn::Type::Group(syn::TypeGroup {
                group_token: Default::default(),
                elem: Box::new(ty),
            })
        };
        assert!(matches!(role(grouped(syn::parse_quote!(ToolContext))), Role::Context));
        assert!(matches!(role(grouped(syn::parse_quote!(State<Db>))), Role::State(_)));
        assert!(matches!(role(syn::parse_quote!((ToolContext))), Role::Context));
    }

    #[test]
    fn a_state_type_of_another_crate_is_a_model_parameter() {
        let rt: syn::Path = syn::parse_quote!(::tool_runtime);
        let role = |ty: syn::Type| role_of(Box::leak(Box::new(ty)), &rt);
        assert!(matches!(role(syn::parse_quote!(geo::State<String>)), Role::Model));
        assert!(matches!(
            role(syn::parse_quote!(crate::geo::State<String>)),
            Role::Model
        ));
        assert!(matches!(role(syn::parse_quote!(other::ToolContext)), Role::Model));
        assert!(matches!(role(syn::parse_quote!(::State<Db>)), Role::Model));
    }

    #[test]
    fn bounds_see_the_innermost_and_outermost_values() {
        let ty: syn::Type = syn::parse_quote!(Option<Vec<Option<u8>>>);
        assert_eq!(outer_kind(&ty), ValueKind::Collection);
        assert_eq!(inner_kind(&ty).0, ValueKind::Int { lo: 0, hi: 255 });
        let map: syn::Type = syn::parse_quote!(std::collections::HashMap<String, Vec<String>>);
        assert_eq!(inner_kind(&map).0, ValueKind::Text);
        let user: syn::Type = syn::parse_quote!(Vec<Window>);
        assert_eq!(inner_kind(&user).0, ValueKind::Other);
        assert_eq!(
            outer_kind(&syn::parse_quote!(u32)),
            ValueKind::Int {
                lo: 0,
                hi: u32::MAX.into()
            }
        );
    }

    #[test]
    fn references_are_found_anywhere() {
        assert!(find_reference(&syn::parse_quote!(&str)).is_some());
        assert!(find_reference(&syn::parse_quote!(Option<&[u8]>)).is_some());
        assert!(find_reference(&syn::parse_quote!(Vec<String>)).is_none());
    }

    #[test]
    fn impl_trait_is_read_from_the_syntax_tree() {
        assert!(contains_impl_trait(&syn::parse_quote!(impl Serialize)));
        assert!(contains_impl_trait(&syn::parse_quote!(Vec<impl Serialize>)));
        assert!(!contains_impl_trait(&syn::parse_quote!(Page<Simpl>)));
        assert!(!contains_impl_trait(&syn::parse_quote!(Page<simpl::Item>)));
    }

    #[test]
    fn a_renamed_runtime_path_injects_its_state() {
        let rt: syn::Path = syn::parse_quote!(my_rt);
        let state: syn::Type = syn::parse_quote!(my_rt::State<Db>);
        assert!(matches!(role_of(&state, &rt), Role::State(_)));
        let context: syn::Type = syn::parse_quote!(my_rt::ToolContext);
        assert!(matches!(role_of(&context, &rt), Role::Context));
    }

    #[test]
    fn a_body_never_awaits_only_when_no_token_can_wait() {
        let never = |body: proc_macro2::TokenStream| tokens_never_await(body);
        assert!(never(quote::quote!({
            let n = a + 1;
            if !(n != 2) {
                return format!("{n}");
            }
            n.to_string()
        })));
        assert!(never(quote::quote!({
            assert!(x);
            vec![1, 2].len();
            matches!(x, Some(_))
        })));
        // An `.await` anywhere, a macro that might hide one, a macro whose
        // arguments hold one.
        assert!(!never(quote::quote!({ tokio::task::yield_now().await })));
        assert!(!never(quote::quote!({
            let f = async { g().await };
        })));
        assert!(!never(quote::quote!({
            tracing::info!("x");
        })));
        assert!(!never(quote::quote!({
            select! { _ = a => {} }
        })));
        assert!(!never(quote::quote!({ format!("{}", g().await) })));
        assert!(!never(quote::quote!({
            macro_rules! wait {
                ($e:expr) => {
                    $e
                };
            }
            wait!(g())
        })));
    }
}

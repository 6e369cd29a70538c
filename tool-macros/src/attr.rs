//! Parsing `#[tool(...)]` and `#[param(...)]` with darling.

use darling::util::{Flag, Override, SpannedValue};
use darling::{FromAttributes, FromMeta};
use proc_macro2::TokenStream;
use quote::quote;

/// `#[tool(name = "...", description = "...", crate = path, strict, ...)]`.
#[derive(Debug, Default, FromMeta)]
pub struct ToolArgs {
    /// The wire name, when it differs from the function's name.
    pub name: Option<SpannedValue<String>>,
    /// The description, instead of the doc comment.
    pub description: Option<String>,
    /// The path of the runtime crate, when it is renamed.
    #[darling(rename = "crate")]
    pub krate: Option<syn::Path>,
    /// Bind this tool's arguments strictly, whatever the registry's mode.
    pub strict: Flag,
    /// Never run this tool beside another call.
    pub sequential: Flag,
    /// Tags for choosing subsets of tools: `tags = ["fs", "read"]`.
    #[darling(default)]
    pub tags: Vec<syn::LitStr>,
    /// MCP annotation: a human-readable title.
    pub title: Option<String>,
    /// MCP annotation: the tool does not change its environment.
    pub read_only: Option<bool>,
    /// MCP annotation: the tool may destroy data.
    pub destructive: Option<bool>,
    /// MCP annotation: repeating a call has no further effect.
    pub idempotent: Option<bool>,
    /// MCP annotation: the tool reaches outside systems.
    pub open_world: Option<bool>,
}

/// `#[param(...)]` on a tool's parameter or a derived struct's field.
#[derive(Debug, Default, FromAttributes)]
#[darling(attributes(param))]
pub struct ParamAttrs {
    /// What the model reads about the parameter.
    pub description: Option<String>,
    /// `default` (`Default::default()`) or `default = EXPR`.
    pub default: Option<SpannedValue<Override<DefaultExpr>>>,
    /// The wire name, when it differs from the Rust name.
    pub rename: Option<SpannedValue<String>>,
    /// Bounds, checked by the binder and shown in the schema.
    #[darling(flatten)]
    pub bounds: Bounds,
}

/// The constraint keys shared by parameters and struct fields.
#[derive(Debug, Default, FromMeta)]
pub struct Bounds {
    pub min: Option<SpannedValue<NumberLit>>,
    pub max: Option<SpannedValue<NumberLit>>,
    pub min_length: Option<SpannedValue<u64>>,
    pub max_length: Option<SpannedValue<u64>>,
    pub pattern: Option<SpannedValue<String>>,
    pub min_items: Option<SpannedValue<u64>>,
    pub max_items: Option<SpannedValue<u64>>,
}

impl Bounds {
    pub fn is_empty(&self) -> bool {
        self.min.is_none()
            && self.max.is_none()
            && self.min_length.is_none()
            && self.max_length.is_none()
            && self.pattern.is_none()
            && self.min_items.is_none()
            && self.max_items.is_none()
    }

    /// The `Constraints` value these bounds build, or `None` when there are none.
    pub fn to_tokens(&self, private: &TokenStream) -> Option<TokenStream> {
        if self.is_empty() {
            return None;
        }
        let number = |n: &Option<SpannedValue<NumberLit>>| match n {
            Some(n) => {
                let n = n.to_tokens(private);
                quote!(#private::Some(#n))
            }
            None => quote!(#private::None),
        };
        let count = |n: &Option<SpannedValue<u64>>| match n {
            Some(n) => {
                let n = **n;
                quote!(#private::Some(#n))
            }
            None => quote!(#private::None),
        };
        let minimum = number(&self.min);
        let maximum = number(&self.max);
        let min_length = count(&self.min_length);
        let max_length = count(&self.max_length);
        let min_items = count(&self.min_items);
        let max_items = count(&self.max_items);
        let pattern = match &self.pattern {
            Some(p) => {
                let p = p.as_str();
                quote!(#private::Some(#private::pattern(#p)))
            }
            None => quote!(#private::None),
        };
        Some(quote! {
            #private::constraints(#minimum, #maximum, #min_length, #max_length, #pattern, #min_items, #max_items)
        })
    }
}

/// The expression of `default = EXPR`, taken verbatim (darling's own
/// `syn::Expr` would read `default = "text"` as the path `text`).
#[derive(Debug, Clone)]
pub struct DefaultExpr(pub syn::Expr);

impl FromMeta for DefaultExpr {
    fn from_expr(expr: &syn::Expr) -> darling::Result<Self> {
        Ok(DefaultExpr(expr.clone()))
    }
}

/// A numeric literal bound: `1`, `-5`, `0.25`, `10_000`.
#[derive(Debug, Clone)]
pub enum NumberLit {
    Int(i128),
    Float(f64),
}

impl NumberLit {
    pub fn as_f64(&self) -> f64 {
        match self {
            NumberLit::Int(i) => *i as f64,
            NumberLit::Float(f) => *f,
        }
    }

    fn to_tokens(&self, private: &TokenStream) -> TokenStream {
        match self {
            NumberLit::Int(n) => quote!(#private::int_bound(#n)),
            NumberLit::Float(f) => quote!(#private::float_bound(#f)),
        }
    }

    fn negate(self) -> Self {
        match self {
            NumberLit::Int(n) => NumberLit::Int(-n),
            NumberLit::Float(f) => NumberLit::Float(-f),
        }
    }
}

impl FromMeta for NumberLit {
    fn from_expr(expr: &syn::Expr) -> darling::Result<Self> {
        let error = || darling::Error::custom("expected a number literal such as `1`, `-5` or `0.5`").with_span(expr);
        match expr {
            syn::Expr::Lit(lit) => match &lit.lit {
                syn::Lit::Int(i) => i.base10_parse::<i128>().map(NumberLit::Int).map_err(|_| error()),
                syn::Lit::Float(f) => match f.base10_parse::<f64>() {
                    Ok(f) if f.is_finite() => Ok(NumberLit::Float(f)),
                    Ok(_) => Err(darling::Error::custom("this bound is too large for an `f64`").with_span(expr)),
                    Err(_) => Err(error()),
                },
                _ => Err(error()),
            },
            syn::Expr::Unary(syn::ExprUnary {
                op: syn::UnOp::Neg(_),
                expr: inner,
                ..
            }) => Self::from_expr(inner).map(NumberLit::negate),
            syn::Expr::Group(group) => Self::from_expr(&group.expr),
            _ => Err(error()),
        }
    }
}

/// Parses the arguments of `#[tool(...)]`.
pub fn tool_args(args: TokenStream) -> darling::Result<ToolArgs> {
    if args.is_empty() {
        return Ok(ToolArgs::default());
    }
    let list = darling::ast::NestedMeta::parse_meta_list(args)?;
    ToolArgs::from_list(&list)
}

/// The `crate = path` of `#[tool(...)]` arguments that do not parse as a
/// whole (a misspelt key beside it): the stub emitted on error still names
/// the renamed runtime, so the real error is the only one.
pub fn crate_path(args: &TokenStream) -> Option<syn::Path> {
    let list = darling::ast::NestedMeta::parse_meta_list(args.clone()).ok()?;
    list.iter().find_map(|meta| match meta {
        darling::ast::NestedMeta::Meta(syn::Meta::NameValue(pair)) if pair.path.is_ident("crate") => {
            syn::Path::from_expr(&pair.value).ok()
        }
        _ => None,
    })
}

/// Whether an attribute is `#[param(...)]`, or a `#[cfg_attr(..., param(...))]`
/// (reported by `cfg_param`; stripped with the others).
pub fn is_param_attr(attr: &syn::Attribute) -> bool {
    attr.path().is_ident("param") || cfg_param(attr).is_some()
}

/// The `param(...)` inside `#[cfg_attr(predicate, param(...))]`. A macro
/// runs before `cfg` is evaluated on a function's parameters, so `#[tool]`
/// cannot know whether it applies: it is an error, not a silent miss.
pub fn cfg_param(attr: &syn::Attribute) -> Option<syn::Path> {
    if !attr.path().is_ident("cfg_attr") {
        return None;
    }
    let metas = attr
        .parse_args_with(syn::punctuated::Punctuated::<syn::Meta, syn::Token![,]>::parse_terminated)
        .ok()?;
    metas
        .into_iter()
        .skip(1)
        .map(|m| m.path().clone())
        .find(|p| p.is_ident("param"))
}

/// Whether `name` is a valid tool name: `^[a-zA-Z0-9_-]{1,64}$`.
pub fn is_valid_tool_name(name: &str) -> bool {
    is_short_ascii_name(name, b"_-")
}

/// Whether `name` is a valid parameter or field name on the wire:
/// `^[a-zA-Z0-9_.-]{1,64}$`, which Anthropic requires of property keys.
pub fn is_valid_property_name(name: &str) -> bool {
    is_short_ascii_name(name, b"_.-")
}

/// Whether `name` is 1 to 64 ASCII letters, digits and `punctuation`.
fn is_short_ascii_name(name: &str, punctuation: &[u8]) -> bool {
    (1..=64).contains(&name.len())
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || punctuation.contains(&b))
}

/// Why a property name is refused, and what to write: the message of the
/// error at the name. `how` says how to give another name.
pub fn property_name_message(name: &str, how: &str) -> String {
    let why = match name.len() {
        0 => "it is empty".to_owned(),
        n if n > 64 => format!("it is {n} bytes long"),
        _ => "it has other characters".to_owned(),
    };
    format!(
        "`{name}` is not a valid name on the wire ({why}): providers accept 1 to 64 ASCII letters, digits, `_`, `.` or `-` (^[a-zA-Z0-9_.-]{{1,64}}$); {how}"
    )
}

/// Whether an attribute is `#[cfg(...)]`. On a parameter it is an error:
/// the macro sees the parameter before `cfg` removes it, so the call it
/// generates would pass an argument the function no longer takes.
pub fn is_cfg(attr: &syn::Attribute) -> bool {
    attr.path().is_ident("cfg")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_every_tool_key() {
        let args = tool_args(quote!(
            name = "find",
            description = "Find things.",
            strict,
            sequential,
            tags = ["fs", "read"],
            title = "Find",
            read_only = true
        ))
        .unwrap();
        assert_eq!(args.name.as_deref().map(String::as_str), Some("find"));
        assert!(args.strict.is_present());
        assert_eq!(
            args.tags.iter().map(syn::LitStr::value).collect::<Vec<_>>(),
            ["fs", "read"]
        );
        assert_eq!(args.read_only, Some(true));
    }

    #[test]
    fn unknown_keys_are_errors() {
        let err = tool_args(quote!(nmae = "x")).unwrap_err();
        assert!(err.to_string().contains("Unknown field"), "{err}");
        // The runtime's path is still read, for the stub.
        let args = quote!(crate = my_rt, nmae = "x");
        assert!(tool_args(args.clone()).is_err());
        let path = crate_path(&args).unwrap();
        assert!(path.is_ident("my_rt"));
    }

    #[test]
    fn number_literals_keep_their_sign_and_kind() {
        let neg: syn::Expr = syn::parse_quote!(-5);
        assert!(matches!(NumberLit::from_expr(&neg).unwrap(), NumberLit::Int(-5)));
        let f: syn::Expr = syn::parse_quote!(0.25);
        assert!(matches!(NumberLit::from_expr(&f).unwrap(), NumberLit::Float(x) if x == 0.25));
        let bad: syn::Expr = syn::parse_quote!(SOME_CONST);
        assert!(NumberLit::from_expr(&bad).is_err());
        // Past `f64`'s range the literal reads as infinity, which no
        // bound can be (and which would panic the emitted literal).
        for huge in [syn::parse_quote!(1e400), syn::parse_quote!(-1e400)] {
            let err = NumberLit::from_expr(&huge).unwrap_err();
            assert!(err.to_string().contains("too large"), "{err}");
        }
    }

    #[test]
    fn param_inside_cfg_attr_is_found() {
        let attr: syn::Attribute = syn::parse_quote!(#[cfg_attr(feature = "x", param(description = "d"))]);
        assert!(cfg_param(&attr).is_some());
        assert!(is_param_attr(&attr));
        let other: syn::Attribute = syn::parse_quote!(#[cfg_attr(test, allow(unused))]);
        assert!(cfg_param(&other).is_none());
    }

    #[test]
    fn wire_names_are_ascii_and_short() {
        assert!(is_valid_property_name("max_results"));
        assert!(is_valid_property_name("a.b-c_9"));
        assert!(!is_valid_property_name("filter[id]"));
        assert!(!is_valid_property_name("größe"));
        assert!(!is_valid_property_name(""));
        assert!(is_valid_property_name(&"x".repeat(64)));
        assert!(!is_valid_property_name(&"x".repeat(65)));
    }

    #[test]
    fn string_defaults_stay_string_literals() {
        let attr: syn::Attribute = syn::parse_quote!(#[param(default = "main")]);
        let parsed = ParamAttrs::from_attributes(&[attr]).unwrap();
        let Some(Override::Explicit(DefaultExpr(expr))) = parsed.default.as_deref() else {
            panic!("no explicit default");
        };
        assert!(matches!(expr, syn::Expr::Lit(_)));
    }
}

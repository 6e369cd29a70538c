//! `#[derive(ToolParam)]`: the shape of a user's struct or unit-variant enum,
//! with descriptions from doc comments and names as serde renames them.

use std::collections::HashSet;

use darling::FromAttributes;
use proc_macro2::{Span, TokenStream};
use quote::{quote, quote_spanned};
use syn::spanned::Spanned;

use crate::attr::ParamAttrs;
use crate::case::RenameRule;
use crate::ctxt::Ctxt;
use crate::docs;

/// Expands the derive. Errors leave a stub impl, so uses of the type report
/// only the real problem.
pub fn tool_param(input: TokenStream) -> TokenStream {
    let input: syn::DeriveInput = match syn::parse2(input) {
        Ok(input) => input,
        Err(e) => return e.to_compile_error(),
    };
    let mut cx = Ctxt::new();
    let rt = crate_path(&input.attrs, &mut cx);
    let container = serde_attrs(&input.attrs, &mut cx);
    for (span, what) in [(container.tag, "internally tagged"), (container.untagged, "untagged")] {
        if let Some(span) = span {
            cx.at(span, format!("{what} enums are not supported as tool parameters"));
        }
    }
    let description = doc_description(&input.attrs, "write it as a doc comment (`///`)", &mut cx).0;
    // An enum's variants with the names serde reads them by.
    let mut variants = Vec::new();
    let kind = match &input.data {
        syn::Data::Struct(data) => match container.transparent {
            Some(span) => transparent_kind(&rt, data, span, &mut cx),
            None => struct_kind(&rt, data, &input.generics, &container, &mut cx),
        },
        syn::Data::Enum(data) => {
            if let Some(span) = container.transparent {
                cx.at(span, TRANSPARENT_SHAPES);
            }
            enum_kind(&rt, data, &container, &mut variants, &mut cx)
        }
        syn::Data::Union(u) => {
            cx.spanned(u.union_token, "a union cannot be a tool parameter");
            None
        }
    };
    let ident = &input.ident;
    let mut generics = input.generics.clone();
    for param in generics.type_params_mut() {
        param.bounds.push(syn::parse_quote!(#rt::__private::ToolParam));
    }
    let (impl_generics, ty_generics, where_clause) = generics.split_for_impl();
    let enum_value = matches!(input.data, syn::Data::Enum(_)).then(|| enum_value(&rt, &input, &variants));
    let shape = match (cx.finish(), kind) {
        (Ok(()), Some(shape)) => {
            let describe = description.map(|d| quote!(.describe(#d)));
            quote! {
                let __guard = #rt::__private::ShapeGuard::enter(::core::any::type_name::<Self>());
                #shape #describe
            }
        }
        (Err(errors), _) => quote!(#errors ::core::unimplemented!()),
        (Ok(()), None) => quote!(::core::unimplemented!()),
    };
    quote! {
        impl #impl_generics #rt::__private::ToolParam for #ident #ty_generics #where_clause {
            fn shape() -> #rt::__private::Shape {
                #shape
            }
        }
        #enum_value
    }
}

/// `EnumValue` for a unit-variant enum: each variant's name as the model
/// sends it, so a default of the enum is shown in the schema even when the
/// enum does not serialize. `variants` holds the unit variants, with their
/// wire names (`None` for one serde skips); any other variant is an error
/// already, answered with `None` here.
fn enum_value(rt: &syn::Path, input: &syn::DeriveInput, variants: &[(syn::Ident, Option<String>)]) -> TokenStream {
    let (impl_generics, ty_generics, where_clause) = input.generics.split_for_impl();
    let ident = &input.ident;
    let arms = variants.iter().map(|(variant, wire)| match wire {
        Some(wire) => quote!(Self::#variant => ::core::option::Option::Some(#wire),),
        None => quote!(Self::#variant => ::core::option::Option::None,),
    });
    let unit_only = match &input.data {
        syn::Data::Enum(data) => data.variants.len() == variants.len(),
        _ => true,
    };
    let rest = (!unit_only).then(|| quote!(#[allow(unreachable_patterns)] _ => ::core::option::Option::None,));
    quote! {
        impl #impl_generics #rt::__private::EnumValue for #ident #ty_generics #where_clause {
            fn __enum_value(&self) -> ::core::option::Option<&'static str> {
                match *self {
                    #(#arms)*
                    #rest
                }
            }
        }
    }
}

/// The description in a doc comment, read as `#[tool]` reads one: the text
/// before the first heading (`# Examples` and what follows are for people
/// reading the code, not for the model). A doc written by a macro
/// (`#[doc = include_str!(...)]`) reaches the derive unexpanded: each is an
/// error at it, saying what to write `instead`, never a silently shorter
/// description. Also whether there was such a doc.
fn doc_description(attrs: &[syn::Attribute], instead: &str, cx: &mut Ctxt) -> (Option<String>, bool) {
    let docs = docs::parse(attrs);
    for (value, what) in &docs.unread {
        cx.spanned(
            value,
            format!(
                "#[derive(ToolParam)] reads descriptions from doc comments as written, and cannot expand {what}: the model would not see this text; {instead}"
            ),
        );
    }
    (docs.description, !docs.unread.is_empty())
}

/// `#[param(crate = path)]` (or `crate = "path"`) on the type, else
/// `::tool_runtime`. Any other key there is an error: it would otherwise
/// be silently ignored (bounds and descriptions go on the fields).
fn crate_path(attrs: &[syn::Attribute], cx: &mut Ctxt) -> syn::Path {
    let mut path = None;
    for attr in attrs.iter().filter(|a| a.path().is_ident("param")) {
        let parsed = attr.parse_nested_meta(|meta| {
            if meta.path.is_ident("crate") {
                path = match meta.value()?.parse::<syn::Expr>()? {
                    syn::Expr::Lit(syn::ExprLit {
                        lit: syn::Lit::Str(s), ..
                    }) => s.parse().ok(),
                    syn::Expr::Path(p) => Some(p.path),
                    _ => None,
                };
            } else {
                let key = meta.path.get_ident().map_or_else(|| "this key".to_owned(), |i| format!("`{i}`"));
                cx.spanned(
                    &meta.path,
                    format!(
                        "{key} does not apply to the type itself: on a derived type, #[param(...)] takes only `crate = path`; describe the type with its doc comment and put bounds on its fields"
                    ),
                );
                skip_value(&meta)?;
            }
            Ok(())
        });
        if let Err(e) = parsed {
            cx.at(e.span(), e);
        }
    }
    path.unwrap_or_else(|| syn::parse_quote!(::tool_runtime))
}

/// The expression of a struct's shape.
fn struct_kind(
    rt: &syn::Path,
    data: &syn::DataStruct,
    generics: &syn::Generics,
    container: &SerdeAttrs,
    cx: &mut Ctxt,
) -> Option<TokenStream> {
    let fields = match &data.fields {
        syn::Fields::Named(named) => &named.named,
        syn::Fields::Unnamed(unnamed) if unnamed.unnamed.len() == 1 => {
            return Some(newtype_shape(rt, &unnamed.unnamed[0], cx));
        }
        other => {
            cx.spanned(
                other,
                "only structs with named fields (or one-field newtypes) can be tool parameters",
            );
            return None;
        }
    };
    let rule = container.rename_all;
    let mut out = Vec::new();
    // The fields as serde writes them, for the output schema: needed only
    // when serde writes something else than it reads.
    let mut written = Vec::new();
    let mut diverges = false;
    // The names serde reads: one field each.
    let mut wires = HashSet::new();
    for field in fields {
        let serde = serde_attrs(&field.attrs, cx);
        let Some(ident) = &field.ident else { continue };
        let rust_name = crate::ast::unraw(ident);
        let written_name = serde_name(
            serde.written_name.as_ref(),
            container.written_rename_all,
            RenameRule::apply_to_field,
            &rust_name,
        );
        let ty = &field.ty;
        let always = !serde.written_sometimes;
        if serde.skip {
            // Written but never read: in the output schema only, as any
            // value (its type need not describe itself).
            if !serde.skip_writing {
                diverges = true;
                let rust_type = type_text(ty);
                let doc = doc_description(&field.attrs, FIELD_DOC_INSTEAD, cx)
                    .0
                    .map(|d| quote!(.describe(#d)));
                written.push(quote! {
                    #rt::__private::written_field(#written_name, #rt::__private::any_value() #doc, #always, #rust_type)
                });
            }
            continue;
        }
        if let Some(span) = serde.flatten {
            cx.at(span, "#[serde(flatten)] is not supported in tool parameters");
            continue;
        }
        let attrs = cx.handle(ParamAttrs::from_attributes(&field.attrs)).unwrap_or_default();
        if let Some(default) = &attrs.default {
            cx.at(
                default.span(),
                "a struct field's default is serde's: use #[serde(default)]",
            );
        }
        if let Some(rename) = &attrs.rename {
            cx.at(
                rename.span(),
                "a struct field's wire name is serde's: use #[serde(rename = \"...\")]",
            );
        }
        crate::valid::check_bounds(&attrs.bounds, &field.ty, cx);
        if let Some(SerdeDefault::Std(span)) = &serde.default {
            crate::valid::check_std_default(*span, &attrs.bounds, &field.ty, cx);
        }
        let wire = serde_name(serde.rename.as_ref(), rule, RenameRule::apply_to_field, &rust_name);
        check_field_wire_name(&wire, ident, serde.rename.as_ref(), cx);
        if !wires.insert(wire.clone()) {
            let message = format!(
                "two fields have the wire name `{wire}`: serde would read one key into both; rename one with #[serde(rename = \"...\")]"
            );
            match &serde.rename {
                Some(rename) => cx.spanned(rename, message),
                None => cx.spanned(ident, message),
            }
        }
        // As for a tool's parameter, a blank `description = ""` is none.
        let (description, unread) = match &attrs.description {
            Some(description) => (Some(description.clone()), false),
            None => doc_description(&field.attrs, FIELD_DOC_INSTEAD, cx),
        };
        let description = description.filter(|d| !d.trim().is_empty());
        let Some(description) = description else {
            // A doc written by a macro is reported at it: the field is not
            // undocumented, its doc is unread.
            if unread {
                continue;
            }
            cx.spanned(ident, format!(
                    "the field `{rust_name}` has no description: the model reads one for every field; add a doc comment or #[param(description = \"...\")]"
                ));
            continue;
        };
        let has_default = serde.default.is_some() || container.default.is_some();
        let rust_type = type_text(ty);
        let constrain = attrs
            .bounds
            .to_tokens(&quote!(#rt::__private))
            .map(|c| quote!(.constrain(#c)));
        let default_json = default_value(ident, ty, &serde, container, generics).map(|value| {
            // Known when it serializes, as a tool parameter's is (a `null`
            // one, an `Option`'s `None`, is kept for the binder, which then
            // reads a `null` sent as that default, but not shown).
            quote_spanned! {ty.span()=>
                .with_default_value({
                    #[allow(unused_imports)]
                    use #rt::__private::{ViaEnumDefault as _, ViaNoDefault as _, ViaSerializeDefault as _};
                    let __value: #ty = #value;
                    (&&&#rt::__private::DefaultOf::<#ty>::new(&__value)).__default_json()
                })
            }
        });
        let shape = quote_spanned! {ty.span()=>
            <#ty as #rt::__private::ToolParam>::shape().describe(#description) #constrain
        };
        if serde.skip_writing {
            diverges = true;
        } else {
            diverges |= serde.written_sometimes || serde.written_by_function || written_name != wire;
            let written_shape = match serde.written_by_function {
                true => quote!(#rt::__private::any_value().describe(#description)),
                false => shape.clone(),
            };
            written.push(quote! {
                #rt::__private::written_field(#written_name, #written_shape, #always, #rust_type)
            });
        }
        out.push(quote_spanned! {ty.span()=>
            #rt::__private::Field::new(#wire, #shape, #has_default, #rust_type)
            #default_json
        });
    }
    let rejects_unknown = container.deny_unknown_fields;
    let read = quote!(#rt::__private::object_shape(::std::vec![#(#out),*], #rejects_unknown));
    Some(match diverges {
        true => quote! {
            #rt::__private::written_as(#read, #rt::__private::object_shape(::std::vec![#(#written),*], false))
        },
        false => read,
    })
}

/// What to write instead of a field's doc written by a macro.
const FIELD_DOC_INSTEAD: &str = "write it as a doc comment (`///`) or with #[param(description = \"...\")]";

/// Why `#[serde(transparent)]` is refused on any other shape than a struct
/// of one field.
const TRANSPARENT_SHAPES: &str = "#[serde(transparent)] is supported in tool parameters only on a struct of exactly one field (`struct Name(String);` or `struct Name { id: String }`), which is read and described as that field's value";

/// The shape of a `#[serde(transparent)]` struct (`transparent` at `span`):
/// serde reads its one field's value alone, so it is described as a
/// newtype is, by that value's shape. Any other field (one serde skips) is
/// refused: the schema could not show it, and it is no help to the model.
fn transparent_kind(rt: &syn::Path, data: &syn::DataStruct, span: Span, cx: &mut Ctxt) -> Option<TokenStream> {
    let mut fields = data.fields.iter();
    match (fields.next(), fields.next()) {
        (Some(field), None) => Some(newtype_shape(rt, field, cx)),
        _ => {
            cx.at(span, TRANSPARENT_SHAPES);
            None
        }
    }
}

/// The shape of a newtype: its inner value's, as serde reads it, with the
/// bounds of `#[param(...)]` on the field. The field's other keys have no
/// place in it and are errors, never silently ignored.
fn newtype_shape(rt: &syn::Path, field: &syn::Field, cx: &mut Ctxt) -> TokenStream {
    let ty = &field.ty;
    // Only for its errors: `with`, `alias` and the like are refused here too.
    let _ = serde_attrs(&field.attrs, cx);
    let attrs = cx.handle(ParamAttrs::from_attributes(&field.attrs)).unwrap_or_default();
    if attrs.description.is_some() {
        let span = param_key_span(&field.attrs, "description").unwrap_or_else(|| ty.span());
        cx.at(
            span,
            "a newtype is described by its own doc comment, not its field's: move the description to the type",
        );
    }
    if let Some(default) = &attrs.default {
        cx.at(
            default.span(),
            "a newtype's field has no default of its own: give the parameter that takes the newtype one, #[param(default = ...)]",
        );
    }
    if let Some(rename) = &attrs.rename {
        cx.at(
            rename.span(),
            "a newtype's field has no name on the wire: the newtype is read as its inner value",
        );
    }
    crate::valid::check_bounds(&attrs.bounds, ty, cx);
    let constrain = attrs
        .bounds
        .to_tokens(&quote!(#rt::__private))
        .map(|c| quote!(.constrain(#c)));
    quote_spanned!(ty.span()=> <#ty as #rt::__private::ToolParam>::shape() #constrain)
}

/// Where `key` is written in the `#[param(...)]` attributes of `attrs`.
fn param_key_span(attrs: &[syn::Attribute], key: &str) -> Option<Span> {
    let mut found = None;
    for attr in attrs.iter().filter(|a| a.path().is_ident("param")) {
        let _ = attr.parse_nested_meta(|meta| {
            if meta.path.is_ident(key) {
                found.get_or_insert(meta.path.span());
            }
            skip_value(&meta)
        });
    }
    found
}

/// A field's wire name must be one every provider accepts as a property
/// key: reported at serde's rename string, else at the field's name.
fn check_field_wire_name(wire: &str, ident: &syn::Ident, rename: Option<&syn::LitStr>, cx: &mut Ctxt) {
    if crate::attr::is_valid_property_name(wire) {
        return;
    }
    match rename {
        Some(rename) => cx.spanned(rename, crate::attr::property_name_message(wire, "choose another")),
        None => cx.spanned(
            ident,
            crate::attr::property_name_message(wire, "give it one with #[serde(rename = \"...\")]"),
        ),
    }
}

/// The expression of the value serde gives an absent field: the field's
/// `#[serde(default)]` (`Default::default()`) or `#[serde(default = "path")]`,
/// else the field of the struct's own default (container-level). `None`
/// when there is none, or when it could need a bound the impl does not
/// carry (a type parameter's `Default`, on which serde adds bounds of its own).
fn default_value(
    ident: &syn::Ident,
    ty: &syn::Type,
    serde: &SerdeAttrs,
    container: &SerdeAttrs,
    generics: &syn::Generics,
) -> Option<TokenStream> {
    let params: Vec<&syn::Ident> = generics.type_params().map(|p| &p.ident).collect();
    let generic = !params.is_empty();
    match (&serde.default, &container.default) {
        (Some(_), _) if mentions(quote!(#ty), &params) => None,
        (Some(SerdeDefault::Std(_)), _) => {
            Some(quote_spanned!(ty.span()=> <#ty as ::core::default::Default>::default()))
        }
        (Some(SerdeDefault::Path(path)), _) => Some(quote!(#path())),
        (Some(SerdeDefault::Unreadable), _) | (None, None) => None,
        (None, Some(_)) if generic => None,
        (None, Some(SerdeDefault::Std(_))) => Some(quote!(<Self as ::core::default::Default>::default().#ident)),
        (None, Some(SerdeDefault::Path(path))) => Some(quote!({ let __default: Self = #path(); __default }.#ident)),
        (None, Some(SerdeDefault::Unreadable)) => None,
    }
}

/// Whether `tokens` name any of `idents` (a type parameter in a field's type).
fn mentions(tokens: TokenStream, idents: &[&syn::Ident]) -> bool {
    tokens.into_iter().any(|tree| match tree {
        proc_macro2::TokenTree::Ident(ident) => idents.iter().any(|i| **i == ident),
        proc_macro2::TokenTree::Group(group) => mentions(group.stream(), idents),
        _ => false,
    })
}

/// The expression of a unit-variant enum's shape, with what its values
/// mean from the variants' doc comments (the model cannot see them
/// otherwise; shown after whatever description the shape ends up with).
fn enum_kind(
    rt: &syn::Path,
    data: &syn::DataEnum,
    container: &SerdeAttrs,
    variants: &mut Vec<(syn::Ident, Option<String>)>,
    cx: &mut Ctxt,
) -> Option<TokenStream> {
    let mut values = Vec::new();
    // The values as serde writes them, for the output schema.
    let mut written = Vec::new();
    let mut documented = Vec::new();
    // The names serde reads: one variant each.
    let mut wires = HashSet::new();
    for variant in &data.variants {
        if !matches!(variant.fields, syn::Fields::Unit) {
            let (ident, fields) = (&variant.ident, &variant.fields);
            cx.spanned(
                quote!(#ident #fields),
                "only unit variants can be tool parameters (the model sends the variant's name as a string)",
            );
            continue;
        }
        let serde = serde_attrs(&variant.attrs, cx);
        // serde names a raw variant (`r#Type`) without its `r#`, as a field.
        let name = crate::ast::unraw(&variant.ident);
        if !serde.skip_writing {
            written.push(serde_name(
                serde.written_name.as_ref(),
                container.written_rename_all,
                RenameRule::apply_to_variant,
                &name,
            ));
        }
        if serde.skip {
            variants.push((variant.ident.clone(), None));
            continue;
        }
        if let Some(span) = serde.untagged {
            cx.at(
                span,
                "#[serde(untagged)] on a variant is not supported in tool parameters: serde reads an untagged unit variant from `null`, not from its name, which the schema lists",
            );
        }
        for attr in variant.attrs.iter().filter(|a| a.path().is_ident("param")) {
            cx.spanned(
                attr,
                "#[param] does not apply to an enum variant: its doc comment describes it to the model, and #[serde(rename = \"...\")] names it",
            );
        }
        let wire = serde_name(
            serde.rename.as_ref(),
            container.rename_all,
            RenameRule::apply_to_variant,
            &name,
        );
        if !wires.insert(wire.clone()) {
            let message = format!(
                "two variants have the wire name `{wire}`: serde would read the value as only one of them; rename one with #[serde(rename = \"...\")]"
            );
            match &serde.rename {
                Some(rename) => cx.spanned(rename, message),
                None => cx.spanned(&variant.ident, message),
            }
        }
        let instead = "write it as a doc comment (`///`)";
        if let Some(doc) = doc_description(&variant.attrs, instead, cx).0 {
            documented.push((wire.clone(), doc));
        }
        variants.push((variant.ident.clone(), Some(wire.clone())));
        values.push(wire);
    }
    let value_docs = match variant_docs(&documented) {
        Some(docs) => quote!(::core::option::Option::Some(#docs)),
        None => quote!(::core::option::Option::None),
    };
    if data.variants.is_empty() {
        cx.at(Span::call_site(), "an enum without variants cannot be a tool parameter");
    }
    let read = quote!(#rt::__private::enum_shape(&[#(#values),*], #value_docs));
    Some(match written == values {
        true => read,
        false => quote! {
            #rt::__private::written_as(#read, #rt::__private::enum_shape(&[#(#written),*], ::core::option::Option::None))
        },
    })
}

/// What an enum's values mean, from its variants' docs, by wire name:
/// `low: only when idle; normal: the usual`. Each variant's doc is one line
/// without its final period; undocumented variants are left out; `None`
/// when no variant has a doc. (The runtime shows the list after whatever
/// description the shape ends up with: `Shape::full_description`.)
fn variant_docs(documented: &[(String, String)]) -> Option<String> {
    if documented.is_empty() {
        return None;
    }
    let list = documented
        .iter()
        .map(|(wire, doc)| {
            let doc = doc.split_whitespace().collect::<Vec<_>>().join(" ");
            format!("{wire}: {}", doc.strip_suffix('.').unwrap_or(&doc))
        })
        .collect::<Vec<_>>()
        .join("; ");
    Some(list)
}

/// The serde attributes the schemas must agree with: the input schema with
/// what serde reads, the output schema with what it writes.
#[derive(Default)]
struct SerdeAttrs {
    /// The name serde reads, from `rename = "x"` or `rename(deserialize = "x")`.
    rename: Option<syn::LitStr>,
    /// The name serde writes, from `rename = "x"` or `rename(serialize = "x")`.
    written_name: Option<syn::LitStr>,
    rename_all: Option<RenameRule>,
    written_rename_all: Option<RenameRule>,
    default: Option<SerdeDefault>,
    /// serde never reads it: `skip` or `skip_deserializing`.
    skip: bool,
    /// serde never writes it: `skip` or `skip_serializing`.
    skip_writing: bool,
    /// serde may leave it out when writing: `skip_serializing_if`.
    written_sometimes: bool,
    /// serde writes it with a function of the user's: `serialize_with`.
    written_by_function: bool,
    flatten: Option<Span>,
    /// `#[serde(transparent)]`, at `transparent`.
    transparent: Option<Span>,
    tag: Option<Span>,
    untagged: Option<Span>,
    deny_unknown_fields: bool,
}

/// `#[serde(default)]` or `#[serde(default = "path")]`.
enum SerdeDefault {
    /// `Default::default()`, at the `default` token.
    Std(Span),
    /// The function serde calls.
    Path(syn::ExprPath),
    /// A value serde itself will report.
    Unreadable,
}

fn serde_attrs(attrs: &[syn::Attribute], cx: &mut Ctxt) -> SerdeAttrs {
    let mut out = SerdeAttrs::default();
    for attr in attrs.iter().filter(|a| a.path().is_ident("serde")) {
        let parsed = attr.parse_nested_meta(|meta| {
            let path = &meta.path;
            if path.is_ident("rename") {
                let (read, written) = names(&meta)?;
                out.rename = read.or(out.rename.take());
                out.written_name = written.or(out.written_name.take());
            } else if path.is_ident("rename_all") {
                let (read, written) = names(&meta)?;
                let mut rule = |lit: Option<syn::LitStr>| {
                    let rule = lit?.value();
                    let parsed = RenameRule::from_str(&rule);
                    if parsed.is_none() {
                        cx.spanned(path, format!("unknown rename rule `{rule}`"));
                    }
                    parsed
                };
                out.rename_all = rule(read).or(out.rename_all);
                out.written_rename_all = rule(written).or(out.written_rename_all);
            } else if path.is_ident("default") {
                out.default = Some(if meta.input.peek(syn::Token![=]) {
                    match meta.value()?.parse::<syn::Expr>()? {
                        syn::Expr::Lit(syn::ExprLit {
                            lit: syn::Lit::Str(lit), ..
                        }) => lit.parse().map_or(SerdeDefault::Unreadable, SerdeDefault::Path),
                        _ => SerdeDefault::Unreadable,
                    }
                } else {
                    SerdeDefault::Std(path.span())
                });
            } else if let Some(message) = unsupported_field(path) {
                cx.spanned(path, message);
                skip_value(&meta)?;
            } else if let Some(message) = unsupported_container(path) {
                cx.spanned(path, message);
                skip_value(&meta)?;
            } else if path.is_ident("skip") {
                (out.skip, out.skip_writing) = (true, true);
            } else if path.is_ident("skip_deserializing") {
                out.skip = true;
            } else if path.is_ident("skip_serializing") {
                out.skip_writing = true;
            } else if path.is_ident("skip_serializing_if") {
                out.written_sometimes = true;
                skip_value(&meta)?;
            } else if path.is_ident("serialize_with") {
                out.written_by_function = true;
                skip_value(&meta)?;
            } else if path.is_ident("flatten") {
                out.flatten = Some(path.span());
            } else if path.is_ident("transparent") {
                out.transparent = Some(path.span());
            } else if path.is_ident("alias") || path.is_ident("other") {
                // The schema could not show another name, and the binder
                // would refuse it: the model only ever sees one.
                let what = if path.is_ident("alias") { "alias" } else { "other" };
                cx.spanned(
                    path,
                    format!("#[serde({what})] is not supported in tool parameters: the model sees one name per field or value"),
                );
                skip_value(&meta)?;
            } else if path.is_ident("tag") {
                out.tag = Some(path.span());
                skip_value(&meta)?;
            } else if path.is_ident("deny_unknown_fields") {
                out.deny_unknown_fields = true;
            } else if path.is_ident("untagged") {
                out.untagged = Some(path.span());
            } else {
                skip_value(&meta)?;
            }
            Ok(())
        });
        // serde itself reports malformed serde attributes.
        let _ = parsed;
    }
    out
}

/// Why a container attribute that makes serde read or write another shape
/// than the struct's fields is refused: the schema would describe the
/// fields, and serde would read (or write) something else.
fn unsupported_container(path: &syn::Path) -> Option<&'static str> {
    let ident = path.get_ident()?.to_string();
    Some(match ident.as_str() {
        "from" => {
            "#[serde(from = \"...\")] is not supported in tool parameters: serde reads the other type, while the schema would describe this type; take the type serde reads as the parameter (derive ToolParam on it) and convert in the tool"
        }
        "try_from" => {
            "#[serde(try_from = \"...\")] is not supported in tool parameters: serde reads the other type, while the schema would describe this type; take the type serde reads as the parameter (derive ToolParam on it) and convert in the tool"
        }
        "into" => {
            "#[serde(into = \"...\")] is not supported in tool parameters: serde writes the other type, while the output schema would describe this type; derive ToolParam on the type serde writes and return that"
        }
        _ => return None,
    })
}

/// Why a field (or variant) attribute that makes serde read the value
/// with a function of the user's is refused: the schema would describe the
/// field's type, and serde would read whatever the function reads.
fn unsupported_field(path: &syn::Path) -> Option<&'static str> {
    let ident = path.get_ident()?.to_string();
    Some(match ident.as_str() {
        "with" => {
            "#[serde(with = \"...\")] is not supported in tool parameters: serde reads the field with that module's function, while the schema would describe the field's type; use a field type whose own `Deserialize` reads what the model sends (a newtype deriving ToolParam), or convert in the tool"
        }
        "deserialize_with" => {
            "#[serde(deserialize_with = \"...\")] is not supported in tool parameters: serde reads the field with that function, while the schema would describe the field's type; use a field type whose own `Deserialize` reads what the model sends (a newtype deriving ToolParam), or convert in the tool"
        }
        _ => return None,
    })
}

/// A field's type as written, for people reading completions.
fn type_text(ty: &syn::Type) -> String {
    quote!(#ty).to_string().replace(' ', "")
}

/// The name serde gives a field or variant on one side (reading or
/// writing): its own `rename`, else the container's `rename_all` rule
/// (`apply`, the field or variant flavour), else its Rust name.
fn serde_name(
    rename: Option<&syn::LitStr>,
    rule: Option<RenameRule>,
    apply: fn(RenameRule, &str) -> String,
    name: &str,
) -> String {
    match (rename, rule) {
        (Some(rename), _) => rename.value(),
        (None, Some(rule)) => apply(rule, name),
        (None, None) => name.to_owned(),
    }
}

/// The names serde reads and writes, from `rename = "x"` (both) or
/// `rename(deserialize = "x", serialize = "y")`; the same for `rename_all`.
fn names(meta: &syn::meta::ParseNestedMeta<'_>) -> syn::Result<(Option<syn::LitStr>, Option<syn::LitStr>)> {
    if meta.input.peek(syn::Token![=]) {
        let lit: syn::LitStr = meta.value()?.parse()?;
        return Ok((Some(lit.clone()), Some(lit)));
    }
    let (mut read, mut written) = (None, None);
    meta.parse_nested_meta(|inner| {
        if inner.path.is_ident("deserialize") {
            read = Some(inner.value()?.parse()?);
        } else if inner.path.is_ident("serialize") {
            written = Some(inner.value()?.parse()?);
        } else {
            skip_value(&inner)?;
        }
        Ok(())
    })?;
    Ok((read, written))
}

fn skip_value(meta: &syn::meta::ParseNestedMeta<'_>) -> syn::Result<()> {
    if meta.input.peek(syn::Token![=]) {
        let _: syn::Expr = meta.value()?.parse()?;
    } else if meta.input.peek(syn::token::Paren) {
        let _content;
        syn::parenthesized!(_content in meta.input);
        let _: TokenStream = _content.parse()?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn docs(pairs: &[(&str, &str)]) -> Vec<(String, String)> {
        pairs.iter().map(|(w, d)| (w.to_string(), d.to_string())).collect()
    }

    #[test]
    fn variant_docs_list_each_value_on_one_line() {
        let listed = variant_docs(&docs(&[
            ("low", "Only when idle."),
            ("high", "Before anything\n\nelse."),
        ]));
        assert_eq!(
            listed.as_deref(),
            Some("low: Only when idle; high: Before anything else")
        );
        assert_eq!(
            variant_docs(&docs(&[("low", "Only when idle")])).as_deref(),
            Some("low: Only when idle")
        );
        assert_eq!(variant_docs(&[]), None);
    }
}

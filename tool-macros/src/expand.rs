//! Code generation for `#[tool]`.

use proc_macro2::TokenStream;
use quote::quote;

use crate::ast::{Role, ToolFn};
use crate::attr::{ToolArgs, crate_path, tool_args};
use crate::ctxt::Ctxt;
use crate::emit::{result_ok_type, stripped_fn, struct_item};
use crate::fallback;
use crate::valid;

/// Expands `#[tool(args)] item`. Never drops the user's function: on error
/// it is emitted (without `#[param]`) with every error and a stub struct.
/// `source` indexes the file a span comes from (see `place`).
pub fn tool(
    args: TokenStream,
    item: TokenStream,
    source: impl FnOnce(proc_macro2::Span) -> Option<std::rc::Rc<crate::place::Index>>,
) -> TokenStream {
    let function = match syn::parse::Parser::parse2(parse_fn, item.clone()) {
        Ok(f) => f,
        Err(e) => {
            let error = syn::Error::new(e.span(), "#[tool] goes on a function (`async fn` or `fn`)").to_compile_error();
            return quote!(#item #error);
        }
    };
    if let Some(error) = crate::place::associated_fn(&function, source) {
        return error;
    }
    let mut cx = Ctxt::new();
    let krate = crate_path(&args);
    let args = cx.handle(tool_args(args)).unwrap_or_else(|| ToolArgs {
        krate,
        ..ToolArgs::default()
    });
    let model = ToolFn::from_item(&function, args, &mut cx);
    valid::check(&model, &mut cx);
    // `valid` reports a function name that gives no struct name.
    match (cx.finish(), model.struct_ident()) {
        (Ok(()), Some(ident)) => generate(&model, &ident),
        (result, _) => fallback::tool(&model, result.err().unwrap_or_default()),
    }
}

/// Parses the function under `#[tool]` with its body kept as the tokens
/// written: nothing here reads the body, and parsing a long one with `syn`
/// (built unoptimized, as Cargo builds proc macros in debug) and printing
/// it back token by token cost more than the rest of the expansion. Inner
/// attributes (`//!` docs) are read as `syn` reads them.
fn parse_fn(input: syn::parse::ParseStream<'_>) -> syn::Result<syn::ItemFn> {
    let mut attrs = input.call(syn::Attribute::parse_outer)?;
    let vis: syn::Visibility = input.parse()?;
    let sig: syn::Signature = input.parse()?;
    let body;
    let brace_token = syn::braced!(body in input);
    attrs.extend(body.call(syn::Attribute::parse_inner)?);
    let stmts: TokenStream = body.parse()?;
    let block = syn::Block {
        brace_token,
        stmts: vec![syn::Stmt::Expr(syn::Expr::Verbatim(stmts), None)],
    };
    Ok(syn::ItemFn {
        attrs,
        vis,
        sig,
        block: Box::new(block),
    })
}

fn generate(model: &ToolFn<'_>, ident: &syn::Ident) -> TokenStream {
    let rt = &model.rt;
    let p = crate::emit::private();
    let function = stripped_fn(model.item);
    let struct_item = struct_item(model, ident);
    let definition = definition(model);
    let crate::invoke::Dispatch { inherent, methods } = crate::invoke::dispatch(model);
    let bounds = crate::emit::param_bounds(model);
    let assertions = crate::assert::tool(model);
    let deserialize = crate::assert::deserialize_params(model);
    // The block declares no item a name in the user's code could mean:
    // the assertions sit in a block of their own, `__run` is associated
    // with the struct, and the imports are anonymous (`__rt` names a module).
    quote! {
        #function
        #struct_item

        // Lints are the user's for the user's code, not for what is generated.
        #[allow(dead_code, clippy::all, clippy::pedantic, clippy::nursery)]
        const _: () = {
            use #rt::__private as #p;
            #assertions
            #[allow(unused_imports)]
            use #p::{ViaAnything as _, ViaDisplay as _, ViaEnumDefault as _, ViaIntoToolOutput as _, ViaNeither as _, ViaNoDefault as _, ViaNoDisplay as _, ViaResult as _, ViaSerialize as _, ViaSerializeDefault as _, ViaToolParam as _};

            impl #ident {
                #inherent
            }

            impl #p::Tool for #ident where #bounds {
                fn definition(&self) -> &#p::ToolDefinition {
                    static __DEFINITION: #p::LazyDefinition = #p::LazyDefinition::new();
                    __DEFINITION.get_or_init(|| #definition)
                }

                #methods
            }

            #deserialize
        };
    }
}

fn definition(model: &ToolFn<'_>) -> TokenStream {
    let p = crate::emit::private();
    let (name, _) = model.wire_name();
    let description = model.description().unwrap_or_default();
    let fields = model.indexed_model_params().map(|(index, param)| {
        let ty = param.ty;
        let wire = param.wire_name();
        let description = model.param_description(param).unwrap_or_default();
        let constrain = param
            .attrs
            .bounds
            .to_tokens(&quote!(#p))
            .map(|c| quote!(.constrain(#c)));
        let has_default = param.default().is_some();
        let default_json = param.default().map(|_| {
            let default = crate::invoke::default_ident(index);
            quote!(.with_default_value((&&&#p::DefaultOf::<#ty>::new(&Self::#default())).__default_json()))
        });
        let rust_type = quote!(#ty).to_string().replace(' ', "");
        let shape = quote!(<#ty as #p::ToolParam>::shape());
        quote! {
            #p::Field::new(
                #wire,
                #shape.describe(#description) #constrain,
                #has_default,
                #rust_type,
            )
            #default_json
        }
    });
    let mut chain = Vec::new();
    if model.args.strict.is_present() {
        chain.push(quote!(.with_mode(#p::BindMode::Strict)));
    }
    if model.args.sequential.is_present() {
        chain.push(quote!(.sequential(true)));
    }
    if model.item.sig.asyncness.is_none() {
        chain.push(quote!(.blocking(true)));
    }
    let tags = &model.args.tags;
    if !tags.is_empty() {
        chain.push(quote!(.with_tags([#(#tags),*])));
    }
    if let Some(annotations) = annotations(model) {
        chain.push(quote!(.with_annotations(#annotations)));
    }
    if let Some(ty) = output_type(model) {
        chain.push(quote!(.with_output_shape((&&#p::OutputSchemaOf::<#ty>::new()).__output_shape())));
    }
    if model.params.iter().any(|p| matches!(p.role, Role::Context)) {
        chain.push(quote!(.with_context_param(true)));
    }
    for param in &model.params {
        if let Role::State(inner) = param.role {
            chain.push(quote!(.requires_state::<#inner>()));
        }
    }
    quote! {
        #p::ToolDefinition::new(#name, #description, ::std::vec![#(#fields),*])
            #(#chain)*
    }
}

fn annotations(model: &ToolFn<'_>) -> Option<TokenStream> {
    let args = &model.args;
    let p = crate::emit::private();
    if args.title.is_none()
        && args.read_only.is_none()
        && args.destructive.is_none()
        && args.idempotent.is_none()
        && args.open_world.is_none()
    {
        return None;
    }
    let opt_bool = |b: Option<bool>| match b {
        Some(b) => quote!(#p::Some(#b)),
        None => quote!(#p::None),
    };
    let title = match &args.title {
        Some(t) => quote!(#p::Some(#t)),
        None => quote!(#p::None),
    };
    let read_only = opt_bool(args.read_only);
    let destructive = opt_bool(args.destructive);
    let idempotent = opt_bool(args.idempotent);
    let open_world = opt_bool(args.open_world);
    Some(quote! {
        #p::annotations(#title, #read_only, #destructive, #idempotent, #open_world)
    })
}

/// The type whose output schema the tool advertises: the return type, or
/// `T` of a `Result<T, E>`; `None` for `()` and `impl Trait`.
fn output_type(model: &ToolFn<'_>) -> Option<syn::Type> {
    let syn::ReturnType::Type(_, ty) = &model.item.sig.output else {
        return None;
    };
    let ty: &syn::Type = match result_ok_type(ty) {
        Some(ok) => ok,
        None => ty,
    };
    let plain = !matches!(ty, syn::Type::ImplTrait(_) | syn::Type::Tuple(_)) && !crate::ast::contains_impl_trait(ty);
    plain.then(|| ty.clone())
}

#[cfg(test)]
mod tests {
    use quote::quote;

    #[test]
    fn the_body_is_kept_as_written_and_inner_docs_are_read() {
        let item = quote! {
            /// Outer.
            pub async fn f(x: u32) -> u32 {
                //! Inner.
                let y = x + 1;
                y
            }
        };
        let function = syn::parse::Parser::parse2(super::parse_fn, item).unwrap();
        let docs = crate::docs::doc_lines(&function.attrs);
        assert_eq!(docs, ["Outer.", "Inner."]);
        let printed = quote!(#function).to_string();
        assert!(
            printed.ends_with("{ # ! [doc = r\" Inner.\"] let y = x + 1 ; y }"),
            "{printed}"
        );
        assert!(
            syn::parse::Parser::parse2(
                super::parse_fn,
                quote!(
                    struct S;
                )
            )
            .is_err()
        );
        assert!(
            syn::parse::Parser::parse2(
                super::parse_fn,
                quote!(
                    fn f() {}
                    fn g() {}
                )
            )
            .is_err()
        );
    }
}

//! Code generation for the dispatcher of a `#[tool]`: `Tool::invoke` (after
//! the full binder), `Tool::invoke_fast` (a typed parse of arguments that are
//! already right), and the `__run` helper both end in, which calls the
//! function and turns its return value into a `ToolOutput`.
//!
//! Every use of a parameter type goes through `<T as ToolParam>` spanned at
//! the type, so a type that cannot be a parameter gets one error there.

use proc_macro2::TokenStream;
use quote::{format_ident, quote};

use crate::ast::{Role, ToolFn};

/// `__run`, `invoke` and `invoke_fast`: the first goes in the `const _`
/// block, the others in the `impl Tool`.
pub struct Dispatch {
    pub run_fn: TokenStream,
    pub methods: TokenStream,
}

pub fn dispatch(model: &ToolFn<'_>) -> Dispatch {
    Dispatch {
        run_fn: run_fn(model),
        methods: {
            let invoke = invoke(model);
            let invoke_fast = invoke_fast(model);
            quote!(#invoke #invoke_fast)
        },
    }
}

fn local(index: usize) -> syn::Ident {
    format_ident!("__p{}", index)
}

/// `fn __run(__p0: T0, ...) -> ToolFuture`: calls the function with every
/// parameter in order and converts what it returns.
fn run_fn(model: &ToolFn<'_>) -> TokenStream {
    let rt = &model.rt;
    let fn_ident = model.fn_ident();
    let locals: Vec<_> = (0..model.params.len()).map(local).collect();
    let types = model.params.iter().map(|p| p.ty);
    // A plain `fn` runs on the blocking pool: it may block, and its time
    // limit must still be able to fire.
    let call = if model.item.sig.asyncness.is_some() {
        quote!(#fn_ident(#(#locals),*).await)
    } else {
        quote!(#rt::__private::run_blocking(move || #fn_ident(#(#locals),*)).await)
    };
    let convert = output_conversion(model);
    // Generated locals all carry the call site's span: a tool declared by a
    // `macro_rules!` gives its name another hygiene context.
    quote! {
        fn __run(#(#locals: #types),*) -> #rt::__private::ToolFuture {
            ::std::boxed::Box::pin(async move {
                let __returned = #call;
                #convert
            })
        }
    }
}

/// The statements that bind the runtime-supplied parameters from `__scope`.
fn injected(model: &ToolFn<'_>) -> Vec<TokenStream> {
    model
        .params
        .iter()
        .enumerate()
        .filter_map(|(index, param)| {
            let local = local(index);
            match param.role {
                Role::Model => None,
                Role::Context => Some(quote!(let #local = __scope.context();)),
                Role::State(inner) => Some(quote! {
                    let #local = match __scope.state::<#inner>() {
                        ::core::option::Option::Some(__state) => __state,
                        ::core::option::Option::None => ::core::panic!(
                            "the registry holds no state of type `{}`", ::core::any::type_name::<#inner>()
                        ),
                    };
                }),
            }
        })
        .collect()
}

fn invoke(model: &ToolFn<'_>) -> TokenStream {
    let rt = &model.rt;
    let mut takes = Vec::new();
    let mut checked = Vec::new();
    for (index, param) in model.params.iter().enumerate() {
        if !matches!(param.role, Role::Model) {
            continue;
        }
        let local = local(index);
        let ty = param.ty;
        let wire = param.wire_name();
        let take = match param.default() {
            Some(expr) => {
                let value = crate::emit::default_value(ty, expr);
                quote!(#rt::__private::take_or_else::<#ty>(&mut __arguments, #wire, || #value))
            }
            None => quote!(#rt::__private::take::<#ty>(&mut __arguments, #wire)),
        };
        takes.push(quote!(let #local = #take;));
        checked.push(local);
    }
    // Every parameter is taken before any failure returns, so all
    // deserialization problems are reported together.
    let unwrap = (!checked.is_empty()).then(|| {
        quote! {
            let (#(::core::option::Option::Some(#checked),)*) = (#(#checked,)*) else {
                return ::core::result::Result::Err(__arguments.into_errors());
            };
        }
    });
    let injected = injected(model);
    let all: Vec<_> = (0..model.params.len()).map(local).collect();
    quote! {
        #[allow(unused_variables, unused_mut)]
        fn invoke(
            &self,
            __arguments: #rt::__private::BoundArguments,
            __scope: &#rt::__private::CallScope<'_>,
        ) -> ::core::result::Result<#rt::__private::ToolFuture, ::std::vec::Vec<#rt::__private::CallError>> {
            let mut __arguments = __arguments;
            #(#takes)*
            #unwrap
            #(#injected)*
            ::core::result::Result::Ok(__run(#(#all),*))
        }
    }
}

/// A typed parse straight from the arguments as sent, through the
/// runtime's shape-checked reader: every decision (is this value exactly
/// right, does it meet its bounds, what does an absent or `null` key mean)
/// is the runtime's, made from the same field shapes the binder walks.
/// It gives up (`None`), leaving the call to the full binder, wherever the
/// binder would have anything to change or say.
fn invoke_fast(model: &ToolFn<'_>) -> TokenStream {
    let rt = &model.rt;
    let params: Vec<_> = model
        .params
        .iter()
        .enumerate()
        .filter(|(_, p)| matches!(p.role, Role::Model))
        .collect();
    let names: Vec<String> = params.iter().map(|(_, p)| p.wire_name()).collect();
    let slots: Vec<_> = params.iter().map(|(i, _)| format_ident!("__s{}", i)).collect();
    let types: Vec<_> = params.iter().map(|(_, p)| p.ty).collect();
    let positions: Vec<usize> = (0..params.len()).collect();

    let arms = slots.iter().zip(&types).zip(&positions).map(|((slot, ty), position)| {
        let seed = quote!(#rt::__private::param_seed::<#ty>(&self.0[#position], self.1));
        quote! {
            ::core::option::Option::Some(#position) => #slot.fill(__map.next_value_seed(#seed)?)?,
        }
    });
    let finals = params
        .iter()
        .zip(&slots)
        .zip(&positions)
        .map(|(((index, param), slot), position)| {
            let local = local(*index);
            let ty = param.ty;
            let default = match param.default() {
                Some(expr) => crate::emit::default_value(ty, expr),
                None => quote!(::core::unreachable!()),
            };
            quote! {
                let #local: #ty = #slot.resolve(&__fields[#position], __scope.null_is_absent(), || #default)?;
            }
        });
    let injected = injected(model);
    let all: Vec<_> = (0..model.params.len()).map(local).collect();
    let bounds = crate::emit::param_bounds(model);
    quote! {
        #[allow(unused_variables, unused_mut)]
        fn invoke_fast(
            &self,
            __arguments: &#rt::__private::CallArguments,
            __scope: &#rt::__private::CallScope<'_>,
        ) -> ::core::option::Option<#rt::__private::ToolFuture> {
            use #rt::__private::serde::de as __de;

            struct __Visitor<'__f>(
                &'__f [#rt::__private::Field],
                ::core::option::Option<&'__f #rt::__private::Coerced>,
            );

            impl<'de> __de::Visitor<'de> for __Visitor<'_> where #bounds {
                type Value = (#(#rt::__private::Slot<#types>,)*);

                fn expecting(&self, __f: &mut ::core::fmt::Formatter<'_>) -> ::core::fmt::Result {
                    __f.write_str("the tool's arguments")
                }

                fn visit_map<__A: __de::MapAccess<'de>>(self, mut __map: __A) -> ::core::result::Result<Self::Value, __A::Error> {
                    fn __index(__key: &str) -> ::core::option::Option<usize> {
                        match __key {
                            #(#names => ::core::option::Option::Some(#positions),)*
                            _ => ::core::option::Option::None,
                        }
                    }
                    #(let mut #slots = #rt::__private::Slot::Absent;)*
                    while let ::core::option::Option::Some(__key) = __map.next_key_seed(#rt::__private::KeyIndex(__index))? {
                        match __key {
                            #(#arms)*
                            _ => return ::core::result::Result::Err(__de::Error::custom("")),
                        }
                    }
                    ::core::result::Result::Ok((#(#slots,)*))
                }
            }

            let __fields: &[#rt::__private::Field] = &<Self as #rt::__private::Tool>::definition(self).params().fields;
            let __visitor = __Visitor(__fields, #rt::__private::coerced(__scope));
            let (#(#slots,)*) = #rt::__private::parse_arguments(__arguments, __visitor)?;
            #(#finals)*
            #(#injected)*
            ::core::option::Option::Some(__run(#(#all),*))
        }
    }
}

/// Turns `__returned` into a `ToolOutput`: `Err(e)` is an error with `e`'s
/// message; a value is read by `IntoToolOutput` if it has it, else as JSON.
fn output_conversion(model: &ToolFn<'_>) -> TokenStream {
    let rt = &model.rt;
    let returns_result = match &model.item.sig.output {
        syn::ReturnType::Type(_, ty) => crate::emit::result_ok_type(ty).is_some(),
        syn::ReturnType::Default => false,
    };
    if returns_result {
        quote! {
            match __returned {
                ::core::result::Result::Ok(__value) => (&&&#rt::__private::OutputOf::new(__value)).__tool_output(),
                ::core::result::Result::Err(__error) => #rt::__private::error_output(__error),
            }
        }
    } else {
        quote!((&&&#rt::__private::OutputOf::new(__returned)).__tool_output())
    }
}

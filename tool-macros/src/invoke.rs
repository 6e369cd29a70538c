//! Code generation for the dispatcher of a `#[tool]`: `Tool::invoke` (after
//! the full binder), `Tool::invoke_fast` (a typed parse of arguments that are
//! already right), and the `__run` helper both end in, which calls the
//! function and turns its return value into a `ToolOutput`. `__run` and the
//! parameters' default functions (`__default0`, ...) are associated
//! functions of the generated struct, not items of the block that calls the
//! user's function, so no function name can collide with them.
//!
//! Every use of a parameter type goes through `<T as ToolParam>` spanned at
//! the type, so a type that cannot be a parameter gets one error there.

use proc_macro2::TokenStream;
use quote::{format_ident, quote};

use crate::ast::{Role, ToolFn};

/// `__run` and the default functions go in an inherent `impl` of the
/// generated struct, `invoke` and `invoke_fast` in the `impl Tool`.
pub struct Dispatch {
    pub inherent: TokenStream,
    pub methods: TokenStream,
}

pub fn dispatch(model: &ToolFn<'_>) -> Dispatch {
    let finishes_now = model.never_awaits();
    let run_fn = run_fn(model, finishes_now);
    let defaults = model
        .indexed_model_params()
        .filter_map(|(index, param)| default_fn(index, param));
    Dispatch {
        inherent: quote!(#run_fn #(#defaults)*),
        methods: {
            let list = param_list(model);
            let invoke = invoke(&list, finishes_now);
            let invoke_fast = invoke_fast(model, &list, finishes_now);
            quote!(#invoke #invoke_fast)
        },
    }
}

fn local(index: usize) -> syn::Ident {
    format_ident!("__p{}", index)
}

/// The name of the function that makes parameter `index`'s default.
pub fn default_ident(index: usize) -> syn::Ident {
    format_ident!("__default{}", index)
}

/// `fn __defaultN() -> T`, for a parameter with a default: the one place
/// its expression is compiled, called by the definition (the schema's
/// `default`), the full binder and the fast path alike. A default
/// converted from a string carries the impl's bound, so only the
/// assertion reports a type that cannot be made from one.
fn default_fn(index: usize, param: &crate::ast::Param<'_>) -> Option<TokenStream> {
    let expr = param.default()?;
    let ty = param.ty;
    let value = crate::emit::default_value(ty, expr);
    let ident = default_ident(index);
    let bound = crate::emit::string_default_bound(param).map(|bound| quote!(where #bound));
    Some(quote!(fn #ident() -> #ty #bound { #value }))
}

/// `fn __run(__p0: T0, ...) -> ToolFuture`: calls the function with every
/// parameter in order and converts what it returns. For a body that never
/// waits, `__run` returns the future unboxed, for the fast path to run at
/// once (see `start_now` in the runtime) and `invoke` to box.
fn run_fn(model: &ToolFn<'_>, finishes_now: bool) -> TokenStream {
    let p = crate::emit::private();
    let fn_ident = model.fn_ident();
    let locals: Vec<_> = (0..model.params.len()).map(local).collect();
    let types = model.params.iter().map(|p| p.ty);
    let convert = output_conversion(model);
    // Generated locals all carry the call site's span: a tool declared by a
    // `macro_rules!` gives its name another hygiene context. Calling a
    // `#[deprecated]` tool is the generated code's business, not a warning
    // for the user, who put the attribute there.
    let future = if model.item.sig.asyncness.is_some() {
        quote! {
            async move {
                let __returned = #fn_ident(#(#locals),*).await;
                #convert
            }
        }
    } else {
        // A plain `fn` runs on the blocking pool: it may block, and its
        // time limit must still be able to fire. Its value becomes the
        // output there too, so only the output crosses threads: a return
        // type that is not `Send` (`Box<dyn Error>`) is fine.
        quote! {
            async move {
                #p::run_blocking(move || {
                    let __returned = #fn_ident(#(#locals),*);
                    #convert
                })
                .await
            }
        }
    };
    if finishes_now {
        return quote! {
            #[allow(deprecated)]
            fn __run(#(#locals: #types),*) -> impl ::core::future::Future<Output = #p::ToolOutput> + ::core::marker::Send + 'static {
                #future
            }
        };
    }
    quote! {
        #[allow(deprecated)]
        fn __run(#(#locals: #types),*) -> #p::ToolFuture {
            ::std::boxed::Box::pin(#future)
        }
    }
}

/// The statements that bind the runtime-supplied parameters from `__scope`.
fn injected(model: &ToolFn<'_>) -> Vec<TokenStream> {
    let p = crate::emit::private();
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
                        #p::Some(__state) => __state,
                        #p::None => ::core::panic!(
                            "the registry holds no state of type `{}`", ::core::any::type_name::<#inner>()
                        ),
                    };
                }),
            }
        })
        .collect()
}

/// The model parameters as the runtime's `Params` list type,
/// `(A, (B, ()))`; the pattern of their values in the same nesting,
/// `(__p0, (__p1, ()))`; and their default functions,
/// `(None, (Some(Self::__default1), ()))`. Both dispatch methods bind them
/// and end in `start`.
struct ParamList {
    types: TokenStream,
    values: TokenStream,
    defaults: TokenStream,
    /// The block that binds the injected parameters from `__scope` and
    /// starts the call with every parameter.
    start: TokenStream,
}

fn param_list(model: &ToolFn<'_>) -> ParamList {
    let p = crate::emit::private();
    let params: Vec<_> = model.indexed_model_params().collect();
    let empty = (quote!(()), quote!(()), quote!(()));
    let (types, values, defaults) = params
        .iter()
        .rev()
        .fold(empty, |(types, values, defaults), (index, param)| {
            let ty = param.ty;
            let local = local(*index);
            let default = match param.default() {
                Some(_) => {
                    let ident = default_ident(*index);
                    quote!(#p::Some(Self::#ident))
                }
                None => quote!(#p::None),
            };
            (
                quote!((#ty, #types)),
                quote!((#local, #values)),
                quote!((#default, #defaults)),
            )
        });
    let injected = injected(model);
    let all = (0..model.params.len()).map(local);
    ParamList {
        types,
        values,
        defaults,
        start: quote!({
            #(#injected)*
            Self::__run(#(#all),*)
        }),
    }
}

/// `Tool::invoke`: every model parameter taken out of the bound arguments
/// by the runtime (all refusals reported together), then the injected
/// ones, then the call.
fn invoke(list: &ParamList, finishes_now: bool) -> TokenStream {
    let p = crate::emit::private();
    let (types, values, defaults, start) = (&list.types, &list.values, &list.defaults, &list.start);
    let start = if finishes_now {
        quote!(::std::boxed::Box::pin(#start))
    } else {
        quote!(#start)
    };
    quote! {
        #[allow(unused_variables)]
        fn invoke(
            &self,
            __arguments: #p::BoundArguments,
            __scope: &#p::CallScope<'_>,
        ) -> #p::Result<#p::ToolFuture, ::std::vec::Vec<#p::CallError>> {
            let #values = match #p::take_params::<#types>(
                <Self as #p::Tool>::definition(self), __arguments, #defaults,
            ) {
                #p::Ok(__values) => __values,
                #p::Err(__errors) => return #p::Err(__errors),
            };
            #p::Ok(#start)
        }
    }
}

/// `Tool::invoke_fast`: a typed parse straight from the arguments as sent,
/// through the runtime's shape-checked reader: every decision (is this
/// value exactly right, does it meet its bounds, what does an absent or
/// `null` key mean) is the runtime's, made from the same field shapes the
/// binder walks. It gives up (`None`), leaving the call to the full
/// binder, wherever the binder would have anything to change or say. The
/// tool's own part is the `match` from key to parameter.
fn invoke_fast(model: &ToolFn<'_>, list: &ParamList, finishes_now: bool) -> TokenStream {
    let p = crate::emit::private();
    let (types, values, defaults, start) = (&list.types, &list.values, &list.defaults, &list.start);
    let names = model.model_params().map(|param| param.wire_name());
    let positions = 0..model.model_params().count();
    let start = if finishes_now {
        quote!(#p::start_now(__scope, #start))
    } else {
        quote!(#start)
    };
    quote! {
        #[allow(unused_variables)]
        fn invoke_fast(
            &self,
            __arguments: &#p::Arguments<'_>,
            __scope: &#p::CallScope<'_>,
        ) -> #p::Option<#p::ToolFuture> {
            fn __index(__key: &str) -> #p::Option<usize> {
                match __key {
                    #(#names => #p::Some(#positions),)*
                    _ => #p::None,
                }
            }
            let #p::Some(#values) = #p::read_params::<#types>(
                <Self as #p::Tool>::definition(self), __arguments, __scope, __index, #defaults,
            ) else {
                return #p::None;
            };
            #p::Some(#start)
        }
    }
}

/// Turns `__returned` into a `ToolOutput`: `Err(e)` is an error with `e`'s
/// message; a value is read by `IntoToolOutput` if it has it, else as JSON.
fn output_conversion(model: &ToolFn<'_>) -> TokenStream {
    let p = crate::emit::private();
    let (returns_result, value_ty, error_checked) = match &model.item.sig.output {
        syn::ReturnType::Type(_, ty) => match crate::emit::result_ok_type(ty) {
            Some(ok) => (true, Some(ok), crate::emit::result_err_type(ty).is_some()),
            None => (false, Some(&**ty), false),
        },
        syn::ReturnType::Default => (false, None, false),
    };
    let read = |value: TokenStream| {
        let check = value_ty.and_then(|ty| opaque_return_check(model, ty, &value));
        quote!({ #check (&&&#p::OutputOf::new(#value)).__tool_output() })
    };
    if returns_result {
        let ok = read(quote!(__value));
        // An error type the assertions check (see `assert::error_type`) is
        // read so that one without `Display` gets no second error here.
        let err = if error_checked {
            quote!((&&#p::ErrorOf::new(__error)).__error_output())
        } else {
            quote!(#p::error_output(__error))
        };
        quote! {
            match __returned {
                #p::Ok(__value) => #ok,
                #p::Err(__error) => #err,
            }
        }
    } else {
        read(quote!(__returned))
    }
}

/// The return-type check for a type that cannot be written (`impl Trait`),
/// read from the value itself and spanned at the type: the assertions
/// before the generated code can only name written types, and without it
/// an `impl Display` return would compile and fail at every call.
fn opaque_return_check(model: &ToolFn<'_>, ty: &syn::Type, value: &TokenStream) -> Option<TokenStream> {
    if !crate::ast::contains_impl_trait(ty) {
        return None;
    }
    let p = crate::emit::private();
    let probe = quote!(#p::output_probe(&#value));
    Some(crate::assert::return_type_check(model, probe, ty))
}

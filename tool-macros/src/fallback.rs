//! What `#[tool]` emits when the input is wrong: the user's function as
//! written (without `#[param]`), every error, and a stub of the generated
//! struct so uses of it do not drown the real errors in follow-on ones.

use proc_macro2::TokenStream;
use quote::quote;

use crate::ast::ToolFn;
use crate::emit::{stripped_fn, struct_item};

pub fn tool(model: &ToolFn<'_>, errors: TokenStream) -> TokenStream {
    let rt = &model.rt;
    let function = stripped_fn(model.item);
    // A method sits in an `impl` block, where no struct can be emitted; a
    // function whose name gives no struct name has none to stub.
    let ident = match model.struct_ident() {
        Some(ident) if !model.has_receiver() => ident,
        _ => return quote!(#errors #function),
    };
    let struct_item = struct_item(model, &ident);
    quote! {
        #errors
        #function
        #struct_item

        impl #rt::__private::Tool for #ident {
            fn definition(&self) -> &#rt::__private::ToolDefinition {
                ::core::unimplemented!("the #[tool] attribute reported errors")
            }

            fn invoke(
                &self,
                _: #rt::__private::BoundArguments,
                _: &#rt::__private::CallScope<'_>,
            ) -> ::core::result::Result<#rt::__private::ToolFuture, ::std::vec::Vec<#rt::__private::CallError>> {
                ::core::unimplemented!("the #[tool] attribute reported errors")
            }
        }
    }
}

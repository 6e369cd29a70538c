//! Generated code reaches everything through absolute paths: a crate that
//! shadows `serde`, `serde_json`, `tool_runtime` and the prelude's names
//! still compiles a `#[tool]` and a `#[derive(ToolParam)]`.

#![allow(dead_code, non_camel_case_types)]

mod serde {}
mod serde_json {}
mod tool_runtime {}
mod core {}
mod std {}

// Shadow the prelude.
struct Option;
struct Result;
struct Some;
struct None;
struct Ok;
struct Err;
struct Box;
struct Vec;
struct String;
trait Into {}

// Names generated code might bind: a pattern `Some(value)` would match
// against this constant instead of binding.
#[allow(non_upper_case_globals)]
const value: u32 = 7;
#[allow(non_upper_case_globals)]
const state: u32 = 7;
#[allow(non_upper_case_globals)]
const f: u32 = 7;
trait Default {}
trait Clone {}

use ::tool_runtime::{ToolParam, tool};

/// How to sort.
#[derive(::serde::Deserialize, ::serde::Serialize, ToolParam)]
#[serde(crate = "::serde")]
enum Order {
    /// Smallest first.
    Ascending,
    /// Largest first.
    Descending,
}

/// Sort some numbers.
#[tool]
async fn sort_numbers(
    #[param(description = "The numbers")] numbers: ::std::vec::Vec<i64>,
    #[param(description = "The order", default = Order::Ascending)] order: Order,
    #[param(description = "A label", default = "sorted")] label: ::std::string::String,
    #[param(description = "A limit")] limit: ::core::option::Option<u32>,
) -> ::core::result::Result<::std::string::String, ::tool_runtime::ToolError> {
    let mut numbers = numbers;
    numbers.sort();
    if let Order::Descending = order {
        numbers.reverse();
    }
    let limit = limit.map_or(numbers.len(), |l| l as usize);
    ::core::result::Result::Ok(::std::format!("{label}: {:?}", &numbers[..limit.min(numbers.len())]))
}

#[test]
fn a_tool_compiles_and_runs_with_shadowed_names() {
    let runtime = ::tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    runtime.block_on(async {
        let mut registry = ::tool_runtime::ToolRegistry::new();
        registry.register(SortNumbers).unwrap();
        let result = registry
            .call(
                "sort_numbers",
                ::serde_json::json!({"numbers": [3, 1, 2], "order": "Descending"}),
            )
            .await;
        ::core::assert_eq!(result.text(), "sorted: [3, 2, 1]");
    });
}

#[test]
fn the_tool_struct_is_a_plain_copyable_value() {
    fn traits<T: ::core::clone::Clone + ::core::marker::Copy + ::core::default::Default + ::core::fmt::Debug>(
        t: T,
    ) -> T {
        t
    }
    let tool = traits(SortNumbers);
    let copied = tool;
    ::core::assert_eq!(
        ::std::format!("{:?} {:?}", tool, <SortNumbers as ::core::default::Default>::default()),
        "SortNumbers SortNumbers"
    );
    ::core::assert_eq!(::std::format!("{copied:?}"), "SortNumbers");
}

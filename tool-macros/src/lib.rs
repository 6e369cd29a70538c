//! Procedural macros for `tool-runtime`: `#[tool]` and `#[derive(ToolParam)]`.
//!
//! Depend on `tool-runtime`, which re-exports both; its documentation
//! describes them. This crate only converts token streams: the logic lives in
//! ordinary functions over `proc_macro2::TokenStream` so unit tests can call it.
//!
//! - `ast`: the borrowed model of a `#[tool]` function
//! - `attr`: parsing `#[tool(...)]` and `#[param(...)]`
//! - `docs`: descriptions from doc comments
//! - `valid`: the rules, each error spanned at its token; `ctxt` collects them
//! - `assert`: spanned trait assertions emitted around the generated code
//! - `expand`: code generation of the definition; `invoke`: of the dispatcher;
//!   `fallback`: what is emitted on error; `emit`: the pieces all three
//!   emit (the function as written, the unit struct, defaults, bounds)
//! - `place`: whether the function sits in an `impl` block (read from its file)
//! - `derive`, `case`: `#[derive(ToolParam)]` and serde's rename rules

#![forbid(unsafe_code)]

mod assert;
mod ast;
mod attr;
mod case;
mod ctxt;
mod derive;
mod docs;
mod emit;
mod expand;
mod fallback;
mod invoke;
mod place;
mod valid;

use proc_macro::TokenStream;

/// Turns an `async fn` (or a plain `fn`) into a tool.
///
/// The function stays as written and callable. Beside it, `#[tool]` adds a
/// unit struct named after it in UpperCamelCase (`search_files` ->
/// `SearchFiles`; a name that would start with a digit keeps one leading
/// `_`: `_3d_view` -> `_3dView`) that implements `tool_runtime::Tool`:
/// register it with `ToolRegistry::register`.
///
/// ```text
/// /// Search the workspace for files whose path matches a glob pattern.
/// #[tool]
/// async fn search_files(
///     #[param(description = "Glob pattern such as `**/*.rs`")] pattern: String,
///     #[param(description = "Largest number of paths", default = 100, min = 1)] max_results: u32,
///     #[param(description = "Only below this folder")] root: Option<String>,
///     ctx: ToolContext,          // injected, not in the schema
///     db: State<Pool>,           // injected shared state, not in the schema
/// ) -> Result<Vec<String>, ToolError>
/// ```
///
/// `#[tool(...)]` keys:
///
/// | key | effect |
/// |---|---|
/// | `name = "..."` | the wire name (`^[a-zA-Z0-9_-]{1,64}$`), when not the function's |
/// | `description = "..."` | instead of the doc comment |
/// | `strict` | bind this tool's arguments strictly (no coercion) |
/// | `sequential` | never run beside another call |
/// | `tags = ["a", "b"]` | for choosing subsets of tools |
/// | `title`, `read_only`, `destructive`, `idempotent`, `open_world` | MCP annotations |
/// | `crate = path` | the runtime crate's path when it is renamed |
///
/// `#[param(...)]` keys: `description`; `default` (`Default::default()`) or
/// `default = EXPR`; `rename = "..."`; and the bounds `min`, `max`,
/// `min_length`, `max_length`, `pattern`, `min_items`, `max_items`, which
/// appear in the schema and are enforced. A parameter's description may
/// instead come from a `# Arguments` list in the doc comment
/// (`` * `name` - text ``).
///
/// Misuse is a compile error pointing at the offending token: a missing
/// description, an invalid name (a tool's, or a parameter's wire name, which
/// must match `^[a-zA-Z0-9_.-]{1,64}$`), an unknown key, a default on an `Option`,
/// a bound that does not fit its type, a default outside its own bounds
/// (`#[param(default, min = 1)]` too: `Default::default()` is 0), a
/// `# Arguments` entry one slip from a parameter it does not name, generics or `impl Trait`,
/// `self`, an `unsafe fn`, a function name whose struct would hide a
/// prelude type or value (`fn result` -> `Result`), a pattern parameter, a type that is no
/// tool parameter,
/// two parameters with one wire name, an associated function in an `impl`
/// block (a tool is a free function; this is read from the source file),
/// `#[cfg]` on a parameter (gate the whole tool instead), a doc comment
/// written by a macro (`#[doc = include_str!(...)]`: use
/// `#[tool(description = "...")]`), a plain `fn` returning a future, a
/// return type that is neither `Serialize` nor `IntoToolOutput` (an `impl
/// Trait` too), and an error type `E` of `Result<T, E>` without `Display`.
/// A `Result` behind a type alias is read as one: `Err(e)` is an error.
#[proc_macro_attribute]
pub fn tool(args: TokenStream, item: TokenStream) -> TokenStream {
    // The function's source file, to see whether it sits in an `impl` block.
    let source = |span: proc_macro2::Span| place::file_index(span.unwrap().local_file()?);
    expand::tool(args.into(), item.into(), source).into()
}

/// Implements `tool_runtime::ToolParam` for a struct with named fields, a
/// one-field newtype, or an enum of unit variants, so it can be a tool
/// parameter. Derive `serde::Deserialize` beside it.
///
/// ```text
/// /// A range of lines.
/// #[derive(Deserialize, ToolParam)]
/// #[serde(rename_all = "camelCase", deny_unknown_fields)]
/// struct Window {
///     /// The first line.
///     #[param(min = 1)]
///     start_line: u32,
///     /// The last line; the end of the file when absent.
///     end_line: Option<u32>,
/// }
/// ```
///
/// Every field needs a description (its doc comment, or
/// `#[param(description = "...")]`); as for `#[tool]`, a doc comment's
/// description is its text before the first heading (`# Examples`), and a
/// doc written by a macro (`#[doc = include_str!(...)]`) is an error.
/// Fields take the bound keys of `#[param]`, and so does a newtype's single
/// field (`struct Percent(#[param(max = 100)] u8);`). Names, defaults and skipped
/// fields follow serde's `rename`, `rename_all`, `default` and `skip`
/// attributes; a field's wire name must match `^[a-zA-Z0-9_.-]{1,64}$`, and
/// two fields (or two variants) serde reads under one name are an error; a
/// serde default is shown in the schema as `"default"` when it serializes.
/// `#[serde(transparent)]` on a struct of one field reads and describes it
/// as that field's value, as a newtype is. serde attributes that make serde
/// read another shape than the fields (`flatten`, `alias`, `transparent`
/// on any other struct, `from`, `try_from`, `into`, `with`,
/// `deserialize_with`, `untagged` on a variant) are compile errors, as is a
/// `#[param]` key that would have no effect. With
/// `deny_unknown_fields`, a tool taking the type keeps its typed fast path.
/// An enum's variants' doc comments are added to its description, by wire
/// name (`Priority of the task. low: Only when idle; high: First`).
/// On the type, `#[param(crate = path)]` names a renamed runtime crate.
#[proc_macro_derive(ToolParam, attributes(param))]
pub fn derive_tool_param(input: TokenStream) -> TokenStream {
    derive::tool_param(input.into()).into()
}

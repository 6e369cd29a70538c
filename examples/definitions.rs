//! Prints the example tools' definitions as a request would carry them.
//!
//! ```text
//! cargo run --example definitions -- --format openai-chat --strict
//! cargo run --example definitions -- --format gemini --tags files
//! cargo run --example definitions -- --format mcp --lint
//! ```
//!
//! `--format` is one of `anthropic`, `openai-chat`, `openai-responses`,
//! `gemini`, `mcp`; `--strict` picks the strict variant (Anthropic and
//! OpenAI); `--tags a,b` and `--only name,name` choose a subset; `--lint`
//! prints the registry lint's findings to stderr.

#[path = "shared/tools.rs"]
mod tools;

use std::process::ExitCode;

use tool_runtime::format::{Format, Selection};

const USAGE: &str = "usage: definitions --format anthropic|openai-chat|openai-responses|gemini|mcp [--strict] [--tags a,b] [--only name,name] [--lint]";

fn main() -> ExitCode {
    let mut format = None;
    let mut strict = false;
    let mut lint = false;
    let mut selection = Selection::all();
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--format" => format = args.next(),
            "--strict" => strict = true,
            "--lint" => lint = true,
            "--tags" => selection = selection.with_tags(split(args.next())),
            "--only" => selection = selection.allow(split(args.next())),
            "--help" | "-h" => {
                println!("{USAGE}");
                return ExitCode::SUCCESS;
            }
            other => {
                eprintln!("unknown argument `{other}`\n{USAGE}");
                return ExitCode::FAILURE;
            }
        }
    }
    let Some(name) = format else {
        eprintln!("{USAGE}");
        return ExitCode::FAILURE;
    };
    let Some(format) = Format::from_name(&name, strict) else {
        let why = if strict { " (or it has no strict variant)" } else { "" };
        eprintln!("unknown format `{name}`{why}\n{USAGE}");
        return ExitCode::FAILURE;
    };

    let registry = tools::registry();
    let definitions = registry.definitions(format, &selection);
    println!(
        "{}",
        serde_json::to_string_pretty(&definitions).expect("JSON values serialize")
    );
    if lint {
        for finding in registry.lint(&selection) {
            eprintln!("lint: {finding}");
        }
    }
    ExitCode::SUCCESS
}

fn split(list: Option<String>) -> Vec<String> {
    list.unwrap_or_default()
        .split(',')
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .map(str::to_owned)
        .collect()
}

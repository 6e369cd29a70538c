//! The REPL over the example tools: `cargo run --example repl`. A scripted
//! model answers chat lines unless `--provider` or `--base-url` is given
//! (the `agent` example's options, but no prompt: type it at the REPL's).
//! The model is asked to stream its answers unless `--no-stream` is given.
//! Pipe a session in, or type one.

#[path = "shared/cli.rs"]
mod cli;
#[path = "shared/tools.rs"]
mod tools;

use std::process::ExitCode;

use tool_runtime::agent::repl::Repl;

#[tokio::main]
async fn main() -> ExitCode {
    let command = cli::Command {
        name: "repl",
        prompt: false,
        stream: true,
    };
    let options = match cli::Options::parse(&command) {
        Ok(options) => options,
        Err(message) => {
            eprintln!("{message}");
            return ExitCode::from(2);
        }
    };
    let repl = Repl::new(tools::registry()).max_turns(options.max_turns);
    let repl = match options.model() {
        Ok(Some(model)) => repl.model(model),
        Ok(None) => repl.model(cli::scripted("your question")),
        Err(message) => {
            eprintln!("{message}");
            return ExitCode::from(2);
        }
    };
    if let Err(error) = repl.run_stdio().await {
        eprintln!("{error}");
        return ExitCode::FAILURE;
    }
    ExitCode::SUCCESS
}

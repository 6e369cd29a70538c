//! The REPL over the example tools: `cargo run --example repl`. A scripted
//! model answers chat lines unless `--provider` or `--base-url` is given
//! (same options as the `agent` example). Pipe a session in, or type one.

#[path = "shared/cli.rs"]
mod cli;
#[path = "shared/tools.rs"]
mod tools;

use tool_runtime::agent::repl::Repl;

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let options = cli::Options::parse()?;
    let repl = Repl::new(tools::registry()).max_turns(options.max_turns);
    let repl = match options.model()? {
        Some(model) => repl.model(model),
        None => repl.model(cli::scripted("your question")),
    };
    repl.run_stdio().await?;
    Ok(())
}

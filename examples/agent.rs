//! The agent loop over the example tools.
//!
//! Offline, with a scripted model: `cargo run --example agent -- "What does main.rs print?"`.
//! Against an API or a compatible server (vLLM, Ollama, LM Studio, a gateway):
//! `cargo run --example agent -- --provider openai --base-url http://localhost:11434/v1 --model llama3.1 --stream "PROMPT"`
//! (the key from `ANTHROPIC_API_KEY` / `OPENAI_API_KEY`).

#[path = "shared/cli.rs"]
mod cli;
#[path = "shared/terminal.rs"]
mod terminal;
#[path = "shared/tools.rs"]
mod tools;

use std::io::Write as _;
use std::process::ExitCode;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use tool_runtime::agent::{Agent, AgentEvent, StopReason};
use tool_runtime::model::Model;

#[tokio::main]
async fn main() -> ExitCode {
    let command = cli::Command {
        name: "agent",
        prompt: true,
        stream: false,
    };
    let options = match cli::Options::parse(&command) {
        Ok(options) => options,
        Err(message) => {
            eprintln!("{message}");
            return ExitCode::from(2);
        }
    };
    let prompt = if options.prompt.is_empty() {
        "Which files are in the workspace, and what does main.rs print?".to_owned()
    } else {
        options.prompt.join(" ")
    };
    let model: Arc<dyn Model> = match options.model() {
        Ok(Some(model)) => model,
        Ok(None) => Arc::new(cli::scripted(&prompt)),
        Err(message) => {
            eprintln!("{message}");
            return ExitCode::from(2);
        }
    };
    let agent = Agent::new(model, tools::registry())
        .max_turns(options.max_turns)
        .notice(|info| Some(format!("(turn {} of {})", info.turn, info.max_turns)))
        .on_event(print_event);
    let outcome = agent.run(prompt).await;
    if !AT_LINE_START.load(Ordering::Relaxed) {
        println!();
    }
    println!(
        "-- stopped: {}; {} turns; tokens: {} in, {} out",
        outcome.stop, outcome.turns, outcome.usage.input_tokens, outcome.usage.output_tokens
    );
    if let Some(error) = outcome.error {
        eprintln!("{error}");
        return ExitCode::FAILURE;
    }
    if outcome.stop == StopReason::Cancelled {
        return ExitCode::FAILURE;
    }
    ExitCode::SUCCESS
}

/// Whether the last thing printed ended its line.
static AT_LINE_START: AtomicBool = AtomicBool::new(true);

/// Prints what happens in the run as it happens. The model's text, the
/// tools' names and arguments, and what the tools answer are printed with
/// their control characters escaped: none can steer the terminal.
fn print_event(event: &AgentEvent) {
    let mut out = std::io::stdout().lock();
    if let AgentEvent::Text(text) = event {
        let text = terminal::escaped(text);
        let _ = write!(out, "{text}");
        AT_LINE_START.store(text.ends_with('\n'), Ordering::Relaxed);
        let _ = out.flush();
        return;
    }
    if !matches!(
        event,
        AgentEvent::ToolCallStarted { .. } | AgentEvent::ToolCallFinished { .. } | AgentEvent::TurnFinished { .. }
    ) {
        return;
    }
    if !AT_LINE_START.swap(true, Ordering::Relaxed) {
        let _ = writeln!(out);
    }
    let _ = match event {
        AgentEvent::ToolCallStarted { name, arguments, .. } => writeln!(
            out,
            "[calling {} {}]",
            terminal::escaped(name),
            terminal::escaped(&arguments.to_string())
        ),
        AgentEvent::ToolCallFinished {
            name,
            duration,
            is_error,
            warnings,
            text,
            ..
        } => {
            let status = if *is_error { "failed" } else { "done" };
            let preview: String = text.chars().take(120).collect::<String>().replace('\n', " ");
            let warned = if warnings.is_empty() {
                String::new()
            } else {
                format!(", warnings: {}", warnings.join(", "))
            };
            writeln!(
                out,
                "[{} {status} in {duration:?}{warned}] {}",
                terminal::escaped(name),
                terminal::escaped(&preview)
            )
        }
        _ => Ok(()),
    };
    let _ = out.flush();
}

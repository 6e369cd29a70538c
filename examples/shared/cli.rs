//! What the `agent` and `repl` examples share: their command line and the
//! model it picks (a scripted one unless a provider or base URL is given).

use std::sync::Arc;

use serde_json::json;
use tool_runtime::model::anthropic::Anthropic;
use tool_runtime::model::openai::OpenAi;
use tool_runtime::model::{Block, Model, ModelResponse, ModelStop, Scripted, ToolUse, Usage};

pub struct Options {
    pub provider: Option<String>,
    pub base_url: Option<String>,
    pub model: Option<String>,
    pub stream: bool,
    pub max_turns: usize,
    /// Sent to OpenAI-compatible servers only when given (some reject
    /// `max_tokens`); Anthropic requires one (4096 unless given).
    pub max_tokens: Option<u32>,
    pub system: Option<String>,
    pub prompt: Vec<String>,
}

/// The example that reads the command line, and what it takes there.
pub struct Command {
    /// Its name, for the usage line.
    pub name: &'static str,
    /// Whether words that are no option make up a prompt (the `agent`'s),
    /// or are refused (the `repl` reads its prompts from standard input).
    pub prompt: bool,
    /// Whether the model is asked to stream unless `--no-stream` is given.
    pub stream: bool,
}

impl Command {
    /// What `--help` prints, and any mistake on the command line after its
    /// message.
    pub fn usage(&self) -> String {
        let prompt = if self.prompt { " [PROMPT...]" } else { "" };
        let stream = if self.stream {
            "The model streams its answer unless --no-stream is given."
        } else {
            "The model streams its answer only with --stream."
        };
        format!(
            "usage: {} [--provider anthropic|openai] [--base-url URL] [--model NAME] [--stream|--no-stream] \
[--max-turns N] [--max-tokens N] [--system TEXT]{prompt}
{stream} The API key comes from ANTHROPIC_API_KEY or OPENAI_API_KEY. \
Without --provider or --base-url a scripted model answers.",
            self.name
        )
    }
}

impl Options {
    /// The options on the command line, or a message saying what is wrong
    /// with them (the usage, for `--help`).
    pub fn parse(command: &Command) -> Result<Options, String> {
        let usage = command.usage();
        let mut options = Options {
            provider: None,
            base_url: None,
            model: None,
            stream: command.stream,
            max_turns: 25,
            max_tokens: None,
            system: None,
            prompt: Vec::new(),
        };
        let mut args = std::env::args().skip(1);
        while let Some(arg) = args.next() {
            let mut value = |name: &str| args.next().ok_or_else(|| format!("{name} needs a value\n{usage}"));
            match arg.as_str() {
                "--provider" => options.provider = Some(value("--provider")?),
                "--base-url" => options.base_url = Some(value("--base-url")?),
                "--model" => options.model = Some(value("--model")?),
                "--system" => options.system = Some(value("--system")?),
                "--stream" => options.stream = true,
                "--no-stream" => options.stream = false,
                "--max-turns" => {
                    options.max_turns = value("--max-turns")?.parse().map_err(|e| format!("--max-turns: {e}"))?
                }
                "--max-tokens" => {
                    let tokens = value("--max-tokens")?;
                    options.max_tokens = Some(tokens.parse().map_err(|e| format!("--max-tokens: {e}"))?);
                }
                "-h" | "--help" => return Err(usage),
                "--" => options.prompt.extend(args.by_ref()),
                flag if flag.starts_with("--") => return Err(format!("unknown option {flag}\n{usage}")),
                _ => options.prompt.push(arg),
            }
        }
        if let Some(word) = options.prompt.first().filter(|_| !command.prompt) {
            return Err(format!(
                "{} takes no prompt (`{word}`): type it once it runs\n{usage}",
                command.name
            ));
        }
        Ok(options)
    }

    /// The model the options name; `None` for the scripted one.
    pub fn model(&self) -> Result<Option<Arc<dyn Model>>, String> {
        if self.provider.is_none() && self.base_url.is_none() {
            return Ok(None);
        }
        let system = self.system.clone().unwrap_or_else(|| {
            "You help with a small code workspace. Use the tools to look at files before answering.".to_owned()
        });
        Ok(Some(match self.provider.as_deref().unwrap_or("anthropic") {
            "anthropic" => {
                let mut model = Anthropic::new(self.model.clone().unwrap_or_else(|| "claude-sonnet-4-5".into()))
                    .max_tokens(self.max_tokens.unwrap_or(4096))
                    .system(system)
                    .streaming(self.stream);
                if let Some(url) = &self.base_url {
                    model = model.base_url(url);
                }
                Arc::new(model)
            }
            "openai" => {
                let mut model = OpenAi::new(self.model.clone().unwrap_or_else(|| "gpt-4.1".into()))
                    .system(system)
                    .streaming(self.stream);
                if let Some(tokens) = self.max_tokens {
                    model = model.max_tokens(tokens);
                }
                if let Some(url) = &self.base_url {
                    model = model.base_url(url);
                }
                Arc::new(model)
            }
            other => return Err(format!("unknown provider `{other}`: anthropic or openai")),
        }))
    }
}

/// A model that answers offline the way a real one might: it searches, reads
/// a misspelt path, corrects itself, then answers `prompt`. Repeats its
/// answer once the script is done.
pub fn scripted(prompt: &str) -> Scripted {
    let call = |id: &str, name: &str, input| Block::ToolUse(ToolUse::new(id, name, input));
    let text = |text: &str| Block::Text { text: text.to_owned() };
    Scripted::new([
        ModelResponse::new(
            vec![
                text("Let me look at the workspace first."),
                call(
                    "toolu_01",
                    "search_files",
                    json!({"pattern": "**/*.rs", "max_results": "5"}),
                ),
                call("toolu_02", "read_file", json!({"path": "app/src/mian.rs"})),
            ],
            ModelStop::ToolUse,
        )
        .with_usage(Usage::new(1200, 80)),
        ModelResponse::new(
            vec![
                text("That path was misspelt; reading the right one."),
                call("toolu_03", "read_file", json!({"path": "app/src/main.rs"})),
            ],
            ModelStop::ToolUse,
        )
        .with_usage(Usage::new(1400, 40)),
        ModelResponse::new(
            vec![text(&format!(
                "The workspace has two Rust files; `app/src/main.rs` prints \"hello\". \
                 (A scripted answer to: {prompt})"
            ))],
            ModelStop::EndTurn,
        )
        .with_usage(Usage::new(1500, 60)),
    ])
    .repeat_last()
}

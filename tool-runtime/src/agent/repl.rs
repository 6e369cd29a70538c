//! A terminal REPL for people writing tools: list the tools, show a schema,
//! call a tool with JSON typed at the prompt, and chat with a model through
//! the agent loop.
//!
//! ```no_run
//! # async fn demo(registry: tool_runtime::ToolRegistry) -> std::io::Result<()> {
//! tool_runtime::agent::repl::Repl::new(registry).run_stdio().await
//! # }
//! ```
//!
//! Commands: `/tools [FORMAT [strict]]`, `/schema NAME`, `/call NAME {json}`,
//! `/reset`, `/help`, `/quit`. A line is a command when its first word is a
//! slash and letters (`/tools`); an unknown one is refused, so a misspelt
//! command never reaches the model. Any other line is a chat message, one
//! that starts with a path (`/etc/hosts looks wrong`) included, and a line
//! that starts with `//` is sent with one slash less (`//help` sends
//! `/help`). A line is at most 2 MiB of UTF-8; a longer one, or one that is
//! no UTF-8, is refused with a message and the session goes on.
//!
//! The model's text is shown as it streams, with its control characters
//! other than newline and tab escaped (`\u{1b}`), as a tool's output is: the
//! model cannot steer the terminal.
//!
//! Ctrl-C stops what is running, a chat (its tools are cancelled and the
//! conversation stays valid, so the next line goes on from it) or a
//! `/call`, and the prompt comes back; at the prompt it ends the session.
//! [`Repl::run_stdio`] reads Ctrl-C itself; any other run is given its
//! presses with [`Repl::interrupt`].

use std::borrow::Cow;
use std::io::{self, IsTerminal as _};
use std::sync::Arc;
use std::time::Duration;

use serde_json::Value;
use tokio::io::{AsyncBufRead, AsyncBufReadExt as _, AsyncWrite, AsyncWriteExt as _, BufReader};
use tokio::sync::{Notify, mpsc};

use super::{Agent, AgentEvent, StopReason};
use crate::format::Format;
use crate::model::{Block, Message, Model, Role};
use crate::text::{breaks_text, clip, clip_at};
use crate::{Cancellation, ToolCall, ToolRegistry};

/// The most characters of a call's arguments or result shown as it runs.
const PREVIEW_CHARS: usize = 200;

/// The longest line read: more than a call's largest arguments (1 MiB by
/// default), written as JSON text.
const MAX_LINE_BYTES: usize = 2 << 20;

const HELP: &str = "\
Commands:
  /tools [FORMAT [strict]]  list the tools, or their definitions in a format
                            (anthropic, openai-chat, openai-responses, gemini, mcp)
  /schema NAME              show a tool's input schema
  /call NAME {json}         call a tool: bound arguments, warnings, errors, result
  /reset                    forget the conversation
  /help                     this text
  /quit                     leave
A line whose first word is a slash and letters is a command; an unknown one
is refused. Any other line is sent to the model, which may call the tools
(a line such as `/etc/hosts looks wrong` too); start a line with // to send
it with one slash less (//help sends /help).
";

/// The REPL: a registry, and optionally a model to chat with.
pub struct Repl {
    registry: Arc<ToolRegistry>,
    model: Option<Arc<dyn Model>>,
    max_turns: usize,
    prompt: Option<bool>,
    interrupt: Option<Interrupt>,
}

/// Ctrl-C for a REPL: each [`press`](Interrupt::press) stops the chat or
/// call running, or, at the prompt, ends the session. A press made while
/// nothing waits for one is kept for the next wait.
#[derive(Clone, Debug, Default)]
pub struct Interrupt(Arc<Notify>);

impl Interrupt {
    /// An interrupt not yet pressed.
    pub fn new() -> Self {
        Self::default()
    }

    /// Presses it once.
    pub fn press(&self) {
        self.0.notify_one();
    }
}

/// Waits for a press of `interrupt`; never ends without one.
async fn pressed(interrupt: Option<&Interrupt>) {
    match interrupt {
        Some(interrupt) => interrupt.0.notified().await,
        None => std::future::pending().await,
    }
}

/// Turns each Ctrl-C into a press of `interrupt` until dropped.
struct CtrlC(tokio::task::JoinHandle<()>);

impl CtrlC {
    fn forward_to(interrupt: Interrupt) -> Self {
        CtrlC(tokio::spawn(async move {
            while tokio::signal::ctrl_c().await.is_ok() {
                interrupt.press();
            }
        }))
    }
}

impl Drop for CtrlC {
    fn drop(&mut self) {
        self.0.abort();
    }
}

impl std::fmt::Debug for Repl {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Repl")
            .field("registry", &self.registry)
            .field("has_model", &self.model.is_some())
            .finish_non_exhaustive()
    }
}

impl Repl {
    /// A REPL over these tools, with no model (chat lines are refused).
    pub fn new(registry: impl Into<Arc<ToolRegistry>>) -> Self {
        Repl {
            registry: registry.into(),
            model: None,
            max_turns: 25,
            prompt: None,
            interrupt: None,
        }
    }

    /// The model plain lines chat with.
    pub fn model(mut self, model: impl Model + 'static) -> Self {
        self.model = Some(Arc::new(model));
        self
    }

    /// The most turns one chat line may take.
    pub fn max_turns(mut self, turns: usize) -> Self {
        self.max_turns = turns;
        self
    }

    /// Whether to print a `> ` prompt (default: when standard input is a
    /// terminal, for [`run_stdio`](Repl::run_stdio); never for [`run`](Repl::run)).
    pub fn prompt(mut self, on: bool) -> Self {
        self.prompt = Some(on);
        self
    }

    /// The presses that stop a running chat or call, or at the prompt end
    /// the session, as Ctrl-C does for [`run_stdio`](Repl::run_stdio).
    pub fn interrupt(mut self, interrupt: Interrupt) -> Self {
        self.interrupt = Some(interrupt);
        self
    }

    /// Runs on standard input and output until end of input, `/quit`, or
    /// Ctrl-C at the prompt. Unless an [`interrupt`](Repl::interrupt) was
    /// given, Ctrl-C is read from the process while the REPL runs; as with
    /// any use of `tokio::signal::ctrl_c`, the process then keeps Tokio's
    /// handler for SIGINT, so a later Ctrl-C no longer ends it by itself.
    pub async fn run_stdio(mut self) -> io::Result<()> {
        if self.prompt.is_none() {
            self.prompt = Some(io::stdin().is_terminal());
        }
        let _ctrl_c = match &self.interrupt {
            Some(_) => None,
            None => {
                let interrupt = Interrupt::new();
                self.interrupt = Some(interrupt.clone());
                Some(CtrlC::forward_to(interrupt))
            }
        };
        self.run(BufReader::new(tokio::io::stdin()), tokio::io::stdout()).await
    }

    /// Runs on any input and output (a piped session, a test).
    pub async fn run<R, W>(self, input: R, mut output: W) -> io::Result<()>
    where
        R: AsyncBufRead + Unpin,
        W: AsyncWrite + Unpin,
    {
        let mut lines = Lines {
            input,
            line: Vec::new(),
            discarding: false,
        };
        let mut transcript: Vec<Message> = Vec::new();
        let prompt = self.prompt.unwrap_or(false);
        let names = self.registry.names();
        let mut greeting = format!("{} tools: {}. /help for commands.\n", names.len(), names.join(", "));
        if self.model.is_none() {
            greeting.push_str("No model: chat is off; /tools, /schema and /call work.\n");
        }
        output.write_all(greeting.as_bytes()).await?;
        loop {
            if prompt {
                output.write_all(b"> ").await?;
            }
            output.flush().await?;
            let line = tokio::select! {
                line = lines.next() => line?,
                () = pressed(self.interrupt.as_ref()) => {
                    output.write_all(b"\n").await?;
                    break;
                }
            };
            let line = match line {
                Line::End => break,
                Line::Text(line) => line,
                Line::TooLong => {
                    let text = format!("The line is longer than {} bytes and was left out.\n", MAX_LINE_BYTES);
                    output.write_all(text.as_bytes()).await?;
                    continue;
                }
                Line::NotUtf8 => {
                    output
                        .write_all(b"The line is not UTF-8 text and was left out.\n")
                        .await?;
                    continue;
                }
            };
            let line = line.trim();
            if line.is_empty() {
                continue;
            }
            let (command, rest) = match line.split_once(char::is_whitespace) {
                Some((command, rest)) => (command, rest.trim()),
                None => (line, ""),
            };
            let text = match command {
                "/quit" | "/exit" => break,
                "/help" => HELP.to_owned(),
                "/tools" => self.tools(rest),
                "/schema" => self.schema(rest),
                "/call" => self.call(rest).await,
                "/reset" => {
                    transcript.clear();
                    "The conversation is forgotten.\n".to_owned()
                }
                _ if is_command_word(command) => {
                    format!("Unknown command `{}`. /help lists them.\n", clip(command))
                }
                _ => {
                    // `//` sends the line with one slash less.
                    let message = line
                        .strip_prefix('/')
                        .filter(|rest| rest.starts_with('/'))
                        .unwrap_or(line);
                    transcript = self.chat(std::mem::take(&mut transcript), message, &mut output).await?;
                    continue;
                }
            };
            // Tool results, descriptions and schemas (a mounted server's
            // among them) are shown with control characters escaped.
            output.write_all(terminal_text(&text).as_bytes()).await?;
        }
        output.flush().await
    }

    fn tools(&self, rest: &str) -> String {
        let mut words = rest.split_whitespace();
        let Some(name) = words.next() else {
            let mut text = String::new();
            for tool in self.registry.tools() {
                let definition = tool.definition();
                let summary = definition.description().lines().next().unwrap_or_default();
                text.push_str(&format!("{:<20} {summary}\n", definition.name()));
            }
            return text;
        };
        let strict = words.next() == Some("strict");
        let Some(format) = Format::from_name(name, strict) else {
            return format!(
                "Unknown format `{rest}`: anthropic, openai-chat, openai-responses, gemini or mcp, optionally followed by `strict`.\n"
            );
        };
        let definitions = self.registry.definitions(format, &crate::format::Selection::all());
        pretty(&definitions)
    }

    fn schema(&self, name: &str) -> String {
        match self.registry.get(name) {
            Some(tool) => pretty(tool.definition().input_schema()),
            None => format!("There is no tool named `{}`.\n", clip(name)),
        }
    }

    async fn call(&self, rest: &str) -> String {
        let (name, arguments) = match rest.split_once(char::is_whitespace) {
            Some((name, arguments)) => (name, arguments.trim()),
            None => (rest, "{}"),
        };
        if name.is_empty() {
            return "Usage: /call NAME {json}\n".to_owned();
        }
        let mut text = String::new();
        match self.registry.complete(name, arguments) {
            Ok(completion) => {
                text.push_str(&format!("arguments: {}\n", Value::Object(completion.arguments)));
                for warning in &completion.warnings {
                    text.push_str(&format!("warning: {warning}\n"));
                }
                for error in &completion.errors {
                    text.push_str(&format!("error: {error}\n"));
                }
                for missing in &completion.missing {
                    text.push_str(&format!("missing: {missing}\n"));
                }
            }
            Err(error) => text.push_str(&format!("error: {error}\n")),
        }
        let started = tokio::time::Instant::now();
        let cancellation = Cancellation::new();
        let call = ToolCall::new(name, arguments);
        let result = self.registry.call_cancellable(call, &cancellation);
        tokio::pin!(result);
        let result = loop {
            tokio::select! {
                result = &mut result => break result,
                () = pressed(self.interrupt.as_ref()) => cancellation.cancel(),
            }
        };
        let status = if super::adapter::is_error(&result) {
            "error"
        } else {
            "ok"
        };
        text.push_str(&format!(
            "result ({status}, {}):\n{}\n",
            duration(started.elapsed()),
            super::adapter::text(&result)
        ));
        text
    }

    async fn chat<W: AsyncWrite + Unpin>(
        &self,
        mut transcript: Vec<Message>,
        line: &str,
        output: &mut W,
    ) -> io::Result<Vec<Message>> {
        let Some(model) = &self.model else {
            output
                .write_all(b"No model is configured; start the REPL with one to chat.\n")
                .await?;
            return Ok(transcript);
        };
        let (sender, mut events) = mpsc::unbounded_channel();
        let agent = Agent::new(model.clone(), self.registry.clone())
            .max_turns(self.max_turns)
            .on_event(move |event| {
                let _ = sender.send(event.clone());
            });
        match transcript.last_mut() {
            // The model never answered the last message (its call failed,
            // or was stopped): the line joins it, as servers that want
            // turns to alternate require, after any results in it.
            Some(last) if last.role == Role::User => last.content.push(Block::Text { text: line.to_owned() }),
            _ => transcript.push(Message::user(line)),
        }
        let cancellation = Cancellation::new();
        let run = agent.run_cancellable(transcript, &cancellation);
        tokio::pin!(run);
        let mut at_line_start = true;
        let outcome = loop {
            tokio::select! {
                outcome = &mut run => break outcome,
                Some(event) = events.recv() => show(&event, output, &mut at_line_start).await?,
                () = pressed(self.interrupt.as_ref()) => cancellation.cancel(),
            }
        };
        while let Ok(event) = events.try_recv() {
            show(&event, output, &mut at_line_start).await?;
        }
        if !at_line_start {
            output.write_all(b"\n").await?;
        }
        if outcome.stop != StopReason::EndTurn {
            let mut text = format!("[stopped: {}]\n", outcome.stop);
            if let Some(error) = &outcome.error {
                text = format!("[stopped: {error}]\n");
            }
            output.write_all(text.as_bytes()).await?;
        }
        Ok(outcome.transcript)
    }
}

/// One line read from the input.
enum Line {
    Text(String),
    TooLong,
    NotUtf8,
    End,
}

/// The input's lines, each read within [`MAX_LINE_BYTES`]: a longer line
/// is skipped to its end without being kept.
struct Lines<R> {
    input: R,
    line: Vec<u8>,
    discarding: bool,
}

impl<R: AsyncBufRead + Unpin> Lines<R> {
    async fn next(&mut self) -> io::Result<Line> {
        loop {
            let available = self.input.fill_buf().await?;
            if available.is_empty() {
                // The end; a last line without a newline still counts.
                if self.line.is_empty() && !self.discarding {
                    return Ok(Line::End);
                }
                return Ok(self.take());
            }
            let (chunk, ended) = match available.iter().position(|&b| b == b'\n') {
                Some(at) => (&available[..at], true),
                None => (available, false),
            };
            if !self.discarding {
                if self.line.len() + chunk.len() > MAX_LINE_BYTES {
                    self.discarding = true;
                    self.line = Vec::new();
                } else {
                    self.line.extend_from_slice(chunk);
                }
            }
            let used = chunk.len() + usize::from(ended);
            self.input.consume(used);
            if ended {
                return Ok(self.take());
            }
        }
    }

    /// The line read so far, as what it turned out to be.
    fn take(&mut self) -> Line {
        if std::mem::take(&mut self.discarding) {
            return Line::TooLong;
        }
        match String::from_utf8(std::mem::take(&mut self.line)) {
            Ok(text) => Line::Text(text),
            Err(_) => Line::NotUtf8,
        }
    }
}

/// Whether a line's first word makes it a command: a slash, then letters.
fn is_command_word(word: &str) -> bool {
    word.strip_prefix('/')
        .is_some_and(|name| !name.is_empty() && name.bytes().all(|b| b.is_ascii_alphabetic()))
}

/// The model's text as the terminal gets it: newlines and tabs kept, every
/// other control character escaped as in a tool's output (`\u{1b}`), so
/// the model can neither clear the screen nor rewrite what was shown.
fn terminal_text(text: &str) -> Cow<'_, str> {
    if !text.contains(|c: char| breaks_text(c) && c != '\n' && c != '\t') {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len());
    for piece in text.split_inclusive(['\n', '\t']) {
        let (body, end) = match piece.strip_suffix(['\n', '\t']) {
            Some(body) => (body, &piece[body.len()..]),
            None => (piece, ""),
        };
        // Never cut: at most as many characters as bytes.
        out.push_str(&clip_at(body, body.len()));
        out.push_str(end);
    }
    Cow::Owned(out)
}

async fn show<W: AsyncWrite + Unpin>(event: &AgentEvent, output: &mut W, at_line_start: &mut bool) -> io::Result<()> {
    let text = match event {
        AgentEvent::Text(text) => {
            let text = terminal_text(text);
            output.write_all(text.as_bytes()).await?;
            output.flush().await?;
            *at_line_start = text.ends_with('\n');
            return Ok(());
        }
        // The model's name and arguments, and the tool's text, are shown
        // cut and with control characters escaped: none can run long or
        // steer the terminal.
        AgentEvent::ToolCallStarted { name, arguments, .. } => {
            format!(
                "[calling {} {}]\n",
                clip(name),
                clip_at(&arguments.to_string(), PREVIEW_CHARS)
            )
        }
        AgentEvent::ToolCallFinished {
            name,
            duration: took,
            is_error,
            warnings,
            text,
            ..
        } => {
            let status = if *is_error { "failed" } else { "done" };
            let mut line = format!("[{} {status} in {}", clip(name), duration(*took));
            if !warnings.is_empty() {
                line.push_str(&format!(", warnings: {}", warnings.join(", ")));
            }
            line.push_str(&format!("] {}\n", clip_at(text, PREVIEW_CHARS)));
            line
        }
        _ => return Ok(()),
    };
    if !*at_line_start {
        output.write_all(b"\n").await?;
    }
    output.write_all(text.as_bytes()).await?;
    *at_line_start = true;
    output.flush().await
}

fn duration(took: Duration) -> String {
    if took < Duration::from_millis(10) {
        format!("{}us", took.as_micros())
    } else {
        format!("{}ms", took.as_millis())
    }
}

fn pretty<T: serde::Serialize + ?Sized>(value: &T) -> String {
    let mut text = serde_json::to_string_pretty(value).unwrap_or_default();
    text.push('\n');
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_command_is_a_slash_and_letters() {
        for word in ["/tools", "/quit", "/nope"] {
            assert!(is_command_word(word), "{word}");
        }
        for word in ["/etc/hosts", "/2", "/", "//help", "tools", "/café"] {
            assert!(!is_command_word(word), "{word}");
        }
    }

    #[test]
    fn terminal_text_keeps_lines_and_tabs_and_escapes_the_rest() {
        assert!(matches!(terminal_text("plain\n\ttext"), Cow::Borrowed(_)));
        assert_eq!(terminal_text("a\x1b[2Jb\r\n\tc\u{9b}"), "a\\u{1b}[2Jb\\r\n\tc\\u{9b}");
        assert_eq!(terminal_text("\x07\n\n\x07"), "\\u{7}\n\n\\u{7}");
        assert_eq!(
            terminal_text("a\u{202e}b"),
            "a\\u{202e}b",
            "a bidi override reorders the line"
        );
    }
}

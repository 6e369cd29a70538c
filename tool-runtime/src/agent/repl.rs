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
//! A press counts only while the REPL waits for one: a press made while a
//! stopped chat's last words are printed is dropped, not kept to end the
//! next prompt as soon as it shows. [`Repl::run_stdio`] reads Ctrl-C
//! itself; any other run is given its presses with [`Repl::interrupt`].
//!
//! Arguments to `/call` may go on over several lines: while they are JSON
//! that ended early (`/call add {`), each next line is added under a `.. `
//! prompt until they parse or fail in some other way. An empty line or
//! Ctrl-C gives the call up; all the lines together are held to the same
//! 2 MiB as one line.

use std::borrow::Cow;
use std::future::Future;
use std::io::{self, IsTerminal as _};
use std::sync::Arc;
use std::time::Duration;

use serde_json::Value;
use tokio::io::{AsyncBufRead, AsyncBufReadExt as _, AsyncWrite, AsyncWriteExt as _};
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

/// Up to this length a `/call`'s open arguments are parsed again at each
/// line; a longer text only when its brackets close or it has doubled, so
/// that a long paste costs time in proportion to its length.
const REPARSE_BYTES: usize = 64 << 10;

const HELP: &str = "\
Commands:
  /tools [FORMAT [strict]]  list the tools, or their definitions in a format
                            (anthropic, openai-chat, openai-responses, gemini, mcp)
  /schema NAME              show a tool's input schema
  /call NAME {json}         call a tool: bound arguments, warnings, errors, result;
                            JSON left open goes on over the next lines (`.. `),
                            and an empty line or Ctrl-C gives the call up
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
/// call running, or, at the prompt, ends the session. A press counts only
/// while the REPL waits for one (from the moment it shows a prompt, or
/// starts a chat or a call); one made in between is dropped.
#[derive(Clone, Debug, Default)]
pub struct Interrupt(Arc<Notify>);

impl Interrupt {
    /// An interrupt not yet pressed.
    pub fn new() -> Self {
        Self::default()
    }

    /// Presses it once.
    pub fn press(&self) {
        // No permit is kept: a stray press must not end the next prompt.
        self.0.notify_waiters();
    }
}

/// A wait for a press of `interrupt` that counts every press from the
/// moment it is made, before it is first polled too; never ends without
/// one.
fn press_wait(interrupt: Option<&Interrupt>) -> impl Future<Output = ()> + '_ {
    let notified = interrupt.map(|interrupt| interrupt.0.notified());
    async move {
        match notified {
            Some(notified) => notified.await,
            None => std::future::pending().await,
        }
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

    /// Whether to print a `> ` prompt, and `.. ` for a `/call`'s further
    /// lines (default: when standard input is a terminal, for
    /// [`run_stdio`](Repl::run_stdio); never for [`run`](Repl::run)).
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
    ///
    /// Standard input is read on a thread of its own (`repl-stdin`), which
    /// nothing waits for: a read of it cannot be cancelled, and one on
    /// Tokio's blocking pool would keep the runtime, and so the process,
    /// from ending after Ctrl-C until Enter is pressed. Once the session
    /// is over that thread may still wait for a line; it takes the next
    /// one and drops it, and then ends.
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
        let input = StdinLines::spawn()?;
        self.session(input, tokio::io::stdout()).await
    }

    /// Runs on any input and output (a piped session, a test).
    pub async fn run<R, W>(self, input: R, output: W) -> io::Result<()>
    where
        R: AsyncBufRead + Unpin,
        W: AsyncWrite + Unpin,
    {
        let input = Lines {
            input,
            buffer: LineBuffer::default(),
        };
        self.session(input, output).await
    }

    /// The session itself, on lines from anywhere.
    async fn session<S, W>(self, mut input: S, mut output: W) -> io::Result<()>
    where
        S: LineSource,
        W: AsyncWrite + Unpin,
    {
        let mut transcript: Vec<Message> = Vec::new();
        let names = self.registry.names();
        let mut greeting = format!("{} tools: {}. /help for commands.\n", names.len(), names.join(", "));
        if self.model.is_none() {
            greeting.push_str("No model: chat is off; /tools, /schema and /call work.\n");
        }
        output.write_all(greeting.as_bytes()).await?;
        loop {
            let line = match self.read(&mut input, &mut output, "> ").await? {
                None => {
                    output.write_all(b"\n").await?;
                    break;
                }
                Some(Line::End) => break,
                Some(Line::Text(line)) => line,
                Some(refused) => {
                    output.write_all(refusal(&refused).as_bytes()).await?;
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
                "/call" => self.call_command(rest, &mut input, &mut output).await?,
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

    /// Shows `prompt` (when prompts are on) and waits for the next line;
    /// `None` when Ctrl-C was pressed instead.
    async fn read<S, W>(&self, input: &mut S, output: &mut W, prompt: &str) -> io::Result<Option<Line>>
    where
        S: LineSource,
        W: AsyncWrite + Unpin,
    {
        // Made before the prompt shows, so any press once it shows counts,
        // and none from before it.
        let pressed = press_wait(self.interrupt.as_ref());
        if self.prompt.unwrap_or(false) {
            output.write_all(prompt.as_bytes()).await?;
        }
        output.flush().await?;
        tokio::select! {
            line = input.next_line() => line.map(Some),
            () = pressed => Ok(None),
        }
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

    /// `/call NAME {json}`: reads the rest of arguments left open, then
    /// makes the call; the text to show.
    async fn call_command<S, W>(&self, rest: &str, input: &mut S, output: &mut W) -> io::Result<String>
    where
        S: LineSource,
        W: AsyncWrite + Unpin,
    {
        let (name, arguments) = match rest.split_once(char::is_whitespace) {
            Some((name, arguments)) => (name, arguments.trim()),
            None => (rest, "{}"),
        };
        if name.is_empty() {
            return Ok("Usage: /call NAME {json}\n".to_owned());
        }
        let mut open = OpenArguments::new(arguments);
        while open.is_open() {
            let line = match self.read(input, output, ".. ").await? {
                None => return Ok("\nThe call was given up.\n".to_owned()),
                // What was read is called as it is: the error says what
                // is missing.
                Some(Line::End) => break,
                Some(Line::Text(line)) if line.trim().is_empty() => {
                    return Ok("The call was given up.\n".to_owned());
                }
                Some(Line::Text(line)) => line,
                Some(refused) => return Ok(format!("{}The call was given up.\n", refusal(&refused))),
            };
            open.push(&line);
        }
        match open.text() {
            Some(arguments) => Ok(self.call(name, arguments).await),
            None => Ok(format!(
                "The call's arguments are longer than {MAX_LINE_BYTES} bytes and were left out.\n"
            )),
        }
    }

    async fn call(&self, name: &str, arguments: &str) -> String {
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
        let pressed = press_wait(self.interrupt.as_ref());
        let call = ToolCall::new(name, arguments);
        let result = self.registry.call_cancellable(call, &cancellation);
        tokio::pin!(result);
        let result = tokio::select! {
            result = &mut result => result,
            () = pressed => {
                cancellation.cancel();
                result.await
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
        // One wait for the whole chat: a press while its text is being
        // written out counts as well.
        let pressed = press_wait(self.interrupt.as_ref());
        tokio::pin!(pressed);
        let mut stopping = false;
        let run = agent.run_cancellable(transcript, &cancellation);
        tokio::pin!(run);
        let mut at_line_start = true;
        let outcome = loop {
            tokio::select! {
                outcome = &mut run => break outcome,
                Some(event) = events.recv() => show(&event, output, &mut at_line_start).await?,
                () = &mut pressed, if !stopping => {
                    stopping = true;
                    cancellation.cancel();
                }
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
#[derive(Debug, PartialEq)]
enum Line {
    Text(String),
    TooLong,
    NotUtf8,
    End,
}

/// What the session says of a line it refused to read.
fn refusal(line: &Line) -> String {
    match line {
        Line::TooLong => format!("The line is longer than {MAX_LINE_BYTES} bytes and was left out.\n"),
        Line::NotUtf8 => "The line is not UTF-8 text and was left out.\n".to_owned(),
        Line::Text(_) | Line::End => String::new(),
    }
}

/// Where a session's lines come from. Dropping a wait for the next line
/// loses nothing: the next wait picks up where it stopped.
trait LineSource {
    /// The next line; [`Line::End`] once the input ended, and from then on.
    async fn next_line(&mut self) -> io::Result<Line>;
}

/// A line being read, held within [`MAX_LINE_BYTES`]: the rest of a
/// longer line is skipped as it comes, not kept. Both readers feed one,
/// the one over any input ([`Lines`]) and the one on standard input's
/// thread ([`next_line_blocking`]), so a line is read the same in both.
#[derive(Default)]
struct LineBuffer {
    line: Vec<u8>,
    discarding: bool,
}

impl LineBuffer {
    /// Takes `available` up to and with its first newline: how many bytes
    /// it used, and whether they ended the line.
    fn push(&mut self, available: &[u8]) -> (usize, bool) {
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
        (chunk.len() + usize::from(ended), ended)
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

    /// What the end of the input makes of the line read so far: a last
    /// line without a newline still counts.
    fn end(&mut self) -> Line {
        if self.line.is_empty() && !self.discarding {
            Line::End
        } else {
            self.take()
        }
    }
}

/// The lines of any input, read as they are asked for.
struct Lines<R> {
    input: R,
    buffer: LineBuffer,
}

impl<R: AsyncBufRead + Unpin> LineSource for Lines<R> {
    async fn next_line(&mut self) -> io::Result<Line> {
        loop {
            let available = self.input.fill_buf().await?;
            if available.is_empty() {
                return Ok(self.buffer.end());
            }
            let (used, ended) = self.buffer.push(available);
            self.input.consume(used);
            if ended {
                return Ok(self.buffer.take());
            }
        }
    }
}

/// [`Lines::next_line`] on input that blocks, for standard input's thread.
fn next_line_blocking(input: &mut impl io::BufRead, buffer: &mut LineBuffer) -> io::Result<Line> {
    loop {
        let available = match input.fill_buf() {
            Ok(available) => available,
            Err(error) if error.kind() == io::ErrorKind::Interrupted => continue,
            Err(error) => return Err(error),
        };
        if available.is_empty() {
            return Ok(buffer.end());
        }
        let (used, ended) = buffer.push(available);
        input.consume(used);
        if ended {
            return Ok(buffer.take());
        }
    }
}

/// Standard input's lines, read on a thread of their own that nothing
/// waits for (see [`Repl::run_stdio`]), one line ahead of the session.
struct StdinLines(mpsc::Receiver<io::Result<Line>>);

impl StdinLines {
    fn spawn() -> io::Result<Self> {
        let (sender, receiver) = mpsc::channel(1);
        std::thread::Builder::new()
            .name("repl-stdin".to_owned())
            .spawn(move || {
                let mut buffer = LineBuffer::default();
                loop {
                    // Locked a line at a time, so that once the session is
                    // over the lock is let go with the line it was reading.
                    let line = next_line_blocking(&mut io::stdin().lock(), &mut buffer);
                    let last = matches!(line, Ok(Line::End) | Err(_));
                    if sender.blocking_send(line).is_err() || last {
                        return;
                    }
                }
            })?;
        Ok(StdinLines(receiver))
    }
}

impl LineSource for StdinLines {
    async fn next_line(&mut self) -> io::Result<Line> {
        // The thread has ended after the end or an error.
        self.0.recv().await.unwrap_or(Ok(Line::End))
    }
}

/// A `/call`'s arguments as they come in over lines: the text, and where
/// the JSON could end (brackets still open, a string not yet closed),
/// which tells when a long text is worth parsing again. Past
/// [`MAX_LINE_BYTES`] the text is dropped, and the lines that follow are
/// only followed to the JSON's end, so the rest of a paste too long to
/// call is not read as lines of its own.
struct OpenArguments {
    text: String,
    too_long: bool,
    depth: i64,
    in_string: bool,
    escaped: bool,
    /// The text's length when it was last parsed.
    parsed: usize,
}

impl OpenArguments {
    fn new(first: &str) -> Self {
        let mut open = OpenArguments {
            text: String::new(),
            too_long: false,
            depth: 0,
            in_string: false,
            escaped: false,
            parsed: 0,
        };
        open.follow(first);
        open.text.push_str(first);
        open
    }

    /// Adds a line.
    fn push(&mut self, line: &str) {
        self.follow("\n");
        self.follow(line);
        if self.too_long || self.text.len() + 1 + line.len() > MAX_LINE_BYTES {
            self.too_long = true;
            self.text = String::new();
        } else {
            self.text.push('\n');
            self.text.push_str(line);
        }
    }

    /// Keeps count of brackets and strings over `more`.
    fn follow(&mut self, more: &str) {
        for b in more.bytes() {
            if self.in_string {
                match b {
                    _ if self.escaped => self.escaped = false,
                    b'\\' => self.escaped = true,
                    b'"' => self.in_string = false,
                    _ => {}
                }
            } else {
                match b {
                    b'"' => self.in_string = true,
                    b'{' | b'[' => self.depth += 1,
                    b'}' | b']' => self.depth -= 1,
                    _ => {}
                }
            }
        }
    }

    /// Whether the JSON ended early, so that more lines may finish it.
    fn is_open(&mut self) -> bool {
        let closed = self.depth <= 0 && !self.in_string;
        if self.too_long {
            return !closed;
        }
        if !closed && self.text.len() > REPARSE_BYTES && self.text.len() < 2 * self.parsed {
            return true;
        }
        self.parsed = self.text.len();
        serde_json::from_str::<serde::de::IgnoredAny>(&self.text).is_err_and(|error| error.is_eof())
    }

    /// The arguments, unless they were too long.
    fn text(&self) -> Option<&str> {
        (!self.too_long).then_some(self.text.as_str())
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

    /// The reader over any input and the one on standard input's thread
    /// make the same lines of the same bytes, in small reads or large.
    #[tokio::test]
    async fn both_readers_read_the_same_lines() {
        let mut input = b"plain\r\n\xff\xfe\n".to_vec();
        input.extend(std::iter::repeat_n(b'x', MAX_LINE_BYTES + 1));
        input.extend_from_slice(b"\n\n");
        input.extend(std::iter::repeat_n(b'y', MAX_LINE_BYTES));
        input.extend_from_slice(b"\nlast");
        let expected = [
            Line::Text("plain\r".into()),
            Line::NotUtf8,
            Line::TooLong,
            Line::Text(String::new()),
            Line::Text("y".repeat(MAX_LINE_BYTES)),
            Line::Text("last".into()),
            Line::End,
            Line::End,
        ];
        for capacity in [1000, 64 << 10] {
            let mut lines = Lines {
                input: tokio::io::BufReader::with_capacity(capacity, input.as_slice()),
                buffer: LineBuffer::default(),
            };
            let mut blocking = io::BufReader::with_capacity(capacity, input.as_slice());
            let mut buffer = LineBuffer::default();
            for expected in &expected {
                assert_eq!(&lines.next_line().await.unwrap(), expected);
                assert_eq!(&next_line_blocking(&mut blocking, &mut buffer).unwrap(), expected);
            }
        }
    }

    #[test]
    fn open_arguments_go_on_until_they_parse_or_fail_otherwise() {
        let mut open = OpenArguments::new("{\"a\": [1,");
        assert!(open.is_open());
        // Brackets and quotes inside a string are not counted.
        open.push("  2], \"b\": \"x{[\\\"\"");
        assert!(open.is_open());
        open.push("}");
        assert!(!open.is_open());
        assert_eq!(open.text(), Some("{\"a\": [1,\n  2], \"b\": \"x{[\\\"\"\n}"));
        // JSON that fails some other way is called as it is, and the
        // binder says what is wrong.
        for first in ["{\"a\": x", "{}", "{\"a\": 1}}", "[1, 2]", "\"a\nb\""] {
            assert!(!OpenArguments::new(first).is_open(), "{first}");
        }
        for first in ["{", "[", "\"open", "{\"a\": tr", "{\"a\": 1,"] {
            assert!(OpenArguments::new(first).is_open(), "{first}");
        }
    }

    /// A long paste is parsed again only when its brackets close or it has
    /// doubled, so it takes time in proportion to its length.
    #[test]
    fn a_long_paste_is_parsed_a_few_times() {
        let mut open = OpenArguments::new("[");
        let line = format!("{},", "1".repeat(999));
        let mut parses = 0;
        for _ in 0..2_000 {
            open.push(&line);
            let before = open.parsed;
            assert!(open.is_open());
            parses += usize::from(open.parsed != before);
        }
        assert!(parses < 100, "{parses} parses");
        open.push("1]");
        assert!(!open.is_open());
        assert_eq!(open.text().map(str::len), Some(1 + 2_000 * 1_001 + 3));
    }

    /// Past the limit the text is let go, and the lines that follow are
    /// only followed to where the JSON ends.
    #[test]
    fn open_arguments_past_the_limit_are_followed_to_their_end_and_dropped() {
        let mut open = OpenArguments::new("{\"a\": [");
        let long = format!("\"{}\",", "y".repeat(1 << 20));
        open.push(&long);
        open.push(&long);
        assert!(open.is_open());
        assert!(open.text.is_empty());
        open.push("\"}]\"");
        assert!(open.is_open());
        open.push("]}");
        assert!(!open.is_open());
        assert_eq!(open.text(), None);
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

//! A session piped through the REPL, as a user's binary would run it.

mod agent_support;

use std::sync::Arc;
use std::time::Duration;

use agent_support::{assert_transcript_valid, registry};
use serde_json::json;
use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _, BufReader, DuplexStream};
use tokio::sync::Notify;
use tool_runtime::agent::repl::{Interrupt, Repl};
use tool_runtime::model::{Block, ModelResponse, ModelStop, Scripted, ToolUse};
use tool_runtime::{ToolContext, tool};

const SESSION: &str = r#"/tools
/tools openai-chat
/schema add
/call add {"a": "2", "b": 3}
/call add {"a": "x"}
/call nope {}
What is 2 + 3?
/unknown
/quit
ignored after quit
"#;

#[tokio::test]
async fn a_piped_session() {
    let model = Scripted::new([
        ModelResponse::new(
            vec![
                Block::Text {
                    text: "Let me add.".into(),
                },
                Block::ToolUse(ToolUse::new("toolu_1", "add", json!({"a": 2, "b": 3}))),
            ],
            ModelStop::ToolUse,
        ),
        ModelResponse::new(
            vec![Block::Text {
                text: "2 + 3 = 5.".into(),
            }],
            ModelStop::EndTurn,
        ),
    ]);
    let mut output = Vec::new();
    Repl::new(registry())
        .model(model)
        .run(SESSION.as_bytes(), &mut output)
        .await
        .unwrap();
    let output = String::from_utf8(output).unwrap();
    println!("{output}");
    let expect = |needle: &str| assert!(output.contains(needle), "missing {needle:?} in:\n{output}");
    expect("4 tools: add, greet, broken, wait_forever. /help for commands.");
    expect("add                  Adds two integers.");
    expect("\"type\": \"function\"");
    expect("\"required\": [\n    \"a\",\n    \"b\"\n  ]");
    // Bound arguments with the coercion warned about, then the result.
    expect("arguments: {\"a\":2,\"b\":3}\nwarning: ");
    expect("result (ok, ");
    expect("):\n5\n");
    // A refused call: its errors and the text the model would read.
    expect("error: unsupported_integer_literal:a");
    expect("missing: b");
    expect("result (error, ");
    expect("There is no tool named `nope`.");
    // The chat: streamed text, the tool call as it runs, the answer.
    expect("Let me add.\n[calling add {\"a\":2,\"b\":3}]\n[add done in ");
    expect("] 5\n2 + 3 = 5.\n");
    expect("Unknown command `/unknown`.");
    assert!(!output.contains("ignored after quit"));
}

#[tokio::test]
async fn without_a_model_chat_is_refused() {
    let mut output = Vec::new();
    Repl::new(registry())
        .run("hello\n/reset\n".as_bytes(), &mut output)
        .await
        .unwrap();
    let output = String::from_utf8(output).unwrap();
    assert!(output.contains("No model is configured"), "{output}");
    assert!(output.contains("The conversation is forgotten."), "{output}");
}

#[tokio::test]
async fn odd_lines_are_refused_and_the_session_goes_on() {
    let mut input = Vec::new();
    input.extend_from_slice(b"/tools \xff\xfe\n");
    input.extend(std::iter::repeat_n(b'x', 3 << 20));
    input.extend_from_slice(b"\n/");
    input.extend(std::iter::repeat_n(b'z', 1_000));
    input.extend_from_slice(b"\r\n/schema ");
    input.extend(std::iter::repeat_n(b'q', 1_000));
    input.extend_from_slice(b"\n/call add {\"a\": 1, \"b\": 2}");
    let mut output = Vec::new();
    Repl::new(registry()).run(input.as_slice(), &mut output).await.unwrap();
    let output = String::from_utf8(output).unwrap();
    let expect = |needle: &str| assert!(output.contains(needle), "missing {needle:?} in:\n{output}");
    expect("The line is not UTF-8 text and was left out.");
    expect("The line is longer than 2097152 bytes and was left out.");
    // Echoed names are cut; the last line, without a newline, still runs.
    assert!(output.len() < 2_000, "{} bytes:\n{output}", output.len());
    expect("Unknown command `/zzzz");
    expect("There is no tool named `qqqq");
    expect("):\n3\n");
}

/// What the model sends and what a tool answers reach the terminal cut and
/// with control characters escaped: an escape sequence in a name or a
/// result cannot steer the terminal, nor a huge one flood it.
#[tokio::test]
async fn a_chat_shows_the_model_s_calls_cut_and_escaped() {
    let name = format!("\x1b[2J{}", "n".repeat(10_000));
    let model = Scripted::new([
        ModelResponse::new(
            vec![
                Block::ToolUse(ToolUse::new("t1", name, json!({"x": "y".repeat(10_000)}))),
                Block::ToolUse(ToolUse::new(
                    "t2",
                    "greet",
                    json!({"name": "\x1b]52;c;AAAA\x07 and more"}),
                )),
            ],
            ModelStop::ToolUse,
        ),
        ModelResponse::new(vec![Block::Text { text: "Done.".into() }], ModelStop::EndTurn),
    ]);
    let mut output = Vec::new();
    Repl::new(registry())
        .model(model)
        .run("Go\n/quit\n".as_bytes(), &mut output)
        .await
        .unwrap();
    let output = String::from_utf8(output).unwrap();
    assert!(!output.contains('\x1b') && !output.contains('\x07'), "{output:?}");
    assert!(output.len() < 4_000, "{} bytes", output.len());
    assert!(output.contains("[calling \\u{1b}[2J"), "{output}");
    assert!(output.contains("Hello, \\u{1b}]52;c;AAAA\\u{7} and more!"), "{output}");
}

/// The model's own text is shown as it streams, its lines and tabs kept,
/// every other control character escaped as a tool's output is: the model
/// cannot clear the screen, set the clipboard or rewrite a line.
#[tokio::test]
async fn the_model_s_text_cannot_steer_the_terminal() {
    let model = Scripted::new([ModelResponse::new(
        vec![Block::Text {
            text: "Hi\x1b[2J there\x1b]52;c;AAAA\x07\r\n\tdone\u{9b}31m".into(),
        }],
        ModelStop::EndTurn,
    )]);
    let mut output = Vec::new();
    Repl::new(registry())
        .model(model)
        .run("Go\n".as_bytes(), &mut output)
        .await
        .unwrap();
    let output = String::from_utf8(output).unwrap();
    assert!(!output.contains(['\x1b', '\x07', '\r', '\u{9b}']), "{output:?}");
    assert!(
        output.contains("Hi\\u{1b}[2J there\\u{1b}]52;c;AAAA\\u{7}\\r\n\tdone\\u{9b}31m\n"),
        "{output:?}"
    );
}

/// Only a slash and a command word make a command: a line that starts
/// with a path (`/etc/hosts ...`) or any other slash is chat, and `//`
/// sends a line that would be a command, less one slash. A misspelt
/// command is still refused rather than sent.
#[tokio::test]
async fn a_line_that_starts_with_a_slash_but_no_command_word_is_chat() {
    let reply = || ModelResponse::new(vec![Block::Text { text: "Noted.".into() }], ModelStop::EndTurn);
    let model = Arc::new(Scripted::new([reply(), reply(), reply()]));
    let mut output = Vec::new();
    Repl::new(registry())
        .model(model.clone())
        .run(
            "/etc/hosts looks wrong\n/2 + 3?\n//help me\n/tols\n/help\n".as_bytes(),
            &mut output,
        )
        .await
        .unwrap();
    let output = String::from_utf8(output).unwrap();
    let sent: Vec<String> = model
        .requests()
        .iter()
        .map(|messages| messages.last().unwrap().text())
        .collect();
    assert_eq!(sent, ["/etc/hosts looks wrong", "/2 + 3?", "/help me"], "{output}");
    assert!(output.contains("Unknown command `/tols`."), "{output}");
    assert!(
        output.contains("start a line with // to send"),
        "the help says how to send such a line: {output}"
    );
}

/// A line whose model call failed leaves the conversation at a user
/// message; the next line joins it rather than making two user messages in
/// a row, which servers whose chat templates want turns to alternate
/// refuse.
#[tokio::test]
async fn a_line_after_a_failed_model_call_joins_the_unanswered_message() {
    use tool_runtime::model::{ModelError, ModelErrorKind, Role};
    let model = Arc::new(
        Scripted::new([])
            .then_error(ModelError::new(ModelErrorKind::Authentication, "invalid x-api-key"))
            .then(ModelResponse::new(
                vec![Block::Text { text: "Noted.".into() }],
                ModelStop::EndTurn,
            )),
    );
    let mut output = Vec::new();
    Repl::new(registry())
        .model(model.clone())
        .run("First\nSecond\n".as_bytes(), &mut output)
        .await
        .unwrap();
    let output = String::from_utf8(output).unwrap();
    assert!(output.contains("invalid x-api-key"), "{output}");
    assert!(output.contains("Noted."), "{output}");
    let second = &model.requests()[1];
    assert_eq!(second.len(), 1, "{second:?}");
    assert_eq!(second[0].role, Role::User);
    let line = |text: &str| Block::Text { text: text.into() };
    assert_eq!(second[0].content, [line("First"), line("Second")]);
}

/// Raised when [`hold`] starts.
static HOLD_STARTED: Notify = Notify::const_new();

/// Holds until cancelled.
#[tool]
async fn hold(ctx: ToolContext) -> String {
    HOLD_STARTED.notify_one();
    ctx.cancellation().cancelled().await;
    "released".to_owned()
}

/// Reads the REPL's output until it holds `needle`, within a bound so a
/// broken REPL fails the test rather than hanging it.
async fn read_until(output: &mut DuplexStream, seen: &mut String, needle: &str) {
    let read = async {
        while !seen.contains(needle) {
            let mut buffer = [0; 4096];
            let n = output.read(&mut buffer).await.unwrap();
            assert!(n > 0, "the output ended without {needle:?}:\n{seen}");
            seen.push_str(&String::from_utf8_lossy(&buffer[..n]));
        }
    };
    tokio::time::timeout(Duration::from_secs(30), read)
        .await
        .unwrap_or_else(|_| panic!("no {needle:?} in:\n{seen}"));
}

/// Ctrl-C stops the chat or call that runs, not the session: the tool is
/// cancelled, the conversation stays valid and goes on with the next line;
/// at the prompt it ends the session.
#[tokio::test]
async fn an_interrupt_stops_what_runs_and_at_the_prompt_ends_the_session() {
    let mut registry = registry();
    registry.register(Hold).unwrap();
    let model = Arc::new(Scripted::new([
        ModelResponse::new(
            vec![Block::ToolUse(ToolUse::new("toolu_1", "hold", json!({})))],
            ModelStop::ToolUse,
        ),
        ModelResponse::new(
            vec![Block::Text {
                text: "Still here.".into(),
            }],
            ModelStop::EndTurn,
        ),
    ]));
    let interrupt = Interrupt::new();
    let (mut input, repl_input) = tokio::io::duplex(1 << 16);
    let (repl_output, mut output) = tokio::io::duplex(1 << 16);
    let repl = Repl::new(registry)
        .model(model.clone())
        .interrupt(interrupt.clone())
        .run(BufReader::new(repl_input), repl_output);
    let session = tokio::spawn(repl);
    let mut seen = String::new();

    let hold_started = || async {
        tokio::time::timeout(Duration::from_secs(30), HOLD_STARTED.notified())
            .await
            .expect("the tool started");
    };
    input.write_all(b"Hold on.\n").await.unwrap();
    hold_started().await;
    interrupt.press();
    read_until(&mut output, &mut seen, "[stopped: cancelled]\n").await;

    input.write_all(b"/call hold {}\n").await.unwrap();
    hold_started().await;
    interrupt.press();
    read_until(&mut output, &mut seen, "result (error, ").await;

    input.write_all(b"And now?\n").await.unwrap();
    read_until(&mut output, &mut seen, "Still here.\n").await;

    interrupt.press();
    tokio::time::timeout(Duration::from_secs(30), session)
        .await
        .expect("the session ends at an interrupt at the prompt")
        .unwrap()
        .unwrap();
    output.read_to_string(&mut seen).await.unwrap();
    // The `/call` result's text, on the line after its heading.
    let (_, called) = seen.split_once("result (error, ").unwrap();
    let called = called.lines().nth(1).unwrap_or_default();
    assert!(called.contains("was cancelled"), "the stopped call says so:\n{seen}");
    // The stopped call was answered before the next line was sent.
    let requests = model.requests();
    assert_eq!(requests.len(), 2, "{seen}");
    assert_transcript_valid(&requests[1]);
    assert_eq!(requests[1].last().unwrap().text(), "And now?", "{seen}");
}

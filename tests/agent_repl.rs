//! A session piped through the REPL, as a user's binary would run it.

mod agent_support;
#[path = "../examples/shared/tools.rs"]
mod example_tools;
#[path = "../examples/shared/terminal.rs"]
mod terminal;

use std::sync::Arc;
use std::time::Duration;

use agent_support::{assert_transcript_valid, registry};
use serde_json::json;
use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _, BufReader, DuplexStream};
use tokio::sync::Notify;
use tokio::task::JoinHandle;
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
        .prompt(true)
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
    // A press counts once the prompt shows.
    read_until(&mut output, &mut seen, "Still here.\n> ").await;

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

/// Runs `repl` on a task of its own, fed and read through pipes: the
/// REPL's input, its output, and the session.
fn spawn_session(repl: Repl) -> (DuplexStream, DuplexStream, JoinHandle<std::io::Result<()>>) {
    let (input, repl_input) = tokio::io::duplex(1 << 16);
    let (repl_output, output) = tokio::io::duplex(1 << 16);
    let session = tokio::spawn(repl.run(BufReader::new(repl_input), repl_output));
    (input, output, session)
}

/// Waits for the session to end, within a bound.
async fn ended(session: JoinHandle<std::io::Result<()>>, seen: &str) {
    tokio::time::timeout(Duration::from_secs(30), session)
        .await
        .unwrap_or_else(|_| panic!("the session did not end:\n{seen}"))
        .unwrap()
        .unwrap();
}

/// A press made while nothing waits for one (here before the session
/// starts) is dropped: it does not end the first prompt as soon as it
/// shows.
#[tokio::test]
async fn a_press_made_while_nothing_waits_is_dropped() {
    let interrupt = Interrupt::new();
    interrupt.press();
    let repl = Repl::new(registry()).prompt(true).interrupt(interrupt.clone());
    let (mut input, mut output, session) = spawn_session(repl);
    let mut seen = String::new();
    // The first prompt waits for a line rather than ending the session.
    read_until(&mut output, &mut seen, "/call work.\n> ").await;
    input.write_all(b"/call add {\"a\": 1, \"b\": 2}\n").await.unwrap();
    read_until(&mut output, &mut seen, "):\n3\n> ").await;
    drop(input);
    ended(session, &seen).await;
}

/// `/call` arguments whose JSON ended early go on over the next lines,
/// under a `.. ` prompt, until they parse or fail in another way; an empty
/// line gives the call up; at the end of the input they are called as
/// they are. No line of theirs is read as a command or a chat line.
#[tokio::test]
async fn a_call_s_json_may_go_on_over_lines() {
    let session = "/call add {\n  \"a\": 1,\n  \"b\": 2\n}\n\
                   /call add {\"a\":\n\n\
                   /call add {\"a\": 1,\n\"b\": x\n\
                   /tools\n\
                   /call add {\"a\": 4,\n";
    let mut output = Vec::new();
    Repl::new(registry())
        .prompt(true)
        .run(session.as_bytes(), &mut output)
        .await
        .unwrap();
    let output = String::from_utf8(output).unwrap();
    let expect = |needle: &str| assert!(output.contains(needle), "missing {needle:?} in:\n{output}");
    expect("> .. .. .. arguments: {\"a\":1,\"b\":2}\n");
    expect("):\n3\n");
    expect("> .. The call was given up.\n");
    // `"b": x` is no JSON: the call is made, and refused.
    expect("> .. error: ");
    expect("add                  Adds two integers.");
    assert_eq!(output.matches("result (error, ").count(), 2, "{output}");
    assert!(!output.contains("Unknown command"), "{output}");
    assert!(!output.contains("No model is configured"), "{output}");
}

/// Ctrl-C under the `.. ` prompt gives the call up, not the session.
#[tokio::test]
async fn an_interrupt_gives_up_a_call_whose_json_is_open() {
    let interrupt = Interrupt::new();
    let repl = Repl::new(registry()).prompt(true).interrupt(interrupt.clone());
    let (mut input, mut output, session) = spawn_session(repl);
    let mut seen = String::new();
    input.write_all(b"/call add {\"a\": 1,\n").await.unwrap();
    read_until(&mut output, &mut seen, "> .. ").await;
    interrupt.press();
    read_until(&mut output, &mut seen, "The call was given up.\n> ").await;
    input.write_all(b"/call add {\"a\": 1, \"b\": 2}\n").await.unwrap();
    read_until(&mut output, &mut seen, "):\n3\n> ").await;
    drop(input);
    ended(session, &seen).await;
    assert_eq!(seen.matches("result (").count(), 1, "{seen}");
}

/// Arguments over several lines are held to the line limit in all; the
/// rest of a paste too long to call is followed to its JSON's end and
/// dropped, rather than read line by line as chat.
#[tokio::test]
async fn arguments_over_lines_are_held_to_the_line_limit() {
    let mut session = "/call add {\"a\": [\n".to_owned();
    for _ in 0..3 {
        session.push_str(&format!("\"{}\",\n", "y".repeat(1 << 20)));
    }
    session.push_str("\"}]\"\n]}\n/tools\n");
    let mut output = Vec::new();
    Repl::new(registry())
        .run(session.as_bytes(), &mut output)
        .await
        .unwrap();
    let output = String::from_utf8(output).unwrap();
    assert!(output.len() < 2_000, "{} bytes:\n{output}", output.len());
    assert!(
        output.contains("The call's arguments are longer than 2097152 bytes and were left out.\n"),
        "{output}"
    );
    assert!(output.contains("add                  Adds two integers."), "{output}");
    assert!(!output.contains("No model is configured"), "{output}");
    assert!(!output.contains("result ("), "{output}");
}

/// The example tools' file search answers a pattern of many stars at once
/// (its matcher once took time exponential in them, and a tool that never
/// yields cannot be stopped), and refuses a pattern over 256 characters.
#[tokio::test]
async fn the_example_search_answers_a_pattern_of_many_stars_at_once() {
    let session = format!(
        "/call search_files {{\"pattern\": \"{}z\"}}\n/call search_files {{\"pattern\": \"{}\"}}\n",
        "**".repeat(40),
        "a".repeat(257)
    );
    let mut output = Vec::new();
    Repl::new(example_tools::registry())
        .run(session.as_bytes(), &mut output)
        .await
        .unwrap();
    let output = String::from_utf8(output).unwrap();
    let expect = |needle: &str| assert!(output.contains(needle), "missing {needle:?} in:\n{output}");
    expect("***z\"}\nresult (ok, ");
    expect("):\n[]\n");
    expect("error: out_of_range:pattern: expected a string of at most 256 characters, got 257");
}

/// The `agent` example prints the model's text as the REPL shows it:
/// control characters other than newline and tab escaped.
#[tokio::test]
async fn the_agent_example_escapes_the_model_s_text_as_the_repl_does() {
    let text = "Hi\x1b[2J there\x1b]52;c;AAAA\x07\r\n\tdone\u{9b}31m \u{202e}drow\u{2028}end";
    let model = Scripted::new([ModelResponse::new(
        vec![Block::Text { text: text.into() }],
        ModelStop::EndTurn,
    )]);
    let mut output = Vec::new();
    Repl::new(registry())
        .model(model)
        .run("Go\n".as_bytes(), &mut output)
        .await
        .unwrap();
    let output = String::from_utf8(output).unwrap();
    let escaped = terminal::escaped(text);
    assert!(
        !escaped.contains(['\x1b', '\x07', '\r', '\u{9b}', '\u{202e}', '\u{2028}']),
        "{escaped:?}"
    );
    assert!(
        output.contains(&format!("{escaped}\n")),
        "{escaped:?} not in {output:?}"
    );
    assert_eq!(terminal::escaped("plain\n\ttext"), "plain\n\ttext");
}

/// Environment variable that makes [`stdio_session`] run: set only for the
/// child process [`ctrl_c_at_the_prompt_lets_the_process_end`] starts.
const STDIO_SESSION: &str = "AGENT_REPL_STDIO_SESSION";

/// A REPL on this process's standard input and output, for
/// [`ctrl_c_at_the_prompt_lets_the_process_end`] to run in a child process.
#[tokio::test]
#[ignore = "run by ctrl_c_at_the_prompt_lets_the_process_end, in a process of its own"]
async fn stdio_session() {
    if std::env::var_os(STDIO_SESSION).is_none() {
        return;
    }
    Repl::new(registry()).prompt(true).run_stdio().await.unwrap();
}

/// Ctrl-C at the prompt of a REPL on standard input ends the session, and
/// the process ends with it while its standard input stays open: no read
/// of it is left on Tokio's blocking pool for the runtime to wait for.
#[cfg(unix)]
#[test]
fn ctrl_c_at_the_prompt_lets_the_process_end() {
    use std::io::{Read as _, Write as _};
    use std::process::{Command, Stdio};
    use std::time::Instant;

    let mut child = Command::new(std::env::current_exe().unwrap())
        .args(["stdio_session", "--exact", "--ignored", "--test-threads=1"])
        .env(STDIO_SESSION, "1")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let mut stdout = child.stdout.take().unwrap();
    let (chunks, received) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let mut buffer = [0; 4096];
        while let Ok(n @ 1..) = stdout.read(&mut buffer) {
            if chunks.send(buffer[..n].to_vec()).is_err() {
                break;
            }
        }
    });
    let mut seen = String::new();
    let mut read_until = |needle: &str| {
        while !seen.contains(needle) {
            match received.recv_timeout(Duration::from_secs(30)) {
                Ok(chunk) => seen.push_str(&String::from_utf8_lossy(&chunk)),
                Err(_) => panic!("no {needle:?} in:\n{seen}"),
            }
        }
    };
    stdin.write_all(b"/call add {\"a\": 1, \"b\": 2}\n").unwrap();
    read_until("):\n3\n> ");
    let signalled = Command::new("kill")
        .args(["-INT", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(signalled.success());
    let deadline = Instant::now() + Duration::from_secs(30);
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        if Instant::now() > deadline {
            child.kill().unwrap();
            child.wait().unwrap();
            panic!("the process did not end after Ctrl-C at the prompt");
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    // Standard input was open all along.
    drop(stdin);
    assert!(status.success(), "{status}");
}

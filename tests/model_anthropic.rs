//! The agent loop over the Anthropic client, against a loopback server that
//! answers like the Messages API.

mod agent_support;

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use agent_support::*;
use serde_json::{Value, json};
use tokio::sync::Notify;
use tool_runtime::agent::{Agent, AgentEvent, Approval, Outcome, StopReason};
use tool_runtime::model::anthropic::Anthropic;
use tool_runtime::model::{ModelErrorKind, RetryPolicy};
use tool_runtime::{Cancellation, ToolCall};

fn client(server: &Server, stream: bool) -> Anthropic {
    Anthropic::new("claude-sonnet-4-5")
        .base_url(&server.url)
        .api_key("sk-ant-test")
        .max_tokens(1024)
        .system("You are a calculator.")
        .streaming(stream)
        .retry(RetryPolicy::default().delays(Duration::from_millis(1), Duration::from_millis(5)))
}

fn two_calls() -> Value {
    anthropic_tool_use(
        "I'll do both.",
        &[
            ("toolu_01A", "add", json!({"a": 2, "b": 3})),
            ("toolu_01B", "greet", json!({"name": "Ada"})),
        ],
    )
}

/// The checks every two-call conversation shares.
fn check_two_call_conversation(server: &Server) {
    let requests = server.requests();
    assert_eq!(requests.len(), 2);
    for request in &requests {
        assert_eq!(request.path, "/v1/messages");
        assert_eq!(request.headers["x-api-key"], "sk-ant-test");
        assert_eq!(request.headers["anthropic-version"], "2023-06-01");
        assert_eq!(request.body["model"], "claude-sonnet-4-5");
        assert_eq!(request.body["max_tokens"], 1024);
        assert_eq!(request.body["system"][0]["cache_control"]["type"], "ephemeral");
        let tools = request.body["tools"].as_array().unwrap();
        let names: Vec<&str> = tools.iter().map(|t| t["name"].as_str().unwrap()).collect();
        assert_eq!(names, ["add", "greet", "broken", "wait_forever"]);
        assert!(tools[0]["input_schema"].is_object());
        assert_eq!(tools.last().unwrap()["cache_control"]["type"], "ephemeral");
        assert!(tools[..3].iter().all(|t| t.get("cache_control").is_none()));
    }
    // Byte-identical tool definitions from turn to turn (prompt caching).
    assert_eq!(
        raw_array(&requests[0].raw_body, "tools"),
        raw_array(&requests[1].raw_body, "tools")
    );
    assert_anthropic_requests(server, "sk-ant-test");

    let messages = requests[1].body["messages"].as_array().unwrap();
    assert_eq!(messages.len(), 3);
    assert_eq!(messages[1]["role"], "assistant");
    assert_eq!(messages[1]["content"][1]["type"], "tool_use");
    let answer = &messages[2];
    assert_eq!(answer["role"], "user");
    let blocks = answer["content"].as_array().unwrap();
    assert_eq!(blocks[0]["type"], "tool_result");
    assert_eq!(blocks[0]["tool_use_id"], "toolu_01A");
    assert_eq!(blocks[0]["content"][0]["text"], "5");
    assert_eq!(blocks[1]["tool_use_id"], "toolu_01B");
    assert_eq!(blocks[1]["content"][0]["text"], "Hello, Ada!");
    assert!(blocks[0].get("is_error").is_none());
    assert_eq!(blocks[2], json!({"type": "text", "text": "Turn 1 of 25."}));
    assert_eq!(blocks.len(), 3);
}

fn notice_agent(model: Anthropic) -> Agent<Anthropic> {
    Agent::new(model, registry()).notice(|info| Some(format!("Turn {} of {}.", info.turn, info.max_turns)))
}

#[tokio::test]
async fn two_tool_calls_then_end_turn() {
    let server = Server::start(
        vec![Reply::ok(two_calls()), Reply::ok(anthropic_text("5, and hello Ada."))],
        false,
    )
    .await;
    let outcome = notice_agent(client(&server, false))
        .run("Add 2 and 3, then greet Ada.")
        .await;
    assert_eq!(outcome.stop, StopReason::EndTurn, "{:?}", outcome.error);
    assert_eq!(outcome.text, "5, and hello Ada.");
    assert_eq!(outcome.turns, 2);
    assert_eq!(outcome.usage.input_tokens, 824);
    assert_eq!(outcome.usage.output_tokens, 114);
    assert_transcript_valid(&outcome.transcript);
    assert_anthropic_requests(&server, "sk-ant-test");
    check_two_call_conversation(&server);
    // The transcript serializes and comes back the same.
    let saved = serde_json::to_string(&outcome.transcript).unwrap();
    let loaded: Vec<tool_runtime::model::Message> = serde_json::from_str(&saved).unwrap();
    assert_eq!(loaded, outcome.transcript);
}

#[tokio::test]
async fn two_tool_calls_then_end_turn_streaming() {
    let server = Server::start(
        vec![
            anthropic_stream(&two_calls(), HashMap::new()),
            anthropic_stream(&anthropic_text("5, and hello Ada."), HashMap::new()),
        ],
        false,
    )
    .await;
    let events = Arc::new(Mutex::new(Vec::new()));
    let seen = events.clone();
    let agent = notice_agent(client(&server, true)).on_event(move |e| seen.lock().unwrap().push(e.clone()));
    let outcome = agent.run("Add 2 and 3, then greet Ada.").await;
    assert_eq!(outcome.stop, StopReason::EndTurn, "{:?}", outcome.error);
    assert_eq!(outcome.text, "5, and hello Ada.");
    assert_eq!(outcome.usage.output_tokens, 114);
    assert_transcript_valid(&outcome.transcript);
    assert_anthropic_requests(&server, "sk-ant-test");
    check_two_call_conversation(&server);
    assert_eq!(server.requests()[0].body["stream"], true);
    let events = events.lock().unwrap();
    let texts: String = events
        .iter()
        .filter_map(|e| match e {
            AgentEvent::Text(t) => Some(t.as_str()),
            _ => None,
        })
        .collect();
    assert_eq!(texts, "I'll do both.5, and hello Ada.");
    let finished: Vec<(&str, bool)> = events
        .iter()
        .filter_map(|e| match e {
            AgentEvent::ToolCallFinished { name, is_error, .. } => Some((name.as_str(), *is_error)),
            _ => None,
        })
        .collect();
    assert_eq!(finished.len(), 2);
    assert!(finished.contains(&("add", false)) && finished.contains(&("greet", false)));
    assert!(matches!(events[0], AgentEvent::TurnStarted { turn: 1 }));
}

#[tokio::test]
async fn overloaded_and_rate_limited_then_success() {
    let overloaded = json!({"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}});
    let limited = json!({"type": "error", "error": {"type": "rate_limit_error", "message": "Number of request tokens has exceeded your per-minute rate limit"}});
    let server = Server::start(
        vec![
            Reply::status(529, overloaded),
            Reply::status(429, limited).with_header("retry-after", "0"),
            Reply::ok(anthropic_text("Fine.")),
        ],
        false,
    )
    .await;
    let outcome = Agent::new(client(&server, false), registry()).run("Hi").await;
    assert_eq!(outcome.stop, StopReason::EndTurn, "{:?}", outcome.error);
    assert_eq!(server.requests().len(), 3);
    assert_eq!(server.requests()[0].raw_body, server.requests()[2].raw_body);
    assert_anthropic_requests(&server, "sk-ant-test");
}

#[tokio::test]
async fn errors_are_typed_with_the_api_message_and_not_retried() {
    let invalid = json!({"type": "error", "error": {"type": "invalid_request_error", "message": "messages: roles must alternate"}});
    let server = Server::start(vec![Reply::status(400, invalid)], false).await;
    let outcome = Agent::new(client(&server, false), registry()).run("Hi").await;
    assert_eq!(outcome.stop, StopReason::ModelError);
    let error = outcome.error.unwrap();
    assert_eq!(error.kind(), ModelErrorKind::InvalidRequest);
    assert_eq!(error.status(), Some(400));
    assert_eq!(error.message(), "messages: roles must alternate");
    assert_eq!(server.requests().len(), 1);
    assert_eq!(outcome.transcript.len(), 1);

    let auth = json!({"type": "error", "error": {"type": "authentication_error", "message": "invalid x-api-key"}});
    let server = Server::start(vec![Reply::status(401, auth)], false).await;
    let error = Agent::new(client(&server, false), registry())
        .run("Hi")
        .await
        .error
        .unwrap();
    assert_eq!(error.kind(), ModelErrorKind::Authentication);
    assert!(error.to_string().contains("invalid x-api-key"), "{error}");

    // Retries run out: the last status decides the kind.
    let overloaded = json!({"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}});
    let server = Server::start(vec![Reply::status(529, overloaded)], true).await;
    let model = client(&server, false).retry(
        RetryPolicy::default()
            .max_retries(2)
            .delays(Duration::ZERO, Duration::ZERO),
    );
    let error = Agent::new(model, registry()).run("Hi").await.error.unwrap();
    assert_eq!(error.kind(), ModelErrorKind::Overloaded);
    assert_eq!(server.requests().len(), 3);

    // Nobody listening: a connection error after the retries.
    let model = Anthropic::new("m").base_url("http://127.0.0.1:9").api_key("k").retry(
        RetryPolicy::default()
            .max_retries(1)
            .delays(Duration::ZERO, Duration::ZERO),
    );
    let error = Agent::new(model, registry()).run("Hi").await.error.unwrap();
    assert_eq!(error.kind(), ModelErrorKind::Connection, "{error}");
    assert!(std::error::Error::source(&error).is_some());
}

#[tokio::test]
async fn bad_arguments_then_a_corrected_call() {
    let server = Server::start(
        vec![
            Reply::ok(anthropic_tool_use(
                "Adding.",
                &[("toolu_1", "add", json!({"a": "two", "b": 3}))],
            )),
            Reply::ok(anthropic_tool_use(
                "Retrying.",
                &[("toolu_2", "add", json!({"a": 2, "b": 3}))],
            )),
            Reply::ok(anthropic_text("It is 5.")),
        ],
        false,
    )
    .await;
    let outcome = Agent::new(client(&server, false), registry()).run("2 + 3?").await;
    assert_eq!(outcome.stop, StopReason::EndTurn);
    assert_transcript_valid(&outcome.transcript);
    assert_anthropic_requests(&server, "sk-ant-test");
    let requests = server.requests();
    let refused = &requests[1].body["messages"][2]["content"][0];
    assert_eq!(refused["tool_use_id"], "toolu_1");
    assert_eq!(refused["is_error"], true);
    assert!(
        refused["content"][0]["text"]
            .as_str()
            .unwrap()
            .contains("Correct the arguments"),
        "{refused}"
    );
    let accepted = &requests[2].body["messages"][4]["content"][0];
    assert_eq!(accepted["tool_use_id"], "toolu_2");
    assert!(accepted.get("is_error").is_none());
    assert_eq!(accepted["content"][0]["text"], "5");
}

#[tokio::test]
async fn a_model_that_never_stops_hits_max_turns() {
    let server = Server::start(
        vec![Reply::ok(anthropic_tool_use(
            "Again.",
            &[("toolu_x", "add", json!({"a": 1, "b": 1}))],
        ))],
        true,
    )
    .await;
    let outcome = Agent::new(client(&server, false), registry())
        .max_turns(4)
        .run("Loop")
        .await;
    assert_eq!(outcome.stop, StopReason::MaxTurns);
    assert_eq!(outcome.turns, 4);
    assert_eq!(server.requests().len(), 4);
    // The last turn's call was answered: the transcript can continue.
    assert_eq!(outcome.transcript.len(), 9);
    assert_eq!(outcome.transcript.last().unwrap().tool_results().count(), 1);
    assert_transcript_valid(&outcome.transcript);
    assert_anthropic_requests(&server, "sk-ant-test");
}

#[tokio::test]
async fn consecutive_failures_stop_the_run() {
    let server = Server::start(
        vec![Reply::ok(anthropic_tool_use(
            "Trying.",
            &[("toolu_b", "broken", json!({}))],
        ))],
        true,
    )
    .await;
    let outcome = Agent::new(client(&server, false), registry()).run("Go").await;
    assert_eq!(
        outcome.stop,
        StopReason::ConsecutiveErrors {
            tool: "broken".into(),
            count: 3
        }
    );
    assert_eq!(outcome.turns, 3);
    assert_transcript_valid(&outcome.transcript);
    assert_anthropic_requests(&server, "sk-ant-test");
}

#[tokio::test]
async fn token_budget_stops_the_run() {
    let server = Server::start(
        vec![Reply::ok(anthropic_tool_use(
            "Again.",
            &[("toolu_x", "add", json!({"a": 1, "b": 1}))],
        ))],
        true,
    )
    .await;
    // Each turn uses 412 + 57 tokens.
    let outcome = Agent::new(client(&server, false), registry())
        .token_budget(900)
        .run("Loop")
        .await;
    assert_eq!(outcome.stop, StopReason::Budget);
    assert_eq!(outcome.turns, 2);
    assert_eq!(outcome.usage.total(), 938);
    assert_transcript_valid(&outcome.transcript);
    assert_anthropic_requests(&server, "sk-ant-test");
}

#[tokio::test]
async fn denied_and_disallowed_calls_are_answered_with_errors() {
    let server = Server::start(
        vec![
            Reply::ok(anthropic_tool_use(
                "Three things.",
                &[
                    ("toolu_1", "greet", json!({"name": "Eve"})),
                    ("toolu_2", "broken", json!({})),
                    ("toolu_3", "add", json!({"a": 1, "b": 2})),
                ],
            )),
            Reply::ok(anthropic_text("Done.")),
        ],
        false,
    )
    .await;
    let agent = Agent::new(client(&server, false), registry())
        .deny(["broken"])
        .approver(|call: &ToolCall| match call.name.as_str() {
            "greet" => Approval::Refuse("The user does not want Eve greeted.".into()),
            "add" => Approval::Modify(json!({"a": 10, "b": 20})),
            _ => Approval::Run,
        });
    let outcome = agent.run("Go").await;
    assert_eq!(outcome.stop, StopReason::EndTurn);
    assert_transcript_valid(&outcome.transcript);
    assert_anthropic_requests(&server, "sk-ant-test");
    let requests = server.requests();
    let names: Vec<&str> = requests[0].body["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["add", "greet", "wait_forever"]);
    let blocks = requests[1].body["messages"][2]["content"].as_array().unwrap().clone();
    assert_eq!(blocks[0]["is_error"], true);
    assert_eq!(blocks[0]["content"][0]["text"], "The user does not want Eve greeted.");
    assert_eq!(blocks[1]["is_error"], true);
    let text = blocks[1]["content"][0]["text"].as_str().unwrap();
    assert!(
        text.contains("`broken` is not available") && text.contains("`add`, `greet`, `wait_forever`"),
        "{text}"
    );
    // The transcript keeps the model's arguments, and the model reads the
    // ones the call was made with before the result.
    assert_eq!(
        requests[1].body["messages"][1]["content"][3]["input"],
        json!({"a": 1, "b": 2})
    );
    assert_eq!(
        blocks[2]["content"][0]["text"],
        r#"The arguments of this call were changed before it was made; it was made with {"a":10,"b":20}."#
    );
    assert_eq!(blocks[2]["content"][1]["text"], "30");
}

#[tokio::test]
async fn a_deferred_call_resumes_later() {
    let server = Server::start(
        vec![
            Reply::ok(anthropic_tool_use(
                "Two.",
                &[
                    ("toolu_1", "add", json!({"a": 1, "b": 2})),
                    ("toolu_2", "greet", json!({"name": "Bob"})),
                ],
            )),
            Reply::ok(anthropic_text("Both done.")),
        ],
        false,
    )
    .await;
    let agent = Agent::new(client(&server, false), registry())
        .approver(|call: &ToolCall| {
            if call.name == "greet" {
                Approval::Defer
            } else {
                Approval::Run
            }
        })
        .notice(|_| Some("notice".into()));
    let outcome = agent.run("Go").await;
    assert_eq!(outcome.stop, StopReason::Deferred);
    assert_eq!(server.requests().len(), 1);
    let deferred = outcome.deferred.unwrap();
    let pending: Vec<&str> = deferred.pending().map(|c| c.name.as_str()).collect();
    assert_eq!(pending, ["greet"]);
    // The state survives a save and a restart.
    let deferred: tool_runtime::agent::Deferred =
        serde_json::from_str(&serde_json::to_string(&deferred).unwrap()).unwrap();
    let call = deferred.pending().next().unwrap();
    let result = agent.run_pending(call).await;
    let outcome = agent
        .resume(outcome.transcript, deferred, [result], &Cancellation::new())
        .await
        .unwrap();
    assert_eq!(outcome.stop, StopReason::EndTurn);
    assert_eq!(outcome.text, "Both done.");
    assert_transcript_valid(&outcome.transcript);
    assert_anthropic_requests(&server, "sk-ant-test");
    let blocks = server.requests()[1].body["messages"][2]["content"]
        .as_array()
        .unwrap()
        .clone();
    assert_eq!(blocks[0]["content"][0]["text"], "3");
    assert_eq!(blocks[1]["content"][0]["text"], "Hello, Bob!");
    assert_eq!(blocks[2]["text"], "notice");
}

#[tokio::test]
async fn a_cancelled_run_leaves_a_valid_transcript() {
    let server = Server::start(
        vec![Reply::ok(anthropic_tool_use(
            "Waiting.",
            &[
                ("toolu_1", "add", json!({"a": 1, "b": 2})),
                ("toolu_2", "wait_forever", json!({})),
            ],
        ))],
        false,
    )
    .await;
    let cancellation = Cancellation::new();
    let cancel = cancellation.clone();
    let agent = Agent::new(client(&server, false), registry()).on_event(move |event| {
        if matches!(event, AgentEvent::ToolCallStarted { name, .. } if name == "wait_forever") {
            cancel.cancel();
        }
    });
    let outcome = agent
        .run_cancellable(vec![tool_runtime::model::Message::user("Go")], &cancellation)
        .await;
    assert_eq!(outcome.stop, StopReason::Cancelled);
    assert_transcript_valid(&outcome.transcript);
    assert_anthropic_requests(&server, "sk-ant-test");
    let last = outcome.transcript.last().unwrap();
    let results: Vec<_> = last.tool_results().collect();
    assert_eq!(results.len(), 2);
    assert!(results[1].is_error, "{:?}", results[1]);
    assert_eq!(server.requests().len(), 1);
}

#[tokio::test]
async fn streaming_starts_a_tool_before_the_turn_ends() {
    // The second tool_use block is held back until the first tool has
    // started (bounded at 10 s), so the marks show the order.
    let started = Arc::new(Notify::new());
    let message = anthropic_tool_use(
        "Two.",
        &[
            ("toolu_1", "add", json!({"a": 1, "b": 2})),
            ("toolu_2", "greet", json!({"name": "Cy"})),
        ],
    );
    let between = HashMap::from([(
        1,
        vec![Piece::WaitFor(started.clone()), Piece::Mark("second block sent")],
    )]);
    let server = Server::start(
        vec![
            anthropic_stream(&message, between),
            anthropic_stream(&anthropic_text("Done."), HashMap::new()),
        ],
        false,
    )
    .await;
    let order = server.marks.clone();
    let agent = Agent::new(client(&server, true), registry()).on_event(move |event| {
        if let AgentEvent::ToolCallStarted { name, .. } = event {
            order.lock().unwrap().push(format!("{name} started"));
            if name == "add" {
                started.notify_one();
            }
        }
    });
    let outcome = agent.run("Go").await;
    assert_eq!(outcome.stop, StopReason::EndTurn, "{:?}", outcome.error);
    assert_eq!(server.marks(), ["add started", "second block sent", "greet started"]);
    assert_transcript_valid(&outcome.transcript);
    assert_anthropic_requests(&server, "sk-ant-test");
}

#[tokio::test]
async fn every_option_reaches_the_request() {
    let server = Server::start(vec![Reply::ok(anthropic_text("ok"))], false).await;
    let model = Anthropic::new("claude-opus-4-1")
        .base_url(format!("{}/v1/", server.url))
        .api_key("k")
        .max_tokens(8000)
        .system("Be brief.")
        .temperature(1.0)
        .top_p(0.95)
        .top_k(50)
        .stop_sequences(["\n\nHuman:"])
        .metadata(json!({"user_id": "u-123"}))
        .thinking(2048)
        .tool_choice(tool_runtime::model::ToolChoice::Any)
        .prompt_caching(false);
    let outcome = Agent::new(model, registry()).run("Hi").await;
    assert_eq!(outcome.stop, StopReason::EndTurn, "{:?}", outcome.error);
    let request = &server.requests()[0];
    assert_eq!(request.path, "/v1/messages");
    let body = &request.body;
    assert_eq!(body["system"], "Be brief.");
    assert_eq!(body["max_tokens"], 8000);
    assert_eq!(body["temperature"], 1.0);
    assert_eq!(body["top_p"], 0.95);
    assert_eq!(body["top_k"], 50);
    assert_eq!(body["stop_sequences"], json!(["\n\nHuman:"]));
    assert_eq!(body["metadata"], json!({"user_id": "u-123"}));
    assert_eq!(body["thinking"], json!({"type": "enabled", "budget_tokens": 2048}));
    assert_eq!(body["tool_choice"], json!({"type": "any"}));
    assert!(
        body["tools"]
            .as_array()
            .unwrap()
            .iter()
            .all(|t| t.get("cache_control").is_none())
    );
    assert!(body.get("stream").is_none());
    assert_anthropic_requests(&server, "k");
}

#[tokio::test]
async fn streamed_thinking_goes_back_with_its_signature_and_stream_errors_are_typed() {
    let events = vec![
        (
            Some("message_start"),
            json!({"type": "message_start", "message": {"id": "msg_1", "type": "message", "role": "assistant", "content": [], "model": "claude", "stop_reason": null, "usage": {"input_tokens": 10, "output_tokens": 1}}}),
        ),
        (
            Some("content_block_start"),
            json!({"type": "content_block_start", "index": 0, "content_block": {"type": "thinking", "thinking": ""}}),
        ),
        (
            Some("content_block_delta"),
            json!({"type": "content_block_delta", "index": 0, "delta": {"type": "thinking_delta", "thinking": "Let me add."}}),
        ),
        (
            Some("content_block_delta"),
            json!({"type": "content_block_delta", "index": 0, "delta": {"type": "signature_delta", "signature": "EqQBCgIYAhIM"}}),
        ),
        (
            Some("content_block_stop"),
            json!({"type": "content_block_stop", "index": 0}),
        ),
        (
            Some("content_block_start"),
            json!({"type": "content_block_start", "index": 1, "content_block": {"type": "tool_use", "id": "toolu_9", "name": "add", "input": {}}}),
        ),
        (
            Some("content_block_delta"),
            json!({"type": "content_block_delta", "index": 1, "delta": {"type": "input_json_delta", "partial_json": "{\"a\": 1, \"b\""}}),
        ),
        (
            Some("content_block_delta"),
            json!({"type": "content_block_delta", "index": 1, "delta": {"type": "input_json_delta", "partial_json": ": 2}"}}),
        ),
        (
            Some("content_block_stop"),
            json!({"type": "content_block_stop", "index": 1}),
        ),
        (
            Some("message_delta"),
            json!({"type": "message_delta", "delta": {"stop_reason": "tool_use", "stop_sequence": null}, "usage": {"output_tokens": 30}}),
        ),
        (Some("message_stop"), json!({"type": "message_stop"})),
    ];
    let first = Reply::sse(events.into_iter().map(|(n, d)| (n, d.to_string())).collect());
    let overloaded = Reply::sse(vec![
        (Some("message_start"), json!({"type": "message_start", "message": {"id": "msg_2", "content": [], "usage": {"input_tokens": 5, "output_tokens": 0}}}).to_string()),
        (Some("error"), json!({"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}}).to_string()),
    ]);
    // The overloaded stream fails before anything of it was handed on: it
    // is tried again, as often as the policy says (three times), then the
    // error is typed.
    let server = Server::start(vec![first, overloaded], true).await;
    let outcome = Agent::new(client(&server, true).thinking(1024), registry())
        .run("1+2")
        .await;
    assert_eq!(outcome.stop, StopReason::ModelError);
    assert_eq!(outcome.error.as_ref().unwrap().kind(), ModelErrorKind::Overloaded);
    assert_eq!(server.requests().len(), 1 + 4);
    assert_transcript_valid(&outcome.transcript);
    assert_anthropic_requests(&server, "sk-ant-test");
    let second = &server.requests()[1].body["messages"][1];
    assert_eq!(
        second["content"][0],
        json!({"type": "thinking", "thinking": "Let me add.", "signature": "EqQBCgIYAhIM"})
    );
    assert_eq!(second["content"][1]["input"], json!({"a": 1, "b": 2}));
    assert_eq!(
        server.requests()[1].body["messages"][2]["content"][0]["content"][0]["text"],
        "3"
    );
}

/// A stream that fails after its thinking and a call it started: the
/// transcript keeps the call after that thinking, signature included, so
/// it can be sent again with thinking on.
#[tokio::test]
async fn a_stream_failing_after_a_started_call_keeps_the_thinking_before_it() {
    let events = [
        json!({"type": "message_start", "message": {"id": "msg_1", "content": [], "usage": {"input_tokens": 10, "output_tokens": 1}}}),
        json!({"type": "content_block_start", "index": 0, "content_block": {"type": "thinking", "thinking": ""}}),
        json!({"type": "content_block_delta", "index": 0, "delta": {"type": "thinking_delta", "thinking": "Let me add."}}),
        json!({"type": "content_block_delta", "index": 0, "delta": {"type": "signature_delta", "signature": "EqQBCgIYAhIM"}}),
        json!({"type": "content_block_stop", "index": 0}),
        json!({"type": "content_block_start", "index": 1, "content_block": {"type": "redacted_thinking", "data": "EmwKAhgB"}}),
        json!({"type": "content_block_stop", "index": 1}),
        json!({"type": "content_block_start", "index": 2, "content_block": {"type": "tool_use", "id": "toolu_9", "name": "add", "input": {}}}),
        json!({"type": "content_block_delta", "index": 2, "delta": {"type": "input_json_delta", "partial_json": "{\"a\": 1, \"b\": 2}"}}),
        json!({"type": "content_block_stop", "index": 2}),
        json!({"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}}),
    ];
    let stream = Reply::sse(
        events
            .iter()
            .map(|event| (event["type"].as_str(), event.to_string()))
            .collect(),
    );
    let server = Server::start(vec![stream], true).await;
    let outcome = Agent::new(client(&server, true).thinking(1024), registry())
        .run("1+2")
        .await;
    assert_eq!(outcome.stop, StopReason::ModelError);
    assert_transcript_valid(&outcome.transcript);
    let kept = serde_json::to_value(&outcome.transcript[1].content).unwrap();
    assert_eq!(
        kept[0],
        json!({"type": "thinking", "thinking": "Let me add.", "signature": "EqQBCgIYAhIM"})
    );
    assert_eq!(kept[1], json!({"type": "redacted_thinking", "data": "EmwKAhgB"}));
    assert_eq!(kept[2]["id"], "toolu_9", "{kept}");
}

#[tokio::test]
async fn a_stream_is_tried_again_only_while_nothing_of_it_was_handed_on() {
    let start = (
        Some("message_start"),
        json!({"type": "message_start", "message": {"id": "msg_1", "content": [], "usage": {"input_tokens": 5, "output_tokens": 0}}}).to_string(),
    );
    let overloaded = (
        Some("error"),
        json!({"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}}).to_string(),
    );
    let fine = || anthropic_stream(&anthropic_text("Fine."), HashMap::new());
    let server = Server::start(vec![Reply::sse(vec![start.clone(), overloaded.clone()]), fine()], false).await;
    let outcome = Agent::new(client(&server, true), registry()).run("Hi").await;
    assert_eq!(outcome.stop, StopReason::EndTurn, "{:?}", outcome.error);
    assert_eq!(outcome.text, "Fine.");
    assert_eq!(server.requests().len(), 2);

    // Once text was shown, the same failure is the caller's.
    let late = vec![
        start,
        (
            Some("content_block_start"),
            json!({"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}})
                .to_string(),
        ),
        (
            Some("content_block_delta"),
            json!({"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": "Part"}})
                .to_string(),
        ),
        overloaded,
    ];
    let server = Server::start(vec![Reply::sse(late), fine()], false).await;
    let outcome = Agent::new(client(&server, true), registry()).run("Hi").await;
    assert_eq!(outcome.error.unwrap().kind(), ModelErrorKind::Overloaded);
    assert_eq!(server.requests().len(), 1);
}

/// Some gateways answer a failure with status 200 and the API's error body,
/// even to a streamed request: it is the API's error, typed, with its
/// message, not a malformed answer.
#[tokio::test]
async fn a_failure_answered_with_status_200_is_the_api_s_typed_error() {
    let invalid = json!({"type": "error", "error": {"type": "invalid_request_error", "message": "prompt is too long"}});
    for stream in [false, true] {
        let server = Server::start(vec![Reply::ok(invalid.clone())], false).await;
        let error = Agent::new(client(&server, stream), registry())
            .run("Hi")
            .await
            .error
            .unwrap();
        assert_eq!(error.kind(), ModelErrorKind::InvalidRequest, "stream {stream}: {error}");
        assert_eq!(error.message(), "prompt is too long");
    }
}

#[tokio::test]
async fn a_successful_body_is_read_only_up_to_a_bound() {
    let huge = anthropic_text(&"a".repeat(65 << 20));
    let server = Server::start(vec![Reply::ok(huge)], false).await;
    let error = Agent::new(client(&server, false), registry())
        .run("Hi")
        .await
        .error
        .unwrap();
    assert_eq!(error.kind(), ModelErrorKind::MalformedResponse, "{error}");
    assert!(error.message().contains("larger than"), "{error}");
}

#[tokio::test]
async fn a_run_is_send_and_can_be_spawned() {
    let server = Server::start(vec![Reply::ok(anthropic_text("spawned"))], false).await;
    let agent = Arc::new(Agent::new(client(&server, false), registry()));
    let outcome = tokio::spawn(async move { agent.run("Hi").await }).await.unwrap();
    assert_eq!(outcome.text, "spawned");
}

#[tokio::test]
async fn a_server_that_never_answers_is_a_timeout() {
    // Accepts and reads, never answers; the client's read limit ends it.
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    let server = tokio::spawn(async move {
        let (socket, _) = listener.accept().await.unwrap();
        tokio::time::sleep(Duration::from_secs(30)).await;
        drop(socket);
    });
    let model = Anthropic::new("m")
        .base_url(url)
        .api_key("k")
        .timeouts(Duration::from_secs(5), Duration::from_millis(200))
        .retry(RetryPolicy::none());
    let error = Agent::new(model, registry()).run("Hi").await.error.unwrap();
    assert_eq!(error.kind(), ModelErrorKind::Timeout, "{error}");
    server.abort();
}

/// A stream of the given events (each named by its `type`), opened by
/// `message_start` and closed by `message_delta` (stopping for tool use)
/// and `message_stop`.
fn tool_use_stream(blocks: Vec<Value>) -> Reply {
    stream_stopping(blocks, "tool_use")
}

/// As [`tool_use_stream`], stopping for `stop_reason`.
fn stream_stopping(blocks: Vec<Value>, stop_reason: &str) -> Reply {
    stream_stopping_then(blocks, stop_reason, Vec::new())
}

/// As [`stream_stopping`], with `after` between the `message_delta` and the
/// `message_stop`.
fn stream_stopping_then(blocks: Vec<Value>, stop_reason: &str, after: Vec<Value>) -> Reply {
    let mut events = vec![
        json!({"type": "message_start", "message": {"id": "msg_1", "type": "message", "role": "assistant", "content": [], "usage": {"input_tokens": 10, "output_tokens": 1}}}),
    ];
    events.extend(blocks);
    events.push(json!({"type": "message_delta", "delta": {"stop_reason": stop_reason, "stop_sequence": null}, "usage": {"output_tokens": 20}}));
    events.extend(after);
    events.push(json!({"type": "message_stop"}));
    Reply::sse(
        events
            .iter()
            .map(|event| (event["type"].as_str(), event.to_string()))
            .collect(),
    )
}

/// The start, one input delta and the stop of tool_use block `index`.
fn streamed_call(index: usize, id: &str, input: &str) -> Vec<Value> {
    vec![
        json!({"type": "content_block_start", "index": index, "content_block": {"type": "tool_use", "id": id, "name": "add", "input": {}}}),
        json!({"type": "content_block_delta", "index": index, "delta": {"type": "input_json_delta", "partial_json": input}}),
        json!({"type": "content_block_stop", "index": index}),
    ]
}

/// The error a run over one model turn ends with, streamed or not.
async fn model_error(reply: Reply, stream: bool) -> tool_runtime::model::ModelError {
    let server = Server::start(vec![reply], false).await;
    let outcome = Agent::new(client(&server, stream), registry()).run("Add").await;
    assert_eq!(outcome.stop, StopReason::ModelError);
    assert_transcript_valid(&outcome.transcript);
    outcome.error.unwrap()
}

#[tokio::test]
async fn streamed_call_ids_are_checked_as_the_whole_response_s_are() {
    for (first, second, expected) in [
        ("toolu_1", "toolu_1", "`toolu_1` appears twice"),
        ("toolu_1", "", "empty id"),
    ] {
        let whole = anthropic_tool_use(
            "Adding.",
            &[
                (first, "add", json!({"a": 1, "b": 2})),
                (second, "add", json!({"a": 3, "b": 4})),
            ],
        );
        let unstreamed = model_error(Reply::ok(whole), false).await;
        let mut blocks = streamed_call(0, first, r#"{"a": 1, "b": 2}"#);
        blocks.extend(streamed_call(1, second, r#"{"a": 3, "b": 4}"#));
        let streamed = model_error(tool_use_stream(blocks), true).await;
        for error in [&unstreamed, &streamed] {
            assert_eq!(error.kind(), ModelErrorKind::MalformedResponse, "{error}");
            assert!(error.to_string().contains(expected), "{error}");
        }
        assert_eq!(streamed.to_string(), unstreamed.to_string());
    }
}

#[tokio::test]
async fn a_streamed_tool_use_block_that_never_ends_is_an_error() {
    let mut blocks = streamed_call(0, "toolu_1", r#"{"a": 1, "b": 2}"#);
    blocks.pop();
    let error = model_error(tool_use_stream(blocks), true).await;
    assert_eq!(error.kind(), ModelErrorKind::MalformedResponse, "{error}");
    assert!(error.to_string().contains("toolu_1"), "{error}");
    assert!(error.to_string().contains("content_block_stop"), "{error}");
}

/// What a hostile or odd server streams is a typed error, never a panic
/// and never a call lost: a block that is no object (its input included),
/// and a `message_start` that already holds blocks (a call among them
/// would be read by no one).
#[tokio::test]
async fn a_block_started_as_no_object_or_content_in_message_start_is_malformed() {
    for block in [json!("x"), json!(7), json!([1])] {
        let blocks = vec![
            json!({"type": "content_block_start", "index": 0, "content_block": block}),
            json!({"type": "content_block_delta", "index": 0, "delta": {"type": "input_json_delta", "partial_json": "1"}}),
            json!({"type": "content_block_stop", "index": 0}),
        ];
        let error = model_error(tool_use_stream(blocks), true).await;
        assert_eq!(error.kind(), ModelErrorKind::MalformedResponse, "{error}");
    }
    let whole = json!({"type": "message_start", "message": {"id": "msg_1", "content": [
        {"type": "tool_use", "id": "toolu_1", "name": "add", "input": {"a": 1, "b": 2}}
    ], "stop_reason": "tool_use", "usage": {"input_tokens": 1, "output_tokens": 1}}});
    let reply = Reply::sse(vec![
        (Some("message_start"), whole.to_string()),
        (Some("message_stop"), json!({"type": "message_stop"}).to_string()),
    ]);
    let error = model_error(reply, true).await;
    assert_eq!(error.kind(), ModelErrorKind::MalformedResponse, "{error}");
    assert!(error.to_string().contains("message_start"), "{error}");
}

/// An `error` event is the server's error whatever its data holds: the
/// error object bare, without the API's `{"type": "error"}` envelope, is
/// typed by its own `type` (and an overloaded server is tried again).
#[tokio::test]
async fn an_error_event_holding_the_bare_error_object_is_typed() {
    let bare = Reply::sse(vec![(
        Some("error"),
        json!({"type": "overloaded_error", "message": "Overloaded"}).to_string(),
    )]);
    let fine = anthropic_stream(&anthropic_text("Fine."), HashMap::new());
    let server = Server::start(vec![bare, fine], false).await;
    let outcome = Agent::new(client(&server, true), registry()).run("Hi").await;
    assert_eq!(outcome.stop, StopReason::EndTurn, "{:?}", outcome.error);
    assert_eq!(server.requests().len(), 2, "tried again as overloaded");

    let limited = Reply::sse(vec![(
        Some("error"),
        json!({"type": "invalid_request_error", "message": "prompt is too long"}).to_string(),
    )]);
    let error = model_error(limited, true).await;
    assert_eq!(error.kind(), ModelErrorKind::InvalidRequest, "{error}");
    assert!(error.to_string().contains("prompt is too long"), "{error}");
}

/// A thinking block sent whole in its start (as some servers send every
/// block) keeps its text and signature, which the API needs back with the
/// calls after it; a delta that repeats the signature adds nothing.
#[tokio::test]
async fn thinking_sent_whole_in_the_block_start_is_kept() {
    let mut blocks = vec![
        json!({"type": "content_block_start", "index": 0, "content_block": {"type": "thinking", "thinking": "Let me add.", "signature": "EqQBCgIYAhIM"}}),
        json!({"type": "content_block_delta", "index": 0, "delta": {"type": "signature_delta", "signature": "EqQBCgIYAhIM"}}),
        json!({"type": "content_block_stop", "index": 0}),
    ];
    blocks.extend(streamed_call(1, "toolu_1", r#"{"a": 2, "b": 3}"#));
    let (server, _) = add_streamed(blocks).await;
    let sent = &server.requests()[1].body["messages"][1]["content"][0];
    assert_eq!(
        *sent,
        json!({"type": "thinking", "thinking": "Let me add.", "signature": "EqQBCgIYAhIM"})
    );
}

/// A streamed run asked to add: the first turn streams `blocks`, the
/// second answers "5"; the run ends well, its transcript valid.
async fn add_streamed(blocks: Vec<Value>) -> (Server, Outcome) {
    let server = Server::start(
        vec![
            tool_use_stream(blocks),
            anthropic_stream(&anthropic_text("5"), HashMap::new()),
        ],
        false,
    )
    .await;
    let outcome = Agent::new(client(&server, true), registry()).run("Add 2 and 3").await;
    assert_eq!(outcome.stop, StopReason::EndTurn, "{:?}", outcome.error);
    assert_transcript_valid(&outcome.transcript);
    (server, outcome)
}

#[tokio::test]
async fn streamed_input_sent_whole_in_the_block_start_is_the_input() {
    let blocks = vec![
        json!({"type": "content_block_start", "index": 0, "content_block": {"type": "tool_use", "id": "toolu_1", "name": "add", "input": {"a": 2, "b": 3}}}),
        json!({"type": "content_block_stop", "index": 0}),
    ];
    let (server, outcome) = add_streamed(blocks).await;
    let call = outcome.transcript[1].tool_uses().next().unwrap();
    assert_eq!(call.input, json!({"a": 2, "b": 3}));
    let answer = &server.requests()[1].body["messages"][2]["content"][0];
    assert_eq!(answer["content"][0]["text"], "5", "{answer}");
    assert!(answer.get("is_error").is_none(), "{answer}");
}

/// The API ends the open block before it says the turn was cut off: a
/// tool_use cut before any of its input streamed must not start early on
/// its start's empty input (a tool of optional parameters would run on its
/// defaults). The complete call before it starts as usual. A delta of
/// usage only (`stop_reason: null`), before or after the one that says
/// why the turn stopped, changes neither.
#[tokio::test]
async fn a_call_cut_off_before_its_input_never_starts() {
    let usage_only = json!({"type": "message_delta", "delta": {"stop_reason": null, "stop_sequence": null}, "usage": {"output_tokens": 5}});
    for (stop_reason, expected) in [("max_tokens", StopReason::MaxTokens), ("refusal", StopReason::Refusal)] {
        let mut blocks = streamed_call(0, "toolu_1", r#"{"a": 2, "b": 3}"#);
        blocks.push(json!({"type": "content_block_start", "index": 1, "content_block": {"type": "tool_use", "id": "toolu_2", "name": "greet", "input": {}}}));
        blocks.push(json!({"type": "content_block_stop", "index": 1}));
        blocks.push(usage_only.clone());
        let reply = stream_stopping_then(blocks, stop_reason, vec![usage_only.clone()]);
        let server = Server::start(vec![reply], false).await;
        let started = Arc::new(Mutex::new(Vec::new()));
        let seen = started.clone();
        let outcome = Agent::new(client(&server, true), registry())
            .on_event(move |event| {
                if let AgentEvent::ToolCallStarted { id, .. } = event {
                    seen.lock().unwrap().push(id.clone());
                }
            })
            .run("Add")
            .await;
        assert_eq!(outcome.stop, expected, "{:?}", outcome.error);
        assert_eq!(*started.lock().unwrap(), ["toolu_1"], "{stop_reason}");
        assert_transcript_valid(&outcome.transcript);
        let results: Vec<_> = outcome.transcript[2].tool_results().collect();
        assert!(!results[0].is_error, "the whole call ran: {:?}", results[0]);
        assert!(
            results[1].is_error && results[1].to_text().contains(stop_reason),
            "{:?}",
            results[1]
        );
    }
}

/// The API ends the open block before it says the turn was cut off: a
/// tool_use whose input stopped mid-JSON must not start early either. Put
/// to an approver that changes its arguments it would really run; it is
/// answered as not run (cut off), as the whole, unstreamed turn answers it.
/// Input that is whole JSON yet no object, in a turn that goes on, is not
/// cut off: it starts with the next block and the binder explains it.
#[tokio::test]
async fn a_call_cut_off_mid_input_never_starts() {
    let cut = |input: &str| {
        vec![
            json!({"type": "content_block_start", "index": 1, "content_block": {"type": "tool_use", "id": "toolu_2", "name": "greet", "input": {}}}),
            json!({"type": "content_block_delta", "index": 1, "delta": {"type": "input_json_delta", "partial_json": input}}),
            json!({"type": "content_block_stop", "index": 1}),
        ]
    };
    for partial in [r#"{"name": "Ad"#, r#"{"name": "Ada""#, "{"] {
        let mut blocks = streamed_call(0, "toolu_1", r#"{"a": 2, "b": 3}"#);
        blocks.extend(cut(partial));
        let server = Server::start(vec![stream_stopping(blocks, "max_tokens")], false).await;
        let started = Arc::new(Mutex::new(Vec::new()));
        let (seen, asked) = (started.clone(), Arc::new(Mutex::new(Vec::new())));
        let approved = asked.clone();
        let outcome = Agent::new(client(&server, true), registry())
            .approver(move |call: &ToolCall| {
                approved.lock().unwrap().push(call.id.clone().unwrap_or_default());
                match call.name.as_str() {
                    "greet" => Approval::Modify(json!({"name": "Eve"})),
                    _ => Approval::Run,
                }
            })
            .on_event(move |event| {
                if let AgentEvent::ToolCallStarted { id, .. } = event {
                    seen.lock().unwrap().push(id.clone());
                }
            })
            .run("Add, then greet Ada")
            .await;
        assert_eq!(outcome.stop, StopReason::MaxTokens, "{partial}: {:?}", outcome.error);
        assert_eq!(*started.lock().unwrap(), ["toolu_1"], "{partial}");
        assert_eq!(
            *asked.lock().unwrap(),
            ["toolu_1"],
            "{partial}: the approver never saw it"
        );
        assert_eq!(server.requests().len(), 1, "{partial}: no second turn");
        assert_transcript_valid(&outcome.transcript);
        let results: Vec<_> = outcome.transcript[2].tool_results().collect();
        assert!(!results[0].is_error, "the whole call ran: {:?}", results[0]);
        assert!(
            results[1].is_error && results[1].to_text().contains("max_tokens"),
            "{partial}: {:?}",
            results[1]
        );
        assert!(!results[1].to_text().contains("Eve"), "{:?}", results[1]);
    }

    // Whole JSON but no object, then another block: the turn went on, so
    // the call was whole as sent; it starts, and the binder explains it.
    let mut blocks = streamed_call(0, "toolu_1", "[2, 3]");
    blocks.extend(streamed_call(1, "toolu_2", r#"{"a": 2, "b": 3}"#));
    let (_, outcome) = add_streamed(blocks).await;
    let results: Vec<_> = outcome.transcript[2].tool_results().collect();
    assert!(results[0].is_error, "{:?}", results[0]);
    assert_eq!(results[1].to_text(), "5");
}

/// The counts of `message_delta` are cumulative: each field keeps the
/// larger of what `message_start` and every delta said, so a compatible
/// server's `"input_tokens": 0` in its delta loses none of the input, and
/// a count that grew (input after a server tool) is taken.
#[tokio::test]
async fn streamed_usage_keeps_the_larger_count_of_each_field() {
    let events = [
        json!({"type": "message_start", "message": {"id": "msg_1", "type": "message", "role": "assistant", "content": [],
            "usage": {"input_tokens": 10, "output_tokens": 1, "cache_creation_input_tokens": 7, "cache_read_input_tokens": 5}}}),
        json!({"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}}),
        json!({"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": "Hi."}}),
        json!({"type": "content_block_stop", "index": 0}),
        json!({"type": "message_delta", "delta": {"stop_reason": null, "stop_sequence": null},
            "usage": {"input_tokens": 12, "output_tokens": 4}}),
        json!({"type": "message_delta", "delta": {"stop_reason": "end_turn", "stop_sequence": null},
            "usage": {"input_tokens": 0, "output_tokens": 9, "cache_creation_input_tokens": 0, "cache_read_input_tokens": 0}}),
        json!({"type": "message_stop"}),
    ];
    let reply = Reply::sse(
        events
            .iter()
            .map(|event| (event["type"].as_str(), event.to_string()))
            .collect(),
    );
    let server = Server::start(vec![reply], false).await;
    let outcome = Agent::new(client(&server, true), registry()).run("Hi").await;
    assert_eq!(outcome.stop, StopReason::EndTurn, "{:?}", outcome.error);
    let usage = outcome.usage;
    assert_eq!(
        (
            usage.input_tokens,
            usage.output_tokens,
            usage.cache_creation_input_tokens,
            usage.cache_read_input_tokens
        ),
        (12, 9, 7, 5)
    );
}

#[tokio::test]
async fn streamed_text_whose_block_never_ends_stays_in_the_transcript() {
    let mut blocks = vec![
        json!({"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}}),
        json!({"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": "Adding."}}),
    ];
    blocks.extend(streamed_call(1, "toolu_1", r#"{"a": 2, "b": 3}"#));
    let (_, outcome) = add_streamed(blocks).await;
    assert_eq!(outcome.transcript[1].text(), "Adding.");
    assert_eq!(outcome.transcript[1].tool_uses().count(), 1);
}

#[tokio::test]
async fn a_block_started_again_before_its_end_is_an_error_not_a_lost_call() {
    let mut blocks = streamed_call(1, "toolu_1", r#"{"a": 1, "b": 2}"#);
    blocks.pop();
    blocks.extend(streamed_call(1, "toolu_2", r#"{"a": 3, "b": 4}"#));
    let error = model_error(tool_use_stream(blocks), true).await;
    assert_eq!(error.kind(), ModelErrorKind::MalformedResponse, "{error}");
    assert!(error.to_string().contains("block 1 was started again"), "{error}");
}

#[tokio::test]
async fn an_error_body_is_read_only_up_to_a_bound() {
    let message = "m".repeat(8 << 20);
    let body = json!({"type": "error", "error": {"type": "invalid_request_error", "message": message}});
    let error = model_error(Reply::status(400, body), false).await;
    assert_eq!(error.kind(), ModelErrorKind::InvalidRequest);
    assert!(error.message().len() < 2048, "{} bytes", error.message().len());
}

#[tokio::test]
async fn a_retry_after_longer_than_the_policy_allows_is_not_cut_short() {
    let busy = json!({"type": "error", "error": {"type": "rate_limit_error", "message": "Slow down"}});
    let server = Server::start(
        vec![
            Reply::status(429, busy).with_header("retry-after", "3600"),
            Reply::ok(anthropic_text("Too soon")),
        ],
        false,
    )
    .await;
    let outcome = Agent::new(client(&server, false), registry()).run("Hi").await;
    assert_eq!(outcome.stop, StopReason::ModelError);
    assert_eq!(outcome.error.unwrap().kind(), ModelErrorKind::RateLimited);
    assert_eq!(server.requests().len(), 1);
}

#[tokio::test]
async fn a_retry_after_date_is_waited_for_and_a_far_one_is_not_cut_short() {
    let busy = || json!({"type": "error", "error": {"type": "rate_limit_error", "message": "Slow down"}});
    // A date already past: tried again at once.
    let server = Server::start(
        vec![
            Reply::status(429, busy()).with_header("retry-after", "Wed, 21 Oct 2015 07:28:00 GMT"),
            Reply::ok(anthropic_text("Now")),
        ],
        false,
    )
    .await;
    let outcome = Agent::new(client(&server, false), registry()).run("Hi").await;
    assert_eq!(outcome.stop, StopReason::EndTurn, "{:?}", outcome.error);
    assert_eq!(server.requests().len(), 2);
    // A date an hour off is longer than the policy waits: no retry.
    let later = std::time::SystemTime::now() + Duration::from_secs(3600);
    let server = Server::start(
        vec![
            Reply::status(429, busy()).with_header("retry-after", &httpdate::fmt_http_date(later)),
            Reply::ok(anthropic_text("Too soon")),
        ],
        false,
    )
    .await;
    let outcome = Agent::new(client(&server, false), registry()).run("Hi").await;
    assert_eq!(outcome.error.unwrap().kind(), ModelErrorKind::RateLimited);
    assert_eq!(server.requests().len(), 1);
}

#[tokio::test]
async fn a_body_that_breaks_off_is_a_connection_failure_tried_again() {
    let server = Server::start(
        vec![Reply::Cut(anthropic_text("Lost")), Reply::ok(anthropic_text("Whole"))],
        false,
    )
    .await;
    let outcome = Agent::new(client(&server, false), registry()).run("Hi").await;
    assert_eq!(outcome.stop, StopReason::EndTurn, "{:?}", outcome.error);
    assert_eq!(outcome.text, "Whole");
    assert_eq!(server.requests().len(), 2);
    assert_eq!(server.requests()[0].raw_body, server.requests()[1].raw_body);
    // With no retries left it is a typed connection error.
    let server = Server::start(vec![Reply::Cut(anthropic_text("Lost"))], false).await;
    let outcome = Agent::new(client(&server, false).retry(RetryPolicy::none()), registry())
        .run("Hi")
        .await;
    assert_eq!(outcome.error.unwrap().kind(), ModelErrorKind::Connection);
    assert_eq!(server.requests().len(), 1);
}

#[tokio::test]
async fn a_forced_tool_choice_gives_way_to_auto_once_tools_have_answered() {
    let server = Server::start(
        vec![
            Reply::ok(anthropic_tool_use("Adding.", &[("t1", "add", json!({"a": 1, "b": 2}))])),
            Reply::ok(anthropic_text("3")),
        ],
        false,
    )
    .await;
    let model = client(&server, false).tool_choice(tool_runtime::model::ToolChoice::Any);
    let outcome = Agent::new(model, registry()).run("Add 1 and 2").await;
    assert_eq!(outcome.stop, StopReason::EndTurn, "{:?}", outcome.error);
    let requests = server.requests();
    assert_eq!(requests[0].body["tool_choice"], json!({"type": "any"}));
    assert_eq!(requests[1].body["tool_choice"], json!({"type": "auto"}));
    // A new question of the same conversation is forced again.
    let server = Server::start(vec![Reply::ok(anthropic_text("Later."))], false).await;
    let model = client(&server, false).tool_choice(tool_runtime::model::ToolChoice::Tool("add".into()));
    let mut transcript = outcome.transcript;
    transcript.push(tool_runtime::model::Message::user("And now?"));
    let outcome = Agent::new(model, registry())
        .run_cancellable(transcript, &Cancellation::new())
        .await;
    assert_eq!(outcome.stop, StopReason::EndTurn, "{:?}", outcome.error);
    assert_eq!(
        server.requests()[0].body["tool_choice"],
        json!({"type": "tool", "name": "add"})
    );
}

/// A run over one streamed or whole turn of `stop_reason` holding a
/// complete call (`toolu_1`, input streamed) and, last, a call cut before
/// its input began (`toolu_2`); the ids of the calls that started.
async fn cut_turn(stop_reason: &str, stream: bool) -> (Outcome, Vec<String>) {
    let reply = if stream {
        let mut blocks = streamed_call(0, "toolu_1", r#"{"a": 2, "b": 3}"#);
        blocks.push(json!({"type": "content_block_start", "index": 1, "content_block": {"type": "tool_use", "id": "toolu_2", "name": "greet", "input": {}}}));
        blocks.push(json!({"type": "content_block_stop", "index": 1}));
        stream_stopping(blocks, stop_reason)
    } else {
        let mut whole = anthropic_tool_use(
            "Adding.",
            &[
                ("toolu_1", "add", json!({"a": 2, "b": 3})),
                ("toolu_2", "greet", json!({})),
            ],
        );
        whole["stop_reason"] = json!(stop_reason);
        Reply::ok(whole)
    };
    let server = Server::start(vec![reply], false).await;
    let started = Arc::new(Mutex::new(Vec::new()));
    let seen = started.clone();
    let outcome = Agent::new(client(&server, stream), registry())
        .on_event(move |event| {
            if let AgentEvent::ToolCallStarted { id, .. } = event {
                seen.lock().unwrap().push(id.clone());
            }
        })
        .run("Add")
        .await;
    assert_eq!(server.requests().len(), 1, "{stop_reason}: no second turn");
    assert_transcript_valid(&outcome.transcript);
    let started = started.lock().unwrap().clone();
    (outcome, started)
}

/// `model_context_window_exceeded` cuts a turn off as `max_tokens` does:
/// only the calls a stream showed complete run, the others are answered
/// as not run, and the run stops.
#[tokio::test]
async fn a_turn_cut_off_by_a_full_context_window_stops_as_max_tokens() {
    for stream in [true, false] {
        let (outcome, started) = cut_turn("model_context_window_exceeded", stream).await;
        assert_eq!(
            outcome.stop,
            StopReason::MaxTokens,
            "stream {stream}: {:?}",
            outcome.error
        );
        let expected: &[&str] = if stream { &["toolu_1"] } else { &[] };
        assert_eq!(started, expected, "stream {stream}");
        let results: Vec<_> = outcome.transcript[2].tool_results().collect();
        assert_eq!(results[0].is_error, !stream, "stream {stream}: {:?}", results[0]);
        assert!(
            results[1].is_error && results[1].to_text().contains("context window"),
            "{:?}",
            results[1]
        );
    }
}

/// A stop reason the crate does not know may be a new kind of cut-off: a
/// call not known whole never runs (the held one included), and the run
/// stops with an error that names the reason, its transcript valid.
#[tokio::test]
async fn an_unknown_stop_reason_runs_no_call_not_known_whole() {
    for stream in [true, false] {
        let (outcome, started) = cut_turn("brand_new_reason", stream).await;
        assert_eq!(outcome.stop, StopReason::ModelError, "stream {stream}");
        let error = outcome.error.unwrap();
        assert_eq!(error.kind(), ModelErrorKind::MalformedResponse, "{error}");
        assert!(error.message().contains("brand_new_reason"), "{error}");
        let expected: &[&str] = if stream { &["toolu_1"] } else { &[] };
        assert_eq!(started, expected, "stream {stream}");
        let results: Vec<_> = outcome.transcript[2].tool_results().collect();
        assert_eq!(results[0].is_error, !stream, "stream {stream}: {:?}", results[0]);
        assert!(
            results[1].is_error && results[1].to_text().contains("brand_new_reason"),
            "{:?}",
            results[1]
        );
    }
}

/// Statuses, broken connections and streams that fail before anything of
/// them was handed on share one retry budget and one backoff sequence.
#[tokio::test]
async fn one_request_has_one_retry_budget_whatever_fails() {
    let overloaded = || {
        Reply::sse(vec![(
            Some("error"),
            json!({"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}}).to_string(),
        )])
    };
    let busy = || {
        Reply::status(
            503,
            json!({"type": "error", "error": {"type": "api_error", "message": "busy"}}),
        )
    };
    let server = Server::start(
        vec![busy(), overloaded(), busy(), overloaded(), busy(), overloaded(), busy()],
        false,
    )
    .await;
    let model = client(&server, true).retry(
        RetryPolicy::default()
            .max_retries(2)
            .delays(Duration::ZERO, Duration::ZERO),
    );
    let outcome = Agent::new(model, registry()).run("Hi").await;
    assert_eq!(outcome.stop, StopReason::ModelError);
    assert_eq!(outcome.error.unwrap().kind(), ModelErrorKind::Server);
    assert_eq!(server.requests().len(), 3, "the first try and two retries");
}

/// A stream that fails after a call it started has run: the call and its
/// result stay in the transcript, so a conversation passed back does not
/// run it again unknowingly.
#[tokio::test]
async fn a_call_that_ran_before_the_stream_failed_stays_in_the_transcript() {
    let finished = Arc::new(Notify::new());
    let mut pieces: Vec<Piece> = [
        json!({"type": "message_start", "message": {"id": "msg_1", "type": "message", "role": "assistant", "content": [], "usage": {"input_tokens": 10, "output_tokens": 1}}}),
    ]
    .into_iter()
    .chain(streamed_call(0, "toolu_1", r#"{"a": 1, "b": 2}"#))
    .map(|event| Piece::Bytes(sse_event(event["type"].as_str(), &event.to_string())))
    .collect();
    pieces.push(Piece::WaitFor(finished.clone()));
    pieces.push(Piece::Bytes(sse_event(
        Some("error"),
        &json!({"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}}).to_string(),
    )));
    let server = Server::start(vec![Reply::Stream(pieces)], false).await;
    let agent = Agent::new(client(&server, true), registry()).on_event(move |event| {
        if matches!(event, AgentEvent::ToolCallFinished { .. }) {
            finished.notify_one();
        }
    });
    let outcome = agent.run("Add 1 and 2").await;
    assert_eq!(outcome.stop, StopReason::ModelError);
    assert_eq!(outcome.error.unwrap().kind(), ModelErrorKind::Overloaded);
    assert_eq!(server.requests().len(), 1, "a stream whose call ran is not tried again");
    assert_transcript_valid(&outcome.transcript);
    assert_eq!(outcome.transcript.len(), 3, "{:?}", outcome.transcript);
    let call = outcome.transcript[1].tool_uses().next().unwrap();
    assert_eq!((call.id.as_str(), &call.input), ("toolu_1", &json!({"a": 1, "b": 2})));
    let result = outcome.transcript[2].tool_results().next().unwrap();
    assert_eq!((result.to_text().as_str(), result.is_error), ("3", false));

    // Passed back, the conversation goes on from the call's result.
    let server = Server::start(vec![Reply::ok(anthropic_text("It is 3."))], false).await;
    let mut transcript = outcome.transcript;
    transcript.push(tool_runtime::model::Message::user("Go on."));
    let outcome = Agent::new(client(&server, false), registry())
        .run_cancellable(transcript, &Cancellation::new())
        .await;
    assert_eq!(outcome.stop, StopReason::EndTurn, "{:?}", outcome.error);
    assert_anthropic_requests(&server, "sk-ant-test");
    let sent = &server.requests()[0].body["messages"];
    assert_eq!(sent[1]["content"][0]["id"], "toolu_1");
    assert_eq!(sent[2]["content"][0]["tool_use_id"], "toolu_1");
}

/// A redirect to another address is not followed: reqwest takes
/// `Authorization` off a request it redirects to another host, but not
/// `x-api-key`, so the key would go with it. The other address gets no
/// request, and the error names where the redirect points, with its
/// status; so it is with time limits of the user's own.
#[tokio::test]
async fn a_redirect_is_not_followed_and_the_key_stays_home() {
    let elsewhere = Server::start(vec![Reply::ok(anthropic_text("Moved."))], true).await;
    let location = format!("{}/v1/messages", elsewhere.url);
    let moved = || Reply::status(307, json!({})).with_header("location", &location);
    let server = Server::start(vec![moved(), moved(), moved()], false).await;
    let timed = |stream| client(&server, stream).timeouts(Duration::from_secs(5), Duration::from_secs(5));
    for model in [client(&server, false), client(&server, true), timed(false)] {
        let outcome = Agent::new(model, registry()).run("Hi").await;
        let headers: Vec<_> = elsewhere.requests().into_iter().map(|r| r.headers).collect();
        assert!(headers.is_empty(), "followed, with {headers:?}");
        assert_eq!(outcome.stop, StopReason::ModelError);
        let error = outcome.error.unwrap();
        assert_eq!(error.status(), Some(307), "{error}");
        assert!(error.message().contains(&location), "{error}");
    }
    assert_eq!(server.requests().len(), 3, "each tried once");
}

/// A server that answers, then keeps the stream open with a comment now
/// and then and nothing else, never trips the read limit: the limit on an
/// attempt as a whole ends it, as a timeout.
#[tokio::test]
async fn a_stream_kept_open_with_comments_ends_at_the_total_timeout() {
    let url = trickling_server().await;
    let model = Anthropic::new("claude-sonnet-4-5")
        .base_url(url)
        .api_key("sk-ant-test")
        .streaming(true)
        .timeouts(Duration::from_secs(5), Duration::from_secs(5))
        .total_timeout(Some(Duration::from_millis(500)))
        .retry(RetryPolicy::none());
    let agent = Agent::new(model, registry());
    let outcome = tokio::time::timeout(Duration::from_secs(10), agent.run("Hi"))
        .await
        .expect("the run ends at its total timeout");
    let error = outcome.error.unwrap();
    assert_eq!(error.kind(), ModelErrorKind::Timeout, "{error}");
}

/// A stream whose `message_delta` never says why the turn stopped (a
/// compatible server's) is whole when its calls are, but a last call whose
/// input was cut short is held back as in a turn cut off: it never runs,
/// it is answered as not run, and the run stops as at max_tokens; as the
/// Chat Completions client takes a stream without a finish_reason. A call
/// with no input streamed (one without parameters) runs on its start's.
#[tokio::test]
async fn a_stream_without_a_stop_reason_runs_no_call_not_known_whole() {
    let events = |blocks: Vec<Value>| {
        let mut events = vec![
            json!({"type": "message_start", "message": {"id": "msg_1", "type": "message", "role": "assistant", "content": [], "usage": {"input_tokens": 10, "output_tokens": 1}}}),
        ];
        events.extend(blocks);
        events.push(json!({"type": "message_delta", "delta": {"stop_reason": null, "stop_sequence": null}, "usage": {"output_tokens": 20}}));
        events.push(json!({"type": "message_stop"}));
        Reply::sse(
            events
                .iter()
                .map(|event| (event["type"].as_str(), event.to_string()))
                .collect(),
        )
    };
    let mut blocks = streamed_call(0, "toolu_1", r#"{"a": 2, "b": 3}"#);
    blocks.push(json!({"type": "content_block_start", "index": 1, "content_block": {"type": "tool_use", "id": "toolu_2", "name": "greet", "input": {}}}));
    blocks.push(json!({"type": "content_block_delta", "index": 1, "delta": {"type": "input_json_delta", "partial_json": "{\"name\": \"Ad"}}));
    blocks.push(json!({"type": "content_block_stop", "index": 1}));
    let server = Server::start(vec![events(blocks)], false).await;
    let started = Arc::new(Mutex::new(Vec::new()));
    let seen = started.clone();
    let outcome = Agent::new(client(&server, true), registry())
        .on_event(move |event| {
            if let AgentEvent::ToolCallStarted { id, .. } = event {
                seen.lock().unwrap().push(id.clone());
            }
        })
        .run("Add, then greet")
        .await;
    assert_eq!(outcome.stop, StopReason::MaxTokens, "{:?}", outcome.error);
    assert_eq!(*started.lock().unwrap(), ["toolu_1"]);
    assert_eq!(server.requests().len(), 1);
    assert_transcript_valid(&outcome.transcript);
    let results: Vec<_> = outcome.transcript[2].tool_results().collect();
    assert_eq!((results[0].to_text().as_str(), results[0].is_error), ("5", false));
    assert!(
        results[1].is_error && results[1].to_text().contains("not run"),
        "{:?}",
        results[1]
    );

    // Every call whole: the turn is whole, and its calls run, the one
    // with no input streamed on its start's.
    let mut blocks = streamed_call(0, "toolu_1", r#"{"a": 2, "b": 3}"#);
    blocks.push(json!({"type": "content_block_start", "index": 1, "content_block": {"type": "tool_use", "id": "toolu_2", "name": "broken", "input": {}}}));
    blocks.push(json!({"type": "content_block_stop", "index": 1}));
    let server = Server::start(
        vec![events(blocks), anthropic_stream(&anthropic_text("5"), HashMap::new())],
        false,
    )
    .await;
    let outcome = Agent::new(client(&server, true), registry()).run("Add").await;
    assert_eq!(outcome.stop, StopReason::EndTurn, "{:?}", outcome.error);
    let results: Vec<String> = outcome.transcript[2].tool_results().map(|r| r.to_text()).collect();
    assert_eq!(results[0], "5");
    assert!(results[1].contains("broken cannot handle None"), "{results:?}");
}

/// A transcript passed back as JSON in the Messages API's own forms (a
/// result's `content` as a string, a call without `input`) keeps its call
/// and result, which go out with the next request; a call or result whose
/// fields do not fit is an error when the transcript is read, not a block
/// every request would drop.
#[tokio::test]
async fn a_transcript_in_the_api_s_own_forms_keeps_its_calls_and_results() {
    use tool_runtime::model::Message;
    let saved = json!([
        {"role": "user", "content": [{"type": "text", "text": "Weather in Oslo?"}]},
        {"role": "assistant", "content": [{"type": "tool_use", "id": "toolu_1", "name": "weather"}]},
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "toolu_1", "content": "15 degrees"}]},
    ]);
    let transcript: Vec<Message> = serde_json::from_value(saved).unwrap();
    let server = Server::start(vec![Reply::ok(anthropic_text("15 degrees."))], false).await;
    let outcome = Agent::new(client(&server, false), registry())
        .run_cancellable(transcript, &Cancellation::new())
        .await;
    assert_eq!(outcome.stop, StopReason::EndTurn, "{:?}", outcome.error);
    let sent = &server.requests()[0].body["messages"];
    assert_eq!(
        sent[1]["content"][0],
        json!({"type": "tool_use", "id": "toolu_1", "name": "weather", "input": {}})
    );
    assert_eq!(
        sent[2]["content"][0],
        json!({"type": "tool_result", "tool_use_id": "toolu_1", "content": [{"type": "text", "text": "15 degrees"}]})
    );

    let broken = json!([{"role": "user", "content": [{"type": "tool_result", "content": "15 degrees"}]}]);
    let error = serde_json::from_value::<Vec<Message>>(broken).unwrap_err();
    assert!(error.to_string().contains("`tool_result`"), "{error}");
}

//! The agent loop over the OpenAI Chat Completions client, against a
//! loopback server that answers like the API (and like vLLM or Ollama).

mod agent_support;

use std::sync::{Arc, Mutex};
use std::time::Duration;

use agent_support::*;
use serde_json::json;
use tokio::sync::Notify;
use tool_runtime::agent::{Agent, AgentEvent, StopReason};
use tool_runtime::model::openai::OpenAi;
use tool_runtime::model::{ModelErrorKind, RetryPolicy, ToolChoice};

fn client(server: &Server, stream: bool) -> OpenAi {
    OpenAi::new("gpt-4.1")
        .base_url(format!("{}/v1", server.url))
        .api_key("sk-test")
        .system("You are a calculator.")
        .temperature(0.2)
        .streaming(stream)
        .retry(RetryPolicy::default().delays(Duration::from_millis(1), Duration::from_millis(5)))
}

/// The text `pick` finds in each event, joined as it comes, and the event
/// callback that collects it.
fn collected(
    pick: fn(&AgentEvent) -> Option<&String>,
) -> (Arc<Mutex<String>>, impl Fn(&AgentEvent) + Send + Sync + 'static) {
    let text = Arc::new(Mutex::new(String::new()));
    let seen = text.clone();
    let collect = move |event: &AgentEvent| {
        if let Some(piece) = pick(event) {
            seen.lock().unwrap().push_str(piece);
        }
    };
    (text, collect)
}

const CALLS: &[(&str, &str, &str)] = &[
    ("call_a", "add", "{\"a\": 2, \"b\": 3}"),
    ("call_b", "greet", "{\"name\": \"Ada\"}"),
];

fn check(server: &Server) {
    let requests = server.requests();
    assert_eq!(requests.len(), 2);
    for request in &requests {
        assert_eq!(request.path, "/v1/chat/completions");
        assert_eq!(request.headers["authorization"], "Bearer sk-test");
        assert!(!request.headers.contains_key("x-api-key"));
        assert_eq!(request.body["model"], "gpt-4.1");
        assert_eq!(request.body["temperature"], 0.2);
        assert_eq!(
            request.body["messages"][0],
            json!({"role": "system", "content": "You are a calculator."})
        );
        let tools = request.body["tools"].as_array().unwrap();
        assert_eq!(tools[0]["type"], "function");
        assert_eq!(tools[0]["function"]["name"], "add");
        assert!(tools[0]["function"]["parameters"].is_object());
    }
    assert_eq!(
        requests[0].body["tools"].to_string(),
        requests[1].body["tools"].to_string()
    );
    let messages = requests[1].body["messages"].as_array().unwrap();
    assert_eq!(
        messages[1],
        json!({"role": "user", "content": "Add 2 and 3, then greet Ada."})
    );
    assert_eq!(messages[2]["role"], "assistant");
    assert_eq!(messages[2]["tool_calls"][0]["id"], "call_a");
    assert_eq!(
        messages[2]["tool_calls"][0]["function"]["arguments"],
        "{\"a\": 2, \"b\": 3}"
    );
    assert_eq!(
        messages[3],
        json!({"role": "tool", "tool_call_id": "call_a", "content": "5"})
    );
    assert_eq!(
        messages[4],
        json!({"role": "tool", "tool_call_id": "call_b", "content": "Hello, Ada!"})
    );
    assert_eq!(messages[5], json!({"role": "user", "content": "Budget: 25 turns."}));
    assert_eq!(messages.len(), 6);
}

fn agent(model: OpenAi) -> Agent<OpenAi> {
    Agent::new(model, registry()).notice(|info| Some(format!("Budget: {} turns.", info.max_turns)))
}

#[tokio::test]
async fn two_tool_calls_then_stop() {
    let server = Server::start(
        vec![
            Reply::ok(openai_completion(None, CALLS, "tool_calls")),
            Reply::ok(openai_completion(Some("5, hello Ada."), &[], "stop")),
        ],
        false,
    )
    .await;
    let outcome = agent(client(&server, false)).run("Add 2 and 3, then greet Ada.").await;
    assert_eq!(outcome.stop, StopReason::EndTurn, "{:?}", outcome.error);
    assert_eq!(outcome.text, "5, hello Ada.");
    assert_eq!(outcome.usage.input_tokens, 240);
    assert_transcript_valid(&outcome.transcript);
    assert_openai_requests(&server, "sk-test");
    check(&server);
}

#[tokio::test]
async fn two_tool_calls_then_stop_streaming() {
    let server = Server::start(
        vec![
            openai_stream(Some("On it."), CALLS, "tool_calls"),
            openai_stream(Some("5, hello Ada."), &[], "stop"),
        ],
        false,
    )
    .await;
    let outcome = agent(client(&server, true)).run("Add 2 and 3, then greet Ada.").await;
    assert_eq!(outcome.stop, StopReason::EndTurn, "{:?}", outcome.error);
    assert_eq!(outcome.text, "5, hello Ada.");
    assert_eq!(outcome.usage.output_tokens, 60);
    assert_transcript_valid(&outcome.transcript);
    assert_openai_requests(&server, "sk-test");
    let request = &server.requests()[0].body;
    assert_eq!(request["stream"], true);
    assert_eq!(request["stream_options"]["include_usage"], true);
    assert_eq!(server.requests()[1].body["messages"][2]["content"], "On it.");
}

#[tokio::test]
async fn streaming_starts_the_first_call_before_the_second_arrives() {
    let started = Arc::new(Notify::new());
    let Reply::Stream(mut pieces) = openai_stream(None, CALLS, "tool_calls") else {
        unreachable!()
    };
    // Hold back the chunk that opens the second call: the first call is
    // complete once it arrives, so it must be what starts the first tool.
    let mut second = pieces.split_off(4);
    let opener = second.remove(0);
    pieces.push(opener);
    pieces.push(Piece::WaitFor(started.clone()));
    pieces.push(Piece::Mark("rest sent"));
    pieces.extend(second);
    let server = Server::start(
        vec![Reply::Stream(pieces), openai_stream(Some("Done."), &[], "stop")],
        false,
    )
    .await;
    let marks = server.marks.clone();
    let agent = Agent::new(client(&server, true), registry()).on_event(move |event| {
        if let AgentEvent::ToolCallStarted { name, .. } = event {
            marks.lock().unwrap().push(format!("{name} started"));
            if name == "add" {
                started.notify_one();
            }
        }
    });
    let outcome = agent.run("Go").await;
    assert_eq!(outcome.stop, StopReason::EndTurn, "{:?}", outcome.error);
    assert_eq!(server.marks(), ["add started", "rest sent", "greet started"]);
    assert_transcript_valid(&outcome.transcript);
    assert_openai_requests(&server, "sk-test");
}

#[tokio::test]
async fn rate_limited_with_retry_after_then_success() {
    let limited = json!({"error": {"message": "Rate limit reached for gpt-4.1", "type": "requests", "param": null, "code": "rate_limit_exceeded"}});
    let server = Server::start(
        vec![
            Reply::status(429, limited).with_header("retry-after-ms", "1"),
            Reply::status(503, json!({"error": {"message": "busy"}})),
            Reply::ok(openai_completion(Some("Hi."), &[], "stop")),
        ],
        false,
    )
    .await;
    let outcome = Agent::new(client(&server, false), registry()).run("Hi").await;
    assert_eq!(outcome.stop, StopReason::EndTurn, "{:?}", outcome.error);
    assert_eq!(server.requests().len(), 3);
    assert_openai_requests(&server, "sk-test");

    let missing = json!({"error": {"message": "The model `gpt-9` does not exist", "type": "invalid_request_error", "code": "model_not_found"}});
    let server = Server::start(vec![Reply::status(404, missing)], false).await;
    let error = Agent::new(client(&server, false), registry())
        .run("Hi")
        .await
        .error
        .unwrap();
    assert_eq!(error.kind(), ModelErrorKind::NotFound);
    assert_eq!(error.message(), "The model `gpt-9` does not exist");
}

#[tokio::test]
async fn bad_argument_text_then_a_corrected_call() {
    let server = Server::start(
        vec![
            Reply::ok(openai_completion(
                None,
                &[("call_1", "add", "{\"a\": 2, \"b\":")],
                "tool_calls",
            )),
            Reply::ok(openai_completion(
                None,
                &[("call_2", "add", "{\"a\": 2, \"b\": 3}")],
                "tool_calls",
            )),
            Reply::ok(openai_completion(Some("5."), &[], "stop")),
        ],
        false,
    )
    .await;
    let outcome = Agent::new(client(&server, false), registry()).run("2+3").await;
    assert_eq!(outcome.stop, StopReason::EndTurn);
    assert_transcript_valid(&outcome.transcript);
    assert_openai_requests(&server, "sk-test");
    let requests = server.requests();
    let messages = requests[1].body["messages"].as_array().unwrap();
    // The broken argument text goes back as what it was read as, a JSON
    // object (vLLM and others parse every earlier call's arguments and
    // refuse a history holding text that is none); the result says what
    // was wrong with it.
    assert_eq!(messages[2]["tool_calls"][0]["function"]["arguments"], "{}");
    assert_eq!(messages[3]["tool_call_id"], "call_1");
    assert!(
        messages[3]["content"].as_str().unwrap().contains("json_parse_error"),
        "{}",
        messages[3]
    );
    assert_eq!(requests[2].body["messages"][5]["content"], "5");
}

#[tokio::test]
async fn stop_reasons_map_to_the_outcome() {
    for (finish, stop) in [
        ("length", StopReason::MaxTokens),
        ("content_filter", StopReason::Refusal),
        ("stop", StopReason::EndTurn),
    ] {
        let server = Server::start(vec![Reply::ok(openai_completion(Some("Partial"), &[], finish))], false).await;
        let outcome = Agent::new(client(&server, false), registry()).run("Hi").await;
        assert_eq!(outcome.stop, stop, "{finish}");
    }
}

#[tokio::test]
async fn options_reach_the_request() {
    let server = Server::start(vec![Reply::ok(openai_completion(Some("ok"), &[], "stop"))], false).await;
    let model = OpenAi::new("llama3.1")
        .base_url(format!("{}/v1/", server.url))
        .max_tokens(256)
        .top_p(0.9)
        .top_k(40)
        .stop_sequences(["END"])
        .metadata(json!({"user": "u1"}))
        .store(true)
        .tool_choice(ToolChoice::Tool("add".into()));
    let events = Arc::new(Mutex::new(Vec::new()));
    let seen = events.clone();
    let outcome = Agent::new(model, registry())
        .allow(["add"])
        .on_event(move |e| seen.lock().unwrap().push(e.clone()))
        .run("Hi")
        .await;
    assert_eq!(outcome.stop, StopReason::EndTurn);
    let request = &server.requests()[0];
    assert_eq!(request.path, "/v1/chat/completions");
    let body = &request.body;
    assert_eq!(body["max_tokens"], 256);
    assert_eq!(body["top_p"], 0.9);
    assert_eq!(body["top_k"], 40);
    assert_eq!(body["stop"], json!(["END"]));
    assert_eq!(
        (&body["metadata"], &body["store"]),
        (&json!({"user": "u1"}), &json!(true))
    );
    assert_eq!(
        body["tool_choice"],
        json!({"type": "function", "function": {"name": "add"}})
    );
    assert_eq!(body["tools"].as_array().unwrap().len(), 1);
    // A non-streamed turn still reports its text as an event.
    assert!(events.lock().unwrap().contains(&AgentEvent::Text("ok".into())));
}

#[tokio::test]
async fn a_model_that_never_stops_hits_max_turns_streaming() {
    let server = Server::start(
        vec![openai_stream(
            None,
            &[("call_x", "add", "{\"a\":1,\"b\":1}")],
            "tool_calls",
        )],
        true,
    )
    .await;
    let outcome = Agent::new(client(&server, true), registry())
        .max_turns(3)
        .run("Loop")
        .await;
    assert_eq!(outcome.stop, StopReason::MaxTurns);
    assert_eq!(server.requests().len(), 3);
    assert_transcript_valid(&outcome.transcript);
    assert_openai_requests(&server, "sk-test");
}

#[tokio::test]
async fn denied_deferred_and_resumed_streaming() {
    let server = Server::start(
        vec![
            openai_stream(
                None,
                &[
                    ("call_1", "greet", "{\"name\":\"Eve\"}"),
                    ("call_2", "add", "{\"a\":1,\"b\":2}"),
                ],
                "tool_calls",
            ),
            openai_stream(Some("Done."), &[], "stop"),
        ],
        false,
    )
    .await;
    let agent = Agent::new(client(&server, true), registry()).approver(|call: &tool_runtime::ToolCall| {
        match call.name.as_str() {
            "greet" => tool_runtime::agent::Approval::Refuse("Not Eve.".into()),
            _ => tool_runtime::agent::Approval::Defer,
        }
    });
    let outcome = agent.run("Go").await;
    assert_eq!(outcome.stop, StopReason::Deferred);
    let deferred = outcome.deferred.unwrap();
    let pending = deferred.pending().next().unwrap().clone();
    assert_eq!(pending.raw_arguments.as_deref(), Some("{\"a\":1,\"b\":2}"));
    let call = tool_runtime::ToolCall::new(pending.name.clone(), pending.arguments_text()).with_id(pending.id.clone());
    let result = agent.registry().call_one(call).await;
    let outcome = agent
        .resume(
            outcome.transcript,
            deferred,
            [result],
            &tool_runtime::Cancellation::new(),
        )
        .await
        .unwrap();
    assert_eq!(outcome.stop, StopReason::EndTurn);
    assert_transcript_valid(&outcome.transcript);
    assert_openai_requests(&server, "sk-test");
    let messages = server.requests()[1].body["messages"].as_array().unwrap().clone();
    assert_eq!(
        messages[3],
        // Refused: the text says it failed, as no flag can.
        json!({"role": "tool", "tool_call_id": "call_1", "content": "Error: Not Eve."})
    );
    assert_eq!(
        messages[4],
        json!({"role": "tool", "tool_call_id": "call_2", "content": "3"})
    );
}

#[tokio::test]
async fn a_cancelled_streaming_run_leaves_a_valid_transcript() {
    let server = Server::start(
        vec![openai_stream(None, &[("call_1", "wait_forever", "{}")], "tool_calls")],
        false,
    )
    .await;
    let cancellation = tool_runtime::Cancellation::new();
    let cancel = cancellation.clone();
    let agent = Agent::new(client(&server, true), registry()).on_event(move |event| {
        if matches!(event, AgentEvent::ToolCallStarted { .. }) {
            cancel.cancel();
        }
    });
    let outcome = agent
        .run_cancellable(vec![tool_runtime::model::Message::user("Go")], &cancellation)
        .await;
    assert_eq!(outcome.stop, StopReason::Cancelled);
    assert_transcript_valid(&outcome.transcript);
    // The call had started, so it stays, answered as cancelled.
    let transcript = &outcome.transcript;
    assert_eq!(transcript.len(), 3, "{transcript:?}");
    let calls: Vec<&str> = transcript[1].tool_uses().map(|c| c.id.as_str()).collect();
    assert_eq!(calls, ["call_1"]);
    let result = transcript[2].tool_results().next().unwrap();
    assert!(result.is_error && result.to_text().contains("cancel"), "{result:?}");
}

#[tokio::test]
async fn a_legacy_function_call_is_an_error_streamed_or_not() {
    let mut whole = openai_completion(None, &[], "function_call");
    whole["choices"][0]["message"]["function_call"] = json!({"name": "add", "arguments": "{\"a\": 2, \"b\": 3}"});
    let chunk = |delta: serde_json::Value, finish: serde_json::Value| {
        json!({"id": "chatcmpl-1", "object": "chat.completion.chunk",
               "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]})
        .to_string()
    };
    let streamed = Reply::sse(vec![
        (None, chunk(json!({"role": "assistant", "content": null}), json!(null))),
        (
            None,
            chunk(json!({"function_call": {"name": "add", "arguments": ""}}), json!(null)),
        ),
        (
            None,
            chunk(
                json!({"function_call": {"arguments": "{\"a\": 2, \"b\": 3}"}}),
                json!(null),
            ),
        ),
        (None, chunk(json!({}), json!("function_call"))),
        (None, "[DONE]".to_owned()),
    ]);
    for (reply, stream) in [(Reply::ok(whole), false), (streamed, true)] {
        let server = Server::start(vec![reply], false).await;
        let outcome = Agent::new(client(&server, stream), registry()).run("Add 2 and 3").await;
        assert_eq!(outcome.stop, StopReason::ModelError, "streaming {stream}");
        let error = outcome.error.unwrap();
        assert_eq!(error.kind(), ModelErrorKind::MalformedResponse, "{error}");
        assert!(error.to_string().contains("deprecated `function_call`"), "{error}");
        assert_transcript_valid(&outcome.transcript);
        assert_eq!(server.requests().len(), 1, "no second turn after a lost call");
    }
}

/// A chunk as the streaming API sends it.
fn chunk(delta: serde_json::Value, finish: serde_json::Value) -> String {
    json!({"id": "chatcmpl-1", "object": "chat.completion.chunk",
           "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]})
    .to_string()
}

/// The error a one-turn run over `reply` ends with, tried once.
async fn model_error(reply: Reply, stream: bool) -> tool_runtime::model::ModelError {
    let server = Server::start(vec![reply], false).await;
    let outcome = Agent::new(client(&server, stream).retry(RetryPolicy::none()), registry())
        .run("Hi")
        .await;
    assert_eq!(outcome.stop, StopReason::ModelError, "{}", outcome.text);
    assert_eq!(server.requests().len(), 1);
    assert_transcript_valid(&outcome.transcript);
    outcome.error.unwrap()
}

/// However a server reports an error in a stream (an `error` event, a
/// chunk holding an error object or a string), the run ends with that
/// error, its kind and its message, not with an empty answer.
#[tokio::test]
async fn a_stream_that_reports_an_error_is_the_server_s_error() {
    let opening = (None, chunk(json!({"role": "assistant", "content": ""}), json!(null)));
    let cases = [
        (
            Some("error"),
            json!({"message": "This model's maximum context length is 8192 tokens", "type": "invalid_request_error"})
                .to_string(),
            ModelErrorKind::InvalidRequest,
            "This model's maximum context length is 8192 tokens",
        ),
        (
            Some("error"),
            "Upstream timed out".to_owned(),
            ModelErrorKind::Other,
            "Upstream timed out",
        ),
        (
            None,
            json!({"error": "model crashed"}).to_string(),
            ModelErrorKind::Other,
            "model crashed",
        ),
        (
            None,
            json!({"error": {"message": "The server had an error while processing your request.", "type": "server_error", "code": null}})
                .to_string(),
            ModelErrorKind::Server,
            "The server had an error while processing your request.",
        ),
        (
            None,
            json!({"error": {"message": "Rate limit reached for gpt-4.1", "type": "requests", "code": "rate_limit_exceeded"}})
                .to_string(),
            ModelErrorKind::RateLimited,
            "Rate limit reached for gpt-4.1",
        ),
        (
            None,
            json!({"error": {"object": "error", "message": "Internal error", "type": "InternalServerError", "code": 500}})
                .to_string(),
            ModelErrorKind::Server,
            "Internal error",
        ),
    ];
    for (name, data, kind, message) in cases {
        let reply = Reply::sse(vec![opening.clone(), (name, data.clone()), (None, "[DONE]".to_owned())]);
        let error = model_error(reply, true).await;
        assert_eq!(error.kind(), kind, "{data}: {error}");
        assert_eq!(error.message(), message, "{data}");
    }
}

/// A stream that ends (`[DONE]`) with neither a finish_reason nor any
/// content is no answer. That covers a server that reports its error in a
/// line the SSE format does not have (`error: ...`, which SSE clients must
/// ignore): the run fails rather than ending on an empty turn.
#[tokio::test]
async fn a_stream_of_nothing_is_an_error_not_an_empty_answer() {
    let opening = chunk(json!({"role": "assistant", "content": ""}), json!(null));
    let replies = [
        Reply::sse(vec![(None, "[DONE]".to_owned())]),
        Reply::sse(vec![(None, opening.clone()), (None, "[DONE]".to_owned())]),
        Reply::Stream(vec![
            Piece::Bytes(sse_event(None, &opening)),
            Piece::Bytes("error: {\"message\": \"upstream failed\"}\n\n".to_owned()),
            Piece::Bytes(sse_event(None, "[DONE]")),
        ]),
    ];
    for reply in replies {
        let error = model_error(reply, true).await;
        assert_eq!(error.kind(), ModelErrorKind::MalformedResponse, "{error}");
        assert!(error.message().contains("finish_reason"), "{error}");
    }
    // An empty answer that says it finished is an answer.
    let server = Server::start(
        vec![Reply::sse(vec![
            (None, opening),
            (None, chunk(json!({}), json!("stop"))),
            (None, "[DONE]".to_owned()),
        ])],
        false,
    )
    .await;
    let outcome = Agent::new(client(&server, true), registry()).run("Hi").await;
    assert_eq!(outcome.stop, StopReason::EndTurn, "{:?}", outcome.error);
}

/// A server error or a rate limit reported with status 200, in the body
/// or first thing in a stream, is tried again as the statuses are; an
/// error no retry can mend is not.
#[tokio::test]
async fn a_transient_error_answered_with_status_200_is_tried_again() {
    let server_error =
        json!({"error": {"message": "The server had an error while processing your request.", "type": "server_error"}});
    let limited = json!({"error": {"message": "Rate limit reached for gpt-4.1", "type": "requests", "code": "rate_limit_exceeded"}});
    for failure in [server_error.clone(), limited] {
        let server = Server::start(
            vec![
                Reply::ok(failure.clone()),
                Reply::ok(openai_completion(Some("Hi."), &[], "stop")),
            ],
            false,
        )
        .await;
        let outcome = Agent::new(client(&server, false), registry()).run("Hi").await;
        assert_eq!(outcome.stop, StopReason::EndTurn, "{failure}: {:?}", outcome.error);
        assert_eq!(server.requests().len(), 2, "{failure}");
    }
    let server = Server::start(
        vec![
            Reply::sse(vec![(None, server_error.to_string()), (None, "[DONE]".to_owned())]),
            openai_stream(Some("Hi."), &[], "stop"),
        ],
        false,
    )
    .await;
    let outcome = Agent::new(client(&server, true), registry()).run("Hi").await;
    assert_eq!(outcome.stop, StopReason::EndTurn, "{:?}", outcome.error);
    assert_eq!(outcome.text, "Hi.");
    assert_eq!(server.requests().len(), 2);

    let invalid = json!({"error": {"message": "Invalid 'messages'", "type": "invalid_request_error"}});
    let server = Server::start(
        vec![
            Reply::ok(invalid),
            Reply::ok(openai_completion(Some("Hi."), &[], "stop")),
        ],
        false,
    )
    .await;
    let outcome = Agent::new(client(&server, false), registry()).run("Hi").await;
    assert_eq!(outcome.error.unwrap().kind(), ModelErrorKind::InvalidRequest);
    assert_eq!(server.requests().len(), 1);
}

/// `openai_stream`'s pieces without its last two events (the usage chunk
/// and `[DONE]`): what arrives up to the finish_reason.
fn up_to_finish(content: Option<&str>, calls: &[(&str, &str, &str)], finish: &str) -> Vec<Piece> {
    let Reply::Stream(mut pieces) = openai_stream(content, calls, finish) else {
        unreachable!()
    };
    pieces.truncate(pieces.len() - 2);
    pieces
}

/// The connection breaking after the finish_reason arrived loses nothing
/// of the turn (only the usage that would have followed): the turn is
/// kept, and its calls run once. Before it, the break is the run's error.
#[tokio::test]
async fn a_stream_cut_after_its_finish_reason_keeps_the_turn() {
    let server = Server::start(
        vec![Reply::StreamCut(up_to_finish(Some("Hi there."), &[], "stop"))],
        false,
    )
    .await;
    let outcome = Agent::new(client(&server, true), registry()).run("Hi").await;
    assert_eq!(outcome.stop, StopReason::EndTurn, "{:?}", outcome.error);
    assert_eq!(outcome.text, "Hi there.");
    assert_eq!(server.requests().len(), 1);

    let server = Server::start(
        vec![
            Reply::StreamCut(up_to_finish(
                None,
                &[("call_a", "add", "{\"a\": 2, \"b\": 3}")],
                "tool_calls",
            )),
            openai_stream(Some("5."), &[], "stop"),
        ],
        false,
    )
    .await;
    let outcome = Agent::new(client(&server, true), registry()).run("Add").await;
    assert_eq!(outcome.stop, StopReason::EndTurn, "{:?}", outcome.error);
    assert_transcript_valid(&outcome.transcript);
    assert_openai_requests(&server, "sk-test");
    assert_eq!(server.requests().len(), 2);
    assert_eq!(server.requests()[1].body["messages"][3]["content"], "5");

    // Cut before it: the text was shown, so the failure is the run's.
    let mut early = up_to_finish(Some("Hi there."), &[], "stop");
    early.pop();
    let server = Server::start(vec![Reply::StreamCut(early)], false).await;
    let outcome = Agent::new(client(&server, true), registry()).run("Hi").await;
    assert_eq!(outcome.stop, StopReason::ModelError);
    assert_eq!(outcome.error.unwrap().kind(), ModelErrorKind::Connection);
    assert_eq!(server.requests().len(), 1);
}

#[tokio::test]
async fn with_strict_tools_the_nulls_the_model_sends_for_unset_parameters_mean_not_given() {
    for strict in [true, false] {
        let call = (
            "call_r",
            "repeat",
            r#"{"text": "ab", "times": null, "separator": null}"#,
        );
        let server = Server::start(
            vec![
                Reply::ok(openai_completion(None, &[call], "tool_calls")),
                Reply::ok(openai_completion(Some("Done."), &[], "stop")),
            ],
            false,
        )
        .await;
        let mut registry = tool_runtime::ToolRegistry::new().strict();
        registry.register(Repeat).unwrap();
        let warnings = Arc::new(Mutex::new(Vec::new()));
        let seen = warnings.clone();
        let outcome = Agent::new(client(&server, false).strict_tools(strict), registry)
            .on_event(move |event| {
                if let AgentEvent::ToolCallFinished { warnings, errors, .. } = event {
                    seen.lock().unwrap().extend(warnings.iter().chain(errors).cloned());
                }
            })
            .run("Repeat ab")
            .await;
        assert_eq!(outcome.stop, StopReason::EndTurn, "{:?}", outcome.error);
        let requests = server.requests();
        let sent = &requests[0].body["tools"][0]["function"];
        assert_eq!(sent["strict"].as_bool(), strict.then_some(true), "{sent}");
        let answer = &requests[1].body["messages"][3];
        let problems = warnings.lock().unwrap().clone();
        if strict {
            // Every property required, the optional ones nullable: the
            // `null`s are the model's way of leaving them unset.
            assert_eq!(sent["parameters"]["required"], json!(["text", "times", "separator"]));
            assert_eq!(answer["content"], "abab");
            assert_eq!(problems, Vec::<String>::new());
        } else {
            assert_eq!(problems, ["type_mismatch:times"]);
        }
    }
}

/// A user message of several text blocks reaches the API as one text, its
/// blocks a blank line apart, never glued ("2+2and"); so do the text blocks
/// of an assistant message that a call or thinking keeps apart, while text
/// split into adjacent blocks (Anthropic's cited text) is one text again.
#[tokio::test]
async fn the_text_blocks_of_a_message_are_sent_apart() {
    use tool_runtime::model::{Block, Message, Role, ToolResultBlock, ToolUse};
    let text = |text: &str| Block::Text { text: text.into() };
    let transcript = vec![
        Message::new(Role::User, vec![text("what is 2+2"), text("and 3+3")]),
        Message::new(
            Role::Assistant,
            vec![
                text("The sum "),
                text("is next."),
                Block::ToolUse(ToolUse::new("call_a", "add", json!({"a": 2, "b": 2}))),
                text("Then 3+3."),
            ],
        ),
        Message::new(
            Role::User,
            vec![
                Block::ToolResult(ToolResultBlock::text("call_a", "4", false)),
                text("Turn 1 of 25."),
                text("Budget left: 100."),
            ],
        ),
    ];
    let server = Server::start(vec![Reply::ok(openai_completion(Some("4 and 6."), &[], "stop"))], false).await;
    let outcome = Agent::new(client(&server, false), registry())
        .run_cancellable(transcript, &tool_runtime::Cancellation::new())
        .await;
    assert_eq!(outcome.stop, StopReason::EndTurn, "{:?}", outcome.error);
    let messages = server.requests()[0].body["messages"].as_array().unwrap().clone();
    assert_eq!(
        messages[1],
        json!({"role": "user", "content": "what is 2+2\n\nand 3+3"})
    );
    assert_eq!(messages[2]["content"], "The sum is next.\n\nThen 3+3.");
    assert_eq!(messages[3]["role"], "tool");
    assert_eq!(
        messages[4],
        json!({"role": "user", "content": "Turn 1 of 25.\n\nBudget left: 100."})
    );
}

/// `content` sent as a list of parts (Mistral's reasoning models: a
/// `thinking` part, then `text`), whole or in each delta, is its text
/// parts' text; the thinking is not the answer. A `content` of any other
/// kind is a malformed answer, never dropped.
#[tokio::test]
async fn content_sent_as_parts_is_read_and_other_content_is_malformed() {
    let thinking = json!({"type": "thinking", "thinking": [{"type": "text", "text": "2 and 2 make 4."}]});
    let mut whole = openai_completion(None, &[], "stop");
    whole["choices"][0]["message"]["content"] =
        json!([thinking, {"type": "text", "text": "It is "}, {"type": "text", "text": "4."}]);
    let streamed = Reply::sse(vec![
        (
            None,
            chunk(json!({"role": "assistant", "content": [thinking]}), json!(null)),
        ),
        (
            None,
            chunk(json!({"content": [{"type": "text", "text": "It is "}]}), json!(null)),
        ),
        (
            None,
            chunk(json!({"content": [{"type": "text", "text": "4."}]}), json!(null)),
        ),
        (None, chunk(json!({}), json!("stop"))),
        (None, "[DONE]".to_owned()),
    ]);
    for (reply, stream) in [(Reply::ok(whole), false), (streamed, true)] {
        let server = Server::start(vec![reply], false).await;
        let (shown, collect) = collected(|event| match event {
            AgentEvent::Text(text) => Some(text),
            _ => None,
        });
        let outcome = Agent::new(client(&server, stream), registry())
            .on_event(collect)
            .run("What is 2+2?")
            .await;
        assert_eq!(
            outcome.stop,
            StopReason::EndTurn,
            "stream {stream}: {:?}",
            outcome.error
        );
        assert_eq!(outcome.text, "It is 4.", "stream {stream}");
        assert_eq!(*shown.lock().unwrap(), "It is 4.", "stream {stream}");
    }

    for content in [
        json!(7),
        json!({"text": "It is 4."}),
        json!(true),
        json!([{"type": "text", "text": 4}]),
    ] {
        let mut whole = openai_completion(None, &[], "stop");
        whole["choices"][0]["message"]["content"] = content.clone();
        let streamed = Reply::sse(vec![
            (
                None,
                chunk(json!({"role": "assistant", "content": content}), json!(null)),
            ),
            (None, chunk(json!({}), json!("stop"))),
            (None, "[DONE]".to_owned()),
        ]);
        for (reply, stream) in [(Reply::ok(whole), false), (streamed, true)] {
            let error = model_error(reply, stream).await;
            assert_eq!(error.kind(), ModelErrorKind::MalformedResponse, "{content}: {error}");
            assert!(error.message().contains("content"), "{content}: {error}");
        }
    }
}

/// Only the choice of `index` 0 (or none) is the answer, whichever place a
/// chunk gives it: the text and finish_reason of another choice (a server
/// streaming `n > 1` choices, one a chunk) are not the answer's, and a call
/// in another choice is an error, never run as the answer's.
#[tokio::test]
async fn a_streamed_choice_of_another_index_is_not_the_answer() {
    let other = |delta: serde_json::Value, finish: serde_json::Value| {
        json!({"id": "chatcmpl-1", "object": "chat.completion.chunk",
               "choices": [{"index": 1, "delta": delta, "finish_reason": finish}]})
        .to_string()
    };
    let reply = Reply::sse(vec![
        (
            None,
            chunk(json!({"role": "assistant", "content": "Hello"}), json!(null)),
        ),
        (
            None,
            other(json!({"role": "assistant", "content": "Bonjour"}), json!(null)),
        ),
        (None, other(json!({}), json!("stop"))),
        (None, chunk(json!({"content": " there."}), json!(null))),
        (None, chunk(json!({}), json!("stop"))),
        (None, "[DONE]".to_owned()),
    ]);
    let server = Server::start(vec![reply], false).await;
    let outcome = Agent::new(client(&server, true), registry()).run("Hi").await;
    assert_eq!(outcome.stop, StopReason::EndTurn, "{:?}", outcome.error);
    assert_eq!(outcome.text, "Hello there.");

    let call = json!([{"index": 0, "id": "call_a", "type": "function", "function": {"name": "add", "arguments": "{\"a\": 1, \"b\": 2}"}}]);
    let reply = Reply::sse(vec![
        (
            None,
            chunk(json!({"role": "assistant", "content": "Adding."}), json!(null)),
        ),
        (None, other(json!({"tool_calls": call}), json!(null))),
        (None, other(json!({}), json!("tool_calls"))),
        (None, chunk(json!({}), json!("stop"))),
        (None, "[DONE]".to_owned()),
    ]);
    let started = Arc::new(Mutex::new(0));
    let seen = started.clone();
    let server = Server::start(vec![reply], false).await;
    let outcome = Agent::new(client(&server, true).retry(RetryPolicy::none()), registry())
        .on_event(move |event| {
            if matches!(event, AgentEvent::ToolCallStarted { .. }) {
                *seen.lock().unwrap() += 1;
            }
        })
        .run("Add")
        .await;
    assert_eq!(outcome.stop, StopReason::ModelError);
    let error = outcome.error.unwrap();
    assert_eq!(error.kind(), ModelErrorKind::MalformedResponse, "{error}");
    assert_eq!(*started.lock().unwrap(), 0, "the other choice's call never ran");
    assert_transcript_valid(&outcome.transcript);
}

/// The reasoning DeepSeek and Kimi return (`reasoning_content`) and the
/// `extra_content` Gemini puts on a call (its thought signature) go back
/// with the assistant message of the next request, which those servers
/// refuse without them; streamed, the reasoning is shown as thinking. A
/// transcript saved and read back keeps them, and a run that continues it
/// sends them again.
#[tokio::test]
async fn reasoning_and_a_call_s_extra_content_go_back_on_the_next_turn() {
    use tool_runtime::model::Message;
    let reasoning = "2 and 3: add them.";
    let signature = json!({"google": {"thought_signature": "c2lnLWE="}});
    let args = "{\"a\": 2, \"b\": 3}";
    let mut whole = openai_completion(None, &[("call_a", "add", args)], "tool_calls");
    whole["choices"][0]["message"]["reasoning_content"] = json!(reasoning);
    whole["choices"][0]["message"]["tool_calls"][0]["extra_content"] = signature.clone();
    let streamed = Reply::sse(vec![
        (
            None,
            chunk(
                json!({"role": "assistant", "content": null, "reasoning_content": "2 and 3: "}),
                json!(null),
            ),
        ),
        (None, chunk(json!({"reasoning_content": "add them."}), json!(null))),
        (
            None,
            chunk(
                json!({"tool_calls": [{"index": 0, "id": "call_a", "type": "function",
                    "function": {"name": "add", "arguments": ""}, "extra_content": signature}]}),
                json!(null),
            ),
        ),
        (
            None,
            chunk(
                json!({"tool_calls": [{"index": 0, "function": {"arguments": args}}]}),
                json!(null),
            ),
        ),
        (None, chunk(json!({}), json!("tool_calls"))),
        (None, "[DONE]".to_owned()),
    ]);
    // The assistant message of a request, checked to carry both.
    let assert_sent_back = |request: &serde_json::Value, what: &str| {
        let messages = request["messages"].as_array().unwrap();
        let assistant = &messages[2];
        assert_eq!(assistant["role"], "assistant", "{what}");
        assert_eq!(assistant["reasoning_content"], reasoning, "{what}: {assistant}");
        assert_eq!(assistant["tool_calls"][0]["id"], "call_a", "{what}");
        assert_eq!(
            assistant["tool_calls"][0]["extra_content"], signature,
            "{what}: {assistant}"
        );
        assert_eq!(assistant["tool_calls"][0]["function"]["arguments"], args, "{what}");
        assert!(
            messages
                .iter()
                .filter(|m| m["role"] != "assistant")
                .all(|m| m.get("reasoning_content").is_none()),
            "{what}: only on the assistant message"
        );
    };
    let answer = |text: &str, stream: bool| {
        if stream {
            openai_stream(Some(text), &[], "stop")
        } else {
            Reply::ok(openai_completion(Some(text), &[], "stop"))
        }
    };
    for (reply, stream) in [(Reply::ok(whole), false), (streamed, true)] {
        let server = Server::start(vec![reply, answer("5.", stream)], false).await;
        let (thought, collect) = collected(|event| match event {
            AgentEvent::Thinking(text) => Some(text),
            _ => None,
        });
        let outcome = Agent::new(client(&server, stream), registry())
            .on_event(collect)
            .run("Add 2 and 3.")
            .await;
        assert_eq!(
            outcome.stop,
            StopReason::EndTurn,
            "stream {stream}: {:?}",
            outcome.error
        );
        assert_transcript_valid(&outcome.transcript);
        assert_openai_requests(&server, "sk-test");
        let requests = server.requests();
        assert_eq!(requests.len(), 2);
        assert_sent_back(&requests[1].body, &format!("stream {stream}"));
        if stream {
            assert_eq!(*thought.lock().unwrap(), reasoning);
        }

        let saved = serde_json::to_string(&outcome.transcript).unwrap();
        let mut transcript: Vec<Message> = serde_json::from_str(&saved).unwrap();
        assert_eq!(transcript, outcome.transcript, "stream {stream}: {saved}");
        transcript.push(Message::user("And 4 and 4?"));
        let server = Server::start(vec![answer("8.", stream)], false).await;
        let outcome = Agent::new(client(&server, stream), registry())
            .run_cancellable(transcript, &tool_runtime::Cancellation::new())
            .await;
        assert_eq!(outcome.stop, StopReason::EndTurn, "{:?}", outcome.error);
        assert_sent_back(&server.requests()[0].body, &format!("stream {stream}, read back"));
    }
}

/// A stream cut off after a call started keeps the call in the transcript
/// with the reasoning before it and the call's `extra_content`, so the
/// conversation passed back is one the server takes.
#[tokio::test]
async fn a_stream_cut_after_a_call_started_keeps_its_reasoning() {
    let signature = json!({"google": {"thought_signature": "c2lnLWE="}});
    let opener = |index: u64, id: &str, args: &str| {
        let mut call = json!({"index": index, "id": id, "type": "function",
            "function": {"name": "add", "arguments": args}});
        if index == 0 {
            call["extra_content"] = signature.clone();
        }
        Piece::Bytes(sse_event(None, &chunk(json!({"tool_calls": [call]}), json!(null))))
    };
    let reasoning = chunk(
        json!({"role": "assistant", "content": null, "reasoning_content": "Add twice."}),
        json!(null),
    );
    let server = Server::start(
        vec![Reply::StreamCut(vec![
            Piece::Bytes(sse_event(None, &reasoning)),
            opener(0, "call_a", "{\"a\": 2, \"b\": 3}"),
            // Opens the second call, so the first is complete and starts.
            opener(1, "call_b", "{\"a\": 4,"),
        ])],
        false,
    )
    .await;
    let outcome = Agent::new(client(&server, true).retry(RetryPolicy::none()), registry())
        .run("Add")
        .await;
    assert_eq!(outcome.stop, StopReason::ModelError);
    assert_transcript_valid(&outcome.transcript);
    assert_eq!(outcome.transcript.len(), 3, "{:?}", outcome.transcript);
    let sent = tool_runtime::model::openai::messages_json(&outcome.transcript[1]);
    assert_eq!(sent[0]["reasoning_content"], "Add twice.", "{sent:?}");
    assert_eq!(sent[0]["tool_calls"][0]["id"], "call_a");
    assert_eq!(sent[0]["tool_calls"][0]["extra_content"], signature);
}

/// Groq (gpt-oss, qwen3) returns reasoning as `reasoning` and refuses a
/// request that holds `reasoning_content`: the reasoning goes back in the
/// field it came in and no other, streamed or not, and again from a
/// transcript saved and read back. Told not to, the client sends none.
#[tokio::test]
async fn reasoning_goes_back_in_the_field_it_came_in() {
    use tool_runtime::model::Message;
    let args = "{\"a\": 2, \"b\": 3}";
    let mut whole = openai_completion(None, &[("call_a", "add", args)], "tool_calls");
    whole["choices"][0]["message"]["reasoning"] = json!("Add them.");
    let streamed = Reply::sse(vec![
        (
            None,
            chunk(
                json!({"role": "assistant", "content": null, "reasoning": "Add "}),
                json!(null),
            ),
        ),
        (None, chunk(json!({"reasoning": "them."}), json!(null))),
        (
            None,
            chunk(
                json!({"tool_calls": [{"index": 0, "id": "call_a", "type": "function",
                    "function": {"name": "add", "arguments": args}}]}),
                json!(null),
            ),
        ),
        (None, chunk(json!({}), json!("tool_calls"))),
        (None, "[DONE]".to_owned()),
    ]);
    // The assistant message of a request: its reasoning, in `reasoning`
    // only.
    let sent_back = |request: &serde_json::Value| {
        let assistant = request["messages"][2].clone();
        assert_eq!(assistant["role"], "assistant");
        assert!(assistant.get("reasoning_content").is_none(), "{assistant}");
        assistant["reasoning"].clone()
    };
    let answer = |stream: bool| {
        if stream {
            openai_stream(Some("5."), &[], "stop")
        } else {
            Reply::ok(openai_completion(Some("5."), &[], "stop"))
        }
    };
    for (reply, stream) in [(Reply::ok(whole), false), (streamed, true)] {
        let server = Server::start(vec![reply, answer(stream)], false).await;
        let outcome = Agent::new(client(&server, stream), registry())
            .run("Add 2 and 3.")
            .await;
        assert_eq!(
            outcome.stop,
            StopReason::EndTurn,
            "stream {stream}: {:?}",
            outcome.error
        );
        assert_eq!(sent_back(&server.requests()[1].body), "Add them.", "stream {stream}");

        let saved = serde_json::to_string(&outcome.transcript).unwrap();
        let mut transcript: Vec<Message> = serde_json::from_str(&saved).unwrap();
        transcript.push(Message::user("And 4 and 4?"));
        for send in [true, false] {
            let server = Server::start(vec![answer(stream)], false).await;
            let model = client(&server, stream).send_reasoning(send);
            let outcome = Agent::new(model, registry())
                .run_cancellable(transcript.clone(), &tool_runtime::Cancellation::new())
                .await;
            assert_eq!(outcome.stop, StopReason::EndTurn, "{:?}", outcome.error);
            let reasoning = sent_back(&server.requests()[0].body);
            let expected = if send {
                json!("Add them.")
            } else {
                serde_json::Value::Null
            };
            assert_eq!(reasoning, expected, "stream {stream}, read back, send {send}: {saved}");
        }
    }
}

/// Mistral refuses `stream_options` (422 `extra_forbidden`): the client can
/// leave it out, and reads the usage a server sends all the same.
#[tokio::test]
async fn a_streamed_request_can_leave_out_stream_options() {
    let server = Server::start(vec![openai_stream(Some("Hi."), &[], "stop")], false).await;
    let outcome = Agent::new(client(&server, true).stream_usage(false), registry())
        .run("Hi")
        .await;
    assert_eq!(outcome.stop, StopReason::EndTurn, "{:?}", outcome.error);
    let body = &server.requests()[0].body;
    assert_eq!(body["stream"], true);
    assert!(body.get("stream_options").is_none(), "{body}");
    assert_eq!(outcome.usage.output_tokens, 30, "usage the server sent anyway");
}

/// A gateway that merges two parallel calls at one index, the second
/// without an id, sends arguments that are two JSON objects one after the
/// other: the turn is a malformed stream naming the call, and no call runs
/// (never one call of bad arguments with the other silently gone).
#[tokio::test]
async fn calls_merged_at_one_index_are_a_malformed_stream() {
    let reply = Reply::sse(vec![
        (None, chunk(json!({"role": "assistant", "content": null}), json!(null))),
        (
            None,
            chunk(
                json!({"tool_calls": [{"index": 0, "id": "t1", "type": "function",
                    "function": {"name": "add", "arguments": "{\"a\":1,\"b\":2}"}}]}),
                json!(null),
            ),
        ),
        (
            None,
            chunk(
                json!({"tool_calls": [{"index": 0, "function": {"name": "", "arguments": "{\"a\":3,\"b\":4}"}}]}),
                json!(null),
            ),
        ),
        (None, chunk(json!({}), json!("tool_calls"))),
        (None, "[DONE]".to_owned()),
    ]);
    let server = Server::start(vec![reply, openai_stream(Some("3 and 7."), &[], "stop")], false).await;
    let started = Arc::new(Mutex::new(0));
    let seen = started.clone();
    let outcome = Agent::new(client(&server, true).retry(RetryPolicy::none()), registry())
        .on_event(move |event| {
            if matches!(event, AgentEvent::ToolCallStarted { .. }) {
                *seen.lock().unwrap() += 1;
            }
        })
        .run("Add 1 and 2, and 3 and 4.")
        .await;
    assert_eq!(outcome.stop, StopReason::ModelError, "{:?}", outcome.transcript);
    let error = outcome.error.unwrap();
    assert_eq!(error.kind(), ModelErrorKind::MalformedResponse, "{error}");
    assert!(error.message().contains("`t1` (`add`)"), "{error}");
    assert_eq!(*started.lock().unwrap(), 0);
    assert_eq!(server.requests().len(), 1);
    assert_transcript_valid(&outcome.transcript);
}

/// A stream that ends with `[DONE]` and no finish_reason never said its
/// turn was whole: a last call whose arguments are cut short does not run
/// (not even with its defaults), it is answered as cut off, and the run
/// stops as at max_tokens. A turn whose calls are all whole runs them:
/// some servers leave the finish_reason out (and send `""` for a call
/// without parameters).
#[tokio::test]
async fn a_stream_without_a_finish_reason_runs_no_call_cut_short() {
    let opener = |index: u64, id: &str, name: &str, args: &str| {
        chunk(
            json!({"tool_calls": [{"index": index, "id": id, "type": "function",
                "function": {"name": name, "arguments": args}}]}),
            json!(null),
        )
    };
    let without_finish = |last_args: &str| {
        Reply::sse(vec![
            (None, opener(0, "call_a", "add", "{\"a\": 2, \"b\": 3}")),
            (None, opener(1, "call_b", "repeat", last_args)),
            (None, "[DONE]".to_owned()),
        ])
    };
    let with_repeat = || {
        let mut registry = registry();
        registry.register(Repeat).unwrap();
        registry
    };
    for cut in ["{\"text\": \"ab", "{\"text\": \"ab\","] {
        let server = Server::start(vec![without_finish(cut)], false).await;
        let started = Arc::new(Mutex::new(Vec::new()));
        let seen = started.clone();
        let outcome = Agent::new(client(&server, true), with_repeat())
            .on_event(move |event| {
                if let AgentEvent::ToolCallStarted { id, .. } = event {
                    seen.lock().unwrap().push(id.clone());
                }
            })
            .run("Add, then repeat ab")
            .await;
        assert_eq!(outcome.stop, StopReason::MaxTokens, "{cut:?}: {:?}", outcome.error);
        assert_eq!(*started.lock().unwrap(), ["call_a"], "{cut:?}");
        assert_eq!(server.requests().len(), 1, "{cut:?}");
        assert_transcript_valid(&outcome.transcript);
        let results: Vec<_> = outcome.transcript[2].tool_results().collect();
        assert_eq!((results[0].to_text().as_str(), results[0].is_error), ("5", false));
        assert!(
            results[1].is_error && results[1].to_text().contains("not run"),
            "{cut:?}: {:?}",
            results[1]
        );
    }
    let server = Server::start(
        vec![
            without_finish("{\"text\": \"ab\"}"),
            openai_stream(Some("5, abab."), &[], "stop"),
        ],
        false,
    )
    .await;
    let outcome = Agent::new(client(&server, true), with_repeat())
        .run("Add, then repeat ab")
        .await;
    assert_eq!(outcome.stop, StopReason::EndTurn, "{:?}", outcome.error);
    let results: Vec<_> = outcome.transcript[2].tool_results().collect();
    assert_eq!(results[1].to_text(), "abab");
}

/// A refusal that follows streamed text is shown as it streams: the text
/// the events showed is the run's text, refusal included, not doubled.
#[tokio::test]
async fn a_refusal_after_streamed_text_is_shown() {
    let reply = Reply::sse(vec![
        (
            None,
            chunk(json!({"role": "assistant", "content": "Let me see. "}), json!(null)),
        ),
        (None, chunk(json!({"refusal": "I can't help "}), json!(null))),
        (None, chunk(json!({"refusal": "with that."}), json!(null))),
        (None, chunk(json!({}), json!("stop"))),
        (None, "[DONE]".to_owned()),
    ]);
    let server = Server::start(vec![reply], false).await;
    let (shown, collect) = collected(|event| match event {
        AgentEvent::Text(text) => Some(text),
        _ => None,
    });
    let outcome = Agent::new(client(&server, true), registry())
        .on_event(collect)
        .run("Help me.")
        .await;
    assert_eq!(outcome.stop, StopReason::Refusal, "{:?}", outcome.error);
    assert_eq!(outcome.text, "Let me see. I can't help with that.");
    assert_eq!(*shown.lock().unwrap(), outcome.text);
}

/// A redirect is not followed: the key never reaches the other address,
/// and the error names where the redirect points, with its status.
#[tokio::test]
async fn a_redirect_is_an_error_naming_where_it_points() {
    let elsewhere = Server::start(vec![Reply::ok(openai_completion(Some("Moved."), &[], "stop"))], true).await;
    let location = format!("{}/v1/chat/completions", elsewhere.url);
    let moved = || Reply::status(307, json!({})).with_header("location", &location);
    let server = Server::start(vec![moved(), moved()], false).await;
    let timed = client(&server, false).timeouts(Duration::from_secs(5), Duration::from_secs(5));
    for model in [client(&server, false), timed] {
        let outcome = Agent::new(model, registry()).run("Hi").await;
        let headers: Vec<_> = elsewhere.requests().into_iter().map(|r| r.headers).collect();
        assert!(headers.is_empty(), "followed, with {headers:?}");
        assert_eq!(outcome.stop, StopReason::ModelError);
        let error = outcome.error.unwrap();
        assert_eq!(error.status(), Some(307), "{error}");
        assert!(error.message().contains(&location), "{error}");
    }
    assert_eq!(server.requests().len(), 2, "each tried once");
}

/// A server that answers, then keeps the stream open with a comment now
/// and then and nothing else, never trips the read limit: the limit on an
/// attempt as a whole ends it, as a timeout.
#[tokio::test]
async fn a_stream_kept_open_with_comments_ends_at_the_total_timeout() {
    let url = trickling_server().await;
    let model = OpenAi::new("gpt-4.1")
        .base_url(format!("{url}/v1"))
        .api_key("sk-test")
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

//! A model that answers from a script: for tests and offline examples.

use std::collections::VecDeque;
use std::sync::Mutex;

use super::{Block, Message, Model, ModelError, ModelErrorKind, ModelFuture, ModelRequest, ModelResponse, StreamEvent};

/// A [`Model`] that replays responses in order and records every request's
/// messages. When the script runs out it answers with an error. Not for
/// production: it ignores what it is sent.
///
/// ```
/// use tool_runtime::model::{Block, ModelResponse, ModelStop, Scripted};
/// let model = Scripted::new([ModelResponse::new(vec![Block::Text { text: "Hi".into() }], ModelStop::EndTurn)]);
/// ```
#[derive(Debug, Default)]
pub struct Scripted {
    responses: Mutex<VecDeque<Result<ModelResponse, ModelError>>>,
    requests: Mutex<Vec<Vec<Message>>>,
    repeat_last: bool,
    strict_tools: bool,
}

impl Scripted {
    /// A model that gives these responses, one a turn.
    pub fn new(responses: impl IntoIterator<Item = ModelResponse>) -> Self {
        Scripted {
            responses: Mutex::new(responses.into_iter().map(Ok).collect()),
            ..Scripted::default()
        }
    }

    /// Also gives this response, after the responses (and errors) so far.
    pub fn then(self, response: ModelResponse) -> Self {
        lock(&self.responses).push_back(Ok(response));
        self
    }

    /// Also fails one turn with this error, after the responses so far.
    pub fn then_error(self, error: ModelError) -> Self {
        lock(&self.responses).push_back(Err(error));
        self
    }

    /// Repeats the last response forever instead of running out (a model
    /// that never stops calling tools).
    pub fn repeat_last(mut self) -> Self {
        self.repeat_last = true;
        self
    }

    /// Stands for a model sent strict tool definitions (see
    /// [`Model::sends_strict_tools`]): its `null` for an optional
    /// parameter means "not given". Nothing it is sent changes.
    pub fn strict_tools(mut self, on: bool) -> Self {
        self.strict_tools = on;
        self
    }

    /// The messages of every request so far.
    pub fn requests(&self) -> Vec<Vec<Message>> {
        lock(&self.requests).clone()
    }
}

fn lock<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}

impl Model for Scripted {
    fn respond<'a>(
        &'a self,
        request: ModelRequest<'a>,
        events: &'a mut (dyn FnMut(StreamEvent) + Send),
    ) -> ModelFuture<'a> {
        lock(&self.requests).push(request.messages.to_vec());
        let next = {
            let mut responses = lock(&self.responses);
            match responses.pop_front() {
                Some(Ok(response)) if self.repeat_last && responses.is_empty() => {
                    responses.push_back(Ok(response.clone()));
                    Ok(response)
                }
                Some(next) => next,
                None => Err(ModelError::new(
                    ModelErrorKind::Other,
                    "the script has no more responses",
                )),
            }
        };
        Box::pin(async move {
            let response = next?;
            for block in &response.content {
                match block {
                    Block::Text { text } => events(StreamEvent::Text(text.clone())),
                    Block::ToolUse(call) => events(StreamEvent::ToolUse(call.clone())),
                    Block::Thinking { .. } | Block::RedactedThinking { .. } | Block::Reasoning { .. } => {
                        events(StreamEvent::ThinkingDone(block.clone()))
                    }
                    _ => {}
                }
            }
            Ok(response)
        })
    }

    fn sends_strict_tools(&self) -> bool {
        self.strict_tools
    }
}

//! Running calls: binding, the time limit, panic isolation, cancellation,
//! and ordered concurrency for the calls of one model message.
//!
//! A call whose arguments are already exactly right, or need only the
//! commonest coercions of a parameter's own value (lenient mode), takes the
//! tool's typed fast path ([`Tool::invoke_fast`]); any other goes through
//! the full binder.
//! Both give the same result for the same arguments. What a call does not
//! need it does not pay for: a tool that takes no context gets none, a
//! future that finishes on its first poll never arms the timer, and a
//! registry without sequential tools takes no lock.

use std::any::Any;
use std::borrow::Cow;
use std::future::Future;
use std::panic::AssertUnwindSafe;
use std::sync::Arc;
use std::task::Poll;

use futures_util::FutureExt as _;
use futures_util::StreamExt as _;
use futures_util::stream::FuturesOrdered;
use tokio::sync::{Semaphore, SemaphorePermit};
use tokio::time::Instant;

use super::ToolRegistry;
use crate::bind::{BindMode, BoundArguments, Coerced, Report};
use crate::blocking::{HeldByBody, Work};
use crate::call::{Arguments, ToolCall};
use crate::codes::Warning;
use crate::context::{CallScope, Cancellation, Finished};
use crate::output::ToolOutput;
use crate::result::{Outcome, ToolResult};
use crate::schema::Shape;
use crate::text::{clip, panic_message};
use crate::tool::{Tool, ToolDefinition, ToolFuture};

impl ToolRegistry {
    /// Calls the tool `name` with `arguments` (a `serde_json::Value` or the
    /// raw JSON text a provider sent, owned or borrowed: see [`Arguments`]).
    /// Never fails: every problem is an `is_error` result the model can
    /// read. Like any future, it does nothing until awaited.
    ///
    /// Must run inside a Tokio runtime with the time driver enabled.
    pub fn call<'a>(&self, name: &str, arguments: impl Into<Arguments<'a>>) -> impl Future<Output = ToolResult> {
        self.dispatch(None, Cow::Borrowed(name), arguments.into(), Origin::CALLER)
    }

    /// Runs one call.
    pub fn call_one(&self, call: ToolCall) -> impl Future<Output = ToolResult> {
        self.dispatch(call.id, Cow::Owned(call.name), call.arguments.into(), Origin::CALLER)
    }

    /// Runs one call that the caller may stop by raising `cancellation`; a
    /// stopped call is a `Cancelled` error result.
    pub fn call_cancellable(&self, call: ToolCall, cancellation: &Cancellation) -> impl Future<Output = ToolResult> {
        self.dispatch(
            call.id,
            Cow::Owned(call.name),
            call.arguments.into(),
            Origin {
                external: Some(cancellation),
                ..Origin::CALLER
            },
        )
    }

    /// Runs the calls of one model message concurrently, at most the
    /// registry's concurrency limit at once (a `sequential` tool alone), and
    /// returns their results in the order of `calls`.
    ///
    /// Every call's time limit counts from this call, so time spent waiting
    /// for the concurrency limit counts against it; a call that finds no
    /// free slot within its limit is a `TimedOut` result and never runs. A
    /// call of no tool, or whose arguments the binder refuses, waits for no
    /// slot: it is answered at once.
    pub async fn call_all(&self, calls: impl IntoIterator<Item = ToolCall>) -> Vec<ToolResult> {
        let made = Instant::now();
        let slots = &self.slots();
        let run = |call: ToolCall| async move {
            match self.slot(slots, &call, made, None, false).await {
                Ok(_slot) => self.call_made(call, None, made, false).await,
                Err(not_started) => *not_started,
            }
        };
        calls
            .into_iter()
            .map(run)
            .collect::<FuturesOrdered<_>>()
            .collect()
            .await
    }

    /// The concurrency limit of one batch of calls: each call holds one of
    /// these slots while it runs.
    pub(crate) fn slots(&self) -> Slots {
        Slots(Semaphore::new(self.settings.concurrency.min(Semaphore::MAX_PERMITS)))
    }

    /// Waits for a free slot of `slots` for `call`, made at `made`: within
    /// its time limit, counted from `made`, and until the caller's
    /// `cancellation`. A call that gets none is answered here, never run,
    /// its answer cut to the output limit as a call's result is.
    ///
    /// A slot that is free at once costs no clock reading and no timer.
    pub(crate) async fn slot<'s>(
        &self,
        slots: &'s Slots,
        call: &ToolCall,
        made: Instant,
        cancellation: Option<&Cancellation>,
        strict_definitions: bool,
    ) -> Result<HeldSlot<'s>, Box<ToolResult>> {
        self.wait_for_slot(slots, call, made, cancellation, strict_definitions)
            .await
            .map_err(|mut answer| {
                self.cut_output(&mut answer);
                answer
            })
    }

    async fn wait_for_slot<'s>(
        &self,
        slots: &'s Slots,
        call: &ToolCall,
        made: Instant,
        cancellation: Option<&Cancellation>,
        strict_definitions: bool,
    ) -> Result<HeldSlot<'s>, Box<ToolResult>> {
        if let Ok(slot) = slots.0.try_acquire() {
            return Ok(HeldSlot { _permit: Some(slot) });
        }
        // A call that will run nothing need not wait, nor time out waiting:
        // a call of no tool goes on at once to be answered `unknown_tool`,
        // and one whose arguments the binder refuses is answered here with
        // their problems.
        let Some(tool) = self.find(&call.name) else {
            return Ok(HeldSlot { _permit: None });
        };
        if let Some(refused) = self.refusal(tool.get(), call, strict_definitions) {
            return Err(Box::new(refused));
        }
        let waited = Box::pin(self.wait(slots.0.acquire(), made, cancellation)).await;
        let name = &call.name;
        match waited {
            // An error only for a closed semaphore, and none is ever closed.
            Waited::Finished(slot) if !self.expired(made) => return Ok(HeldSlot { _permit: slot.ok() }),
            Waited::Cancelled => return Err(Box::new(not_started(name, call.id.clone()))),
            // No slot within the limit, or one freed only as it ran out.
            Waited::Finished(_) | Waited::TimedOut => {}
        }
        let limit = self.limit_seconds();
        let why = "other calls held every slot of the concurrency limit";
        Err(Box::new(not_started_in_time(name, call.id.clone(), limit, why)))
    }

    /// The answer to a call of `tool` whose arguments the binder refuses,
    /// found without taking a parameter or running anything; `None` when
    /// they are accepted. (A parameter type stricter than its schema may
    /// still refuse them when the call runs.)
    fn refusal(&self, tool: &dyn Tool, call: &ToolCall, strict_definitions: bool) -> Option<ToolResult> {
        let definition = tool.definition();
        let null_is_absent = self.settings.null_is_absent || strict_definitions;
        let report = match self.normalized(definition, (&call.arguments).into(), null_is_absent) {
            Ok((_, report)) if !report.refused() => return None,
            Ok((_, report)) => report,
            Err(error) => Report::error(error),
        };
        log_coerced(definition, &report.warnings, report.warning_count());
        Some(ToolResult::invalid_arguments(&call.name, call.id.clone(), report))
    }

    /// Runs one call made at `made`, its time limit counted from then (the
    /// wait for a [`slot`](Self::slot) included), stopped by the caller's
    /// `cancellation`. `strict_definitions`: the model that made it was
    /// sent strict definitions, so its `null` for an optional parameter
    /// means "not given", whatever the registry's own setting.
    pub(crate) fn call_made(
        &self,
        call: ToolCall,
        cancellation: Option<&Cancellation>,
        made: Instant,
        strict_definitions: bool,
    ) -> impl Future<Output = ToolResult> {
        let origin = Origin {
            external: cancellation,
            made: Some(made),
            strict_definitions,
        };
        self.dispatch(call.id, Cow::Owned(call.name), call.arguments.into(), origin)
    }

    /// The tool called `name`: a registered one, else a mounted one.
    fn find(&self, name: &str) -> Option<Found<'_>> {
        match self.registered(name) {
            Some(tool) => Some(Found::Native(tool)),
            None => self.mounted(name).map(Found::Mounted),
        }
    }

    /// The time limit in seconds, as results say it.
    fn limit_seconds(&self) -> f64 {
        self.settings.timeout.unwrap_or_default().as_secs_f64()
    }

    /// Whether the time limit of a call made at `made` has run out.
    fn expired(&self, made: Instant) -> bool {
        let end = self.settings.timeout.and_then(|t| made.checked_add(t));
        end.is_some_and(|end| Instant::now() >= end)
    }

    /// Finds the tool, binds the arguments and starts the call; a call that
    /// cannot start is answered at once.
    fn start(
        &self,
        id: Option<String>,
        name: &str,
        arguments: Arguments<'_>,
        external: Option<&Cancellation>,
        strict_definitions: bool,
    ) -> Result<Started<'_>, Box<ToolResult>> {
        if external.is_some_and(Cancellation::is_cancelled) {
            return Err(Box::new(not_started(name, id)));
        }
        // A mounted tool is held for the call: its server may replace it.
        // Only a native tool's result has a shape to check it against.
        let mounted;
        let mut output_shape = None;
        let tool = match self.registered(name) {
            Some(tool) => {
                output_shape = tool.definition().output_shape();
                tool
            }
            None => match self.mounted(name) {
                Some(tool) => {
                    mounted = tool;
                    &*mounted
                }
                None => {
                    let names = self.names();
                    let unknown = ToolResult::unknown_tool(name, id, names.iter().map(String::as_str));
                    return Err(Box::new(unknown));
                }
            },
        };
        let definition = tool.definition();
        // Only plain `fn` bodies count here; the MCP server bounds its own
        // stuck call threads apart (see `with_max_stray_blocking_calls`).
        if definition.is_blocking() {
            let stray = Work::ToolBody.stray_count();
            if stray >= self.settings.max_stray_blocking_calls {
                return Err(Box::new(overloaded(name, id, stray)));
            }
        }
        if let Err(e) = self.check_size(&arguments) {
            return Err(Box::new(ToolResult::invalid_arguments(name, id, Report::error(e))));
        }
        // The call's own signal, raised on time-out or when the caller's is:
        // the caller's signal is only ever read, so one call timing out never
        // cancels another that shares it. It exists only when someone can
        // raise it and the tool can see it.
        let own = (external.is_some() || definition.takes_context()).then(Cancellation::new);
        // In lenient mode the typed parse may make the commonest coercions
        // itself, recording their warnings here.
        let coerced = Coerced::default();
        let lenient = self.mode_for(definition) == BindMode::Lenient;
        // A body that never waits may run to its end here, unless a gate
        // of sequential tools must be passed first.
        let mut finished = Finished::default();
        let finish_now = !self.has_sequential && !definition.is_sequential();
        let scope = CallScope::new(id.as_deref(), name, own.as_ref(), &self.states)
            .with_null_as_absent(self.settings.null_is_absent || strict_definitions)
            .with_coercions(lenient.then_some(&coerced))
            .with_finish_now(finish_now.then_some(&finished));

        let fast = if self.settings.fast_path {
            match catch(|| tool.invoke_fast(&arguments, &scope)) {
                Ok(fast) => fast,
                // A body that ran here panicked after its arguments were
                // bound: its result keeps their warnings, as when it
                // panics on its first poll.
                Err(panic) if finished.began() => {
                    let warnings = fast_warnings(definition, coerced.into_warnings());
                    return Err(Box::new(panicked(name, id, panic).with_warnings(warnings)));
                }
                Err(panic) => return Err(Box::new(panicked(name, id, panic))),
            }
        } else {
            None
        };
        let (future, warnings) = match fast {
            Some(future) => {
                let run = match finished.take() {
                    Some(output) => Run::Finished(output),
                    None => Run::Future(future),
                };
                (run, fast_warnings(definition, coerced.into_warnings()))
            }
            None => match self.bind_and_invoke(tool, arguments, &scope) {
                Ok((future, warnings)) => (Run::Future(future), warnings),
                Err(Failure::Arguments(report)) => {
                    return Err(Box::new(ToolResult::invalid_arguments(name, id, report)));
                }
                Err(Failure::Panic(panic)) => return Err(Box::new(panicked(name, id, panic))),
            },
        };
        Ok(Started {
            // Found by this name: the result shares the definition's copy.
            name: definition.shared_name(),
            id,
            future,
            warnings,
            sequential: definition.is_sequential(),
            own,
            output_shape,
        })
    }

    /// The full binder: parse, normalize with warnings and errors, then take
    /// each parameter as its type.
    fn bind_and_invoke(
        &self,
        tool: &dyn Tool,
        arguments: Arguments<'_>,
        scope: &CallScope<'_>,
    ) -> Result<(ToolFuture, Vec<Warning>), Failure> {
        let definition = tool.definition();
        // The size was checked before the fast path.
        let (map, report) = self
            .normalized_within_size(definition, arguments, scope.null_is_absent())
            .map_err(|e| Failure::Arguments(Report::error(e)))?;
        log_coerced(definition, &report.warnings, report.warning_count());
        if report.refused() {
            return Err(Failure::Arguments(report));
        }
        match catch(|| tool.invoke(BoundArguments::new(map), scope)) {
            Ok(Ok(future)) => Ok((future, report.warnings)),
            Ok(Err(errors)) => Err(Failure::Arguments(Report { errors, ..report })),
            Err(panic) => Err(Failure::Panic(panic)),
        }
    }

    /// Runs one call to its end: starts it (see [`start`](Self::start);
    /// a call that cannot start is answered as it left it), then runs the
    /// tool within the time limit, counted from `origin.made` (`None`: now,
    /// read before the tool's first poll, so its work up to its first wait
    /// counts; a tool that finished while starting never waits and reads
    /// no clock), isolated from panics, stopped by the caller's
    /// cancellation; the text is cut to the output limit.
    ///
    /// The only async layer between a caller and the tool's own future:
    /// every call method returns this future as it is.
    async fn dispatch(
        &self,
        id: Option<String>,
        name: Cow<'_, str>,
        arguments: Arguments<'_>,
        origin: Origin<'_>,
    ) -> ToolResult {
        let Origin {
            external,
            made,
            strict_definitions,
        } = origin;
        let mut output_shape = None;
        let mut result = match self.start(id, &name, arguments, external, strict_definitions) {
            Err(refused) => *refused,
            Ok(started) => 'run: {
                let Started {
                    name,
                    id,
                    future,
                    warnings,
                    sequential,
                    own,
                    output_shape: shape,
                } = started;
                output_shape = shape;
                let future = match future {
                    Run::Finished(output) => break 'run ToolResult::from_output(name, id, output, warnings),
                    Run::Future(future) => future,
                };
                // Held until the call ends: shared for ordinary tools, exclusive for
                // sequential ones; not taken at all while no tool is sequential.
                // Declared before the tool's future, so the future is dropped (its
                // clean-up run) before another sequential call may start. A plain
                // `fn` body takes it over, and holds it until it ends even when
                // its call was given up before (see `HeldByBody`).
                let gate;
                // From here on, a panic in the tool's `Drop` is caught wherever the
                // future is dropped: finished, stopped, or never started.
                let mut run = Guarded(Some(future), None);
                let signals = Signals {
                    own: own.as_ref(),
                    external,
                    made,
                };
                // A call dropped before its tool finished (a caller's own time-out
                // or `select!` around it) stops the tool as a time-out does.
                // Declared after the future, so the signal is raised before the
                // future is dropped.
                let mut abandoned = RaiseOnDrop(signals.own);
                // Waiting for the gate counts against the time limit and ends when
                // the caller cancels; the tool then never starts.
                let made = signals.made.unwrap_or_else(Instant::now);
                if sequential || self.has_sequential {
                    let taken = async {
                        if sequential {
                            HeldByBody::new(self.gate.clone().write_owned().await)
                        } else {
                            HeldByBody::new(self.gate.clone().read_owned().await)
                        }
                    };
                    match Box::pin(self.wait(taken, made, signals.external)).await {
                        Waited::Finished(taken) if !self.expired(made) => {
                            gate = taken;
                            run.1 = Some(&gate);
                        }
                        // Not in time, or only just as the limit ran out.
                        Waited::Finished(_) | Waited::TimedOut => {
                            let limit = self.limit_seconds();
                            break 'run not_started_in_time(&name, id, limit, "other calls held it")
                                .with_warnings(warnings);
                        }
                        Waited::Cancelled => break 'run not_started(&name, id).with_warnings(warnings),
                    }
                }
                if signals.external.is_some_and(Cancellation::is_cancelled) {
                    break 'run not_started(&name, id).with_warnings(warnings);
                }
                // Most tools finish on their first poll; only the others need a timer.
                let first = std::future::poll_fn(|cx| Poll::Ready(run.poll_unpin(cx))).await;
                let finished = match first {
                    Poll::Ready(finished) => finished,
                    // Boxed: the timer and the cancellation wait are large, and a
                    // call that finished at once should not carry them.
                    Poll::Pending => {
                        let waited = Box::pin(self.wait(&mut run, made, signals.external)).await;
                        match waited {
                            Waited::Finished(finished) => finished,
                            Waited::TimedOut => {
                                let limit = self.limit_seconds();
                                signals.raise_own();
                                let text =
                                    format!("The tool `{name}` did not finish within {limit} seconds and was stopped.");
                                break 'run ToolResult::failure(&name, id, Outcome::TimedOut, text)
                                    .with_warnings(warnings);
                            }
                            Waited::Cancelled => {
                                signals.raise_own();
                                let text = format!("The call of `{name}` was cancelled before it finished.");
                                break 'run ToolResult::failure(&name, id, Outcome::Cancelled, text)
                                    .with_warnings(warnings);
                            }
                        }
                    }
                };
                abandoned.0 = None;
                match finished {
                    Ok(output) => ToolResult::from_output(name, id, output, warnings),
                    Err(panic) => panicked(&name, id, panic).with_warnings(warnings),
                }
            }
        };
        self.cut_output(&mut result);
        if let Some(shape) = output_shape {
            result.check_structured(shape);
        }
        result
    }

    /// Cuts `result`'s text to the registry's output limit: every result a
    /// model reads passes here, the ones a caller made included.
    pub(crate) fn cut_output(&self, result: &mut ToolResult) {
        if let Some(max) = self.settings.max_output_bytes {
            result.cut_text(max);
        }
    }

    /// Waits for `run` until the time limit, counted from `made`, or the
    /// caller's cancellation.
    async fn wait<F: Future>(&self, run: F, made: Instant, signal: Option<&Cancellation>) -> Waited<F::Output> {
        // A limit too far off to be a point in time (`Duration::MAX`) is
        // none.
        let deadline = self.settings.timeout.and_then(|t| made.checked_add(t));
        let limit = async {
            match deadline {
                Some(deadline) => tokio::time::sleep_until(deadline).await,
                None => std::future::pending().await,
            }
        };
        let cancelled = async {
            match signal {
                Some(signal) => signal.cancelled().await,
                None => std::future::pending().await,
            }
        };
        tokio::select! {
            // A call that finished wins over a limit reached in the same poll.
            biased;
            finished = run => Waited::Finished(finished),
            () = limit => Waited::TimedOut,
            () = cancelled => Waited::Cancelled,
        }
    }
}

/// A call whose tool has started: what its end needs.
struct Started<'r> {
    name: Arc<str>,
    id: Option<String>,
    future: Run,
    warnings: Vec<Warning>,
    sequential: bool,
    /// The call's own cancellation signal, when it has one.
    own: Option<Cancellation>,
    /// The shape of the tool's structured result, to check it against.
    output_shape: Option<&'r Shape>,
}

/// A tool found by its name. A mounted tool is held for the call: its
/// server may replace it meanwhile.
enum Found<'r> {
    Native(&'r dyn Tool),
    Mounted(Arc<dyn Tool>),
}

impl Found<'_> {
    fn get(&self) -> &dyn Tool {
        match self {
            Found::Native(tool) => *tool,
            Found::Mounted(tool) => &**tool,
        }
    }
}

/// A started call's tool: still to run, or finished while starting.
enum Run {
    Future(ToolFuture),
    Finished(ToolOutput),
}

/// The concurrency limit shared by a batch of calls (see
/// [`ToolRegistry::slots`]).
pub(crate) struct Slots(Semaphore);

/// A call's hold on one of its batch's [`Slots`], released when dropped.
pub(crate) struct HeldSlot<'s> {
    _permit: Option<SemaphorePermit<'s>>,
}

/// Where a call comes from, beyond its name and arguments.
#[derive(Clone, Copy)]
struct Origin<'a> {
    /// The caller's cancellation signal.
    external: Option<&'a Cancellation>,
    /// When the call was made, if before it came to the registry.
    made: Option<Instant>,
    /// The model that made it was sent strict definitions (see
    /// [`ToolRegistry::with_strict_definitions`]).
    strict_definitions: bool,
}

impl Origin<'_> {
    /// A call made now by the registry's caller, who can stop it only by
    /// dropping it.
    const CALLER: Self = Origin {
        external: None,
        made: None,
        strict_definitions: false,
    };
}

/// The signals of one call: its own (seen by the tool) and the caller's,
/// and when it was made, if that was before it came to the registry.
#[derive(Clone, Copy)]
struct Signals<'a> {
    own: Option<&'a Cancellation>,
    external: Option<&'a Cancellation>,
    made: Option<Instant>,
}

impl Signals<'_> {
    fn raise_own(&self) {
        if let Some(own) = self.own {
            own.cancel();
        }
    }
}

/// Raises a call's own signal when dropped, unless emptied first.
struct RaiseOnDrop<'a>(Option<&'a Cancellation>);

impl Drop for RaiseOnDrop<'_> {
    fn drop(&mut self) {
        if let Some(own) = self.0 {
            own.cancel();
        }
    }
}

enum Waited<T> {
    Finished(T),
    TimedOut,
    Cancelled,
}

enum Failure {
    Arguments(Report),
    Panic(Box<dyn Any + Send>),
}

/// The warnings of the typed parse's coercions, in the binder's order (the
/// parameters' order, not the keys'), logged as the binder's are.
#[inline]
fn fast_warnings(definition: &ToolDefinition, mut warnings: Vec<Warning>) -> Vec<Warning> {
    if warnings.is_empty() {
        return warnings;
    }
    if warnings.len() > 1 {
        let fields = &definition.params().fields;
        warnings.sort_by_key(|w| fields.iter().position(|f| f.name == w.path));
    }
    log_coerced(definition, &warnings, warnings.len());
    warnings
}

/// One event per call, however many values were coerced.
fn log_coerced(definition: &ToolDefinition, warnings: &[Warning], count: usize) {
    if let Some(first) = warnings.first() {
        tracing::warn!(tool = %definition.name(), warnings = count, first = %first, "tool arguments coerced");
    }
}

/// Runs the synchronous start of a call (taking the parameters, a plain
/// `fn` tool's body), catching a panic.
fn catch<T>(start: impl FnOnce() -> T) -> std::thread::Result<T> {
    std::panic::catch_unwind(AssertUnwindSafe(start))
}

/// A plain `fn` tool refused while too many such bodies are still running.
fn overloaded(name: &str, id: Option<String>, stray: usize) -> ToolResult {
    let text = format!(
        "The tool `{name}` was not run: {stray} earlier calls of blocking tools are still running past their time limit. Try again later."
    );
    ToolResult::failure(name, id, Outcome::Overloaded, text)
}

/// A call that could not start within its time limit of `limit` seconds,
/// and `why`: the tool never ran.
fn not_started_in_time(name: &str, id: Option<String>, limit: f64, why: &str) -> ToolResult {
    let name = clip(name);
    let text = format!("The tool `{name}` could not start within {limit} seconds ({why}) and was not run.");
    ToolResult::failure(&name, id, Outcome::TimedOut, text)
}

/// A call cancelled before its tool started: the tool never ran.
fn not_started(name: &str, id: Option<String>) -> ToolResult {
    // Also answers a call cancelled before its name was looked up.
    let name = clip(name);
    let text = format!("The call of `{name}` was cancelled before it started; the tool was not run.");
    ToolResult::failure(&name, id, Outcome::Cancelled, text)
}

/// A tool's future, polled and dropped where a panic in either is caught:
/// a panic while polling is the call's result, and one in a `Drop` of the
/// tool's (when it finishes, or is stopped) never reaches the caller. It is
/// polled with the gate the call holds, if any, for a plain `fn` body to
/// take over.
struct Guarded<'g>(Option<ToolFuture>, Option<&'g Arc<HeldByBody>>);

impl Future for Guarded<'_> {
    type Output = Result<ToolOutput, Box<dyn Any + Send>>;

    fn poll(mut self: std::pin::Pin<&mut Self>, cx: &mut std::task::Context<'_>) -> Poll<Self::Output> {
        let Guarded(slot, gate) = &mut *self;
        let polled = std::panic::catch_unwind(AssertUnwindSafe(|| {
            let Some(future) = slot else {
                panic!("a tool's future was polled after it finished")
            };
            let polled = match gate {
                Some(gate) => gate.scope(|| future.as_mut().poll(cx)),
                None => future.as_mut().poll(cx),
            };
            if polled.is_ready() {
                *slot = None;
            }
            polled
        }));
        match polled {
            Ok(polled) => polled.map(Ok),
            Err(panic) => {
                drop_quietly(self.0.take());
                Poll::Ready(Err(panic))
            }
        }
    }
}

impl Drop for Guarded<'_> {
    fn drop(&mut self) {
        if let Some(future) = self.0.take() {
            drop_quietly(future);
        }
    }
}

/// Drops what a tool left behind (its future, a panic's payload) where a
/// panic in a `Drop` of the tool's cannot reach the caller; what such a
/// panic carries is leaked, not dropped, so it cannot panic again.
fn drop_quietly<T>(value: T) {
    if let Err(payload) = std::panic::catch_unwind(AssertUnwindSafe(move || drop(value))) {
        std::mem::forget(payload);
    }
}

/// The result of a call whose tool panicked; the panic's payload is dropped
/// where a panic in its own `Drop` cannot reach the caller.
fn panicked(name: &str, id: Option<String>, panic: Box<dyn Any + Send>) -> ToolResult {
    let message = panic_message(&*panic);
    drop_quietly(panic);
    tracing::error!(tool = %name, panic = %message, "tool panicked");
    let text = format!("The tool `{name}` failed unexpectedly (it panicked: {message}).");
    ToolResult::failure(name, id, Outcome::Panicked, text)
}

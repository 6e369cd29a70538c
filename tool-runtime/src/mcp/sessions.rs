//! The HTTP endpoint's sessions, bounded in number and ended when idle.
//!
//! rmcp keeps every session a client opens until the client ends it; a
//! client that opens sessions in a loop would otherwise grow the server
//! without limit. [`Sessions`] is rmcp's own in-memory manager with two
//! rules added: at most `max` sessions are open, and a session ends once
//! it has been idle for `idle`. Idle means no request came for that long
//! and none of its event streams is open: a session whose call is still
//! running (its response stream is open) or whose client listens on its
//! `GET` stream is never idle, however long that lasts. (rmcp's own idle
//! timer, which knows of neither, is off.)
//!
//! While `max` are open, a new session takes the place of one that was
//! never used: initialized, but no request made in it since, no stream
//! open, and nothing heard from its client for a moment (ten seconds, or
//! half the idle time if shorter: a client between its `initialize` and
//! its first request keeps its place); the one waiting longest goes. So a
//! client that opens sessions in a loop, and never uses them, takes no
//! place from a client that does; when no session can go, a new one is
//! refused.
//!
//! A request whose id is that of a request still running in the session
//! is refused (see [`Sessions::running`]): rmcp would let the second one's
//! answer take the first one's place, and the first one's stream would
//! wait for ever. A request runs until its answer passes one of the
//! session's streams, or a moment after its client cancels it (a cancelled
//! request is never answered). The moment is the time its call is given
//! to end, and one second more: rmcp sends on the answer of a request of
//! the same id made before the cancelled one's handler ends, so that
//! request would get the cancelled one's answer. One whose stream was
//! dropped, and whose answer is never taken up, keeps its id, which MCP
//! forbids using again in the session anyway.
//!
//! rmcp's priming events (an event with an id, a `retry` and empty data,
//! sent first on every stream so that a client may resume it) are off too:
//! clients older than protocol 2025-11-25 read the empty data as a message
//! and fail.

use std::collections::{HashMap, HashSet};
use std::fmt;
use std::sync::{Arc, Mutex, Weak};
use std::time::{Duration, Instant};

use futures_util::{Stream, StreamExt as _};
use rmcp::model::{ClientJsonRpcMessage, ClientNotification, JsonRpcMessage, RequestId, ServerJsonRpcMessage};
use rmcp::transport::streamable_http_server::session::local::{LocalSessionManager, LocalSessionManagerError};
use rmcp::transport::streamable_http_server::session::{
    EventStore, RestoreOutcome, ServerSseMessage, SessionId, SessionManager,
};

use super::server::CANCEL_GRACE;

/// rmcp's in-memory session manager, keeping at most `max` sessions open
/// (see above for which one a new session replaces) and ending a session
/// idle for `idle`.
pub(super) struct Sessions {
    inner: LocalSessionManager,
    max: usize,
    /// Held while a session is made.
    creating: tokio::sync::Mutex<()>,
    idle: Duration,
    /// How long an unused session keeps its place after its client was
    /// last heard from.
    grace: Duration,
    /// What each open session is doing, to tell when it is idle.
    activity: Mutex<HashMap<SessionId, Activity>>,
    /// Whether the task that ends idle sessions runs.
    reaping: std::sync::atomic::AtomicBool,
    /// This manager, for the streams' guards and the reaping task, which
    /// must not keep it alive.
    me: Weak<Sessions>,
}

/// The event streams a session has open, when it was last used, whether
/// a request was ever made in it, the ids of the requests whose answer has
/// not gone out yet, and those of cancelled requests with when they may be
/// used again.
struct Activity {
    streams: usize,
    since: Instant,
    used: bool,
    running: HashSet<RequestId>,
    cancelled: HashMap<RequestId, Instant>,
}

/// How long the id of a cancelled request stays taken: the time its call
/// is given to end, and a margin for its handler's answer to reach rmcp.
const CANCELLED_ID_HELD: Duration = CANCEL_GRACE.saturating_add(Duration::from_secs(1));

impl Activity {
    fn new(now: Instant) -> Self {
        Activity {
            streams: 0,
            since: now,
            used: false,
            running: HashSet::new(),
            cancelled: HashMap::new(),
        }
    }

    /// Whether the id `request` is taken at `now`: its request is running,
    /// or was cancelled a moment ago.
    fn holds(&self, request: &RequestId, now: Instant) -> bool {
        self.running.contains(request) || self.cancelled.get(request).is_some_and(|&free| now < free)
    }

    /// Notes that the client cancelled `request`: its id stays taken a
    /// moment (see [`CANCELLED_ID_HELD`]). Cancelled ids whose moment is
    /// over are forgotten, so the map holds only those of the last moment.
    fn cancel(&mut self, request: RequestId, now: Instant) {
        self.cancelled.retain(|_, free| now < *free);
        if self.running.remove(&request) {
            self.cancelled.insert(request, now + CANCELLED_ID_HELD);
        }
    }
}

impl Sessions {
    pub(super) fn new(max: usize, idle: Duration) -> Arc<Self> {
        let mut inner = LocalSessionManager::default();
        // Sessions end when idle as this manager sees it (see above).
        inner.session_config.keep_alive = None;
        // No priming events (see above).
        inner.session_config.sse_retry = None;
        Arc::new_cyclic(|me| Sessions {
            inner,
            max,
            creating: tokio::sync::Mutex::new(()),
            idle,
            grace: (idle / 2).min(Duration::from_secs(10)),
            activity: Mutex::new(HashMap::new()),
            reaping: std::sync::atomic::AtomicBool::new(false),
            me: me.clone(),
        })
    }

    /// Makes a session with `make`, in place of an unused one when every
    /// place is taken, unless none is unused; one at a time, so that two
    /// made at once cannot both take the last place.
    async fn within_max<T>(
        &self,
        make: impl Future<Output = Result<(SessionId, T), LocalSessionManagerError>>,
    ) -> Result<(SessionId, T), SessionError> {
        let _creating = self.creating.lock().await;
        // A loop: closing a session listed here that rmcp has already
        // ended frees no place.
        while self.full().await {
            let Some(unused) = self.take_unused() else {
                return Err(SessionError::Full(self.max));
            };
            tracing::debug!(session = %unused, "ending an unused MCP session to make room for a new one");
            self.inner.close_session(&unused).await?;
        }
        let (id, made) = make.await?;
        self.activity().insert(id.clone(), Activity::new(Instant::now()));
        self.start_reaping();
        Ok((id, made))
    }

    /// Whether a new session would be refused: every place is taken, and
    /// no open session may make room.
    pub(super) async fn refuses_new(&self) -> bool {
        let now = Instant::now();
        self.full().await && !self.activity().values().any(|a| self.may_go(a, now))
    }

    /// Whether a session may make room for a new one.
    fn may_go(&self, activity: &Activity, now: Instant) -> bool {
        !activity.used && activity.streams == 0 && now.saturating_duration_since(activity.since) >= self.grace
    }

    async fn full(&self) -> bool {
        self.inner.sessions.read().await.len() >= self.max
    }

    /// The unused session that has waited longest, forgotten here.
    fn take_unused(&self) -> Option<SessionId> {
        let now = Instant::now();
        let mut activity = self.activity();
        let id = activity
            .iter()
            .filter(|(_, a)| self.may_go(a, now))
            .min_by_key(|(_, a)| a.since)
            .map(|(id, _)| id.clone())?;
        activity.remove(&id);
        Some(id)
    }

    fn activity(&self) -> std::sync::MutexGuard<'_, HashMap<SessionId, Activity>> {
        // The map is never left half-changed, so a panic elsewhere while
        // it was held leaves nothing wrong in it.
        self.activity.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// Notes that the session was used now (an unknown id is not added).
    fn touch(&self, id: &SessionId) {
        if let Some(activity) = self.activity().get_mut(id) {
            activity.since = Instant::now();
        }
    }

    /// Counts an event stream of the session as open until the guard
    /// returned is dropped; the session has been used. A request's id is
    /// held as running (until its answer passes a stream, see
    /// [`StreamGuard::saw`]), and a request of an id still taken (see
    /// [`Activity::holds`]) gets no guard.
    fn hold(&self, id: &SessionId, request: Option<&RequestId>) -> Result<StreamGuard, SessionError> {
        if let Some(activity) = self.activity().get_mut(id) {
            let now = Instant::now();
            if let Some(request) = request {
                if activity.holds(request, now) {
                    return Err(SessionError::Running(request.clone()));
                }
                activity.running.insert(request.clone());
            }
            activity.streams += 1;
            activity.since = now;
            activity.used = true;
        }
        Ok(StreamGuard {
            sessions: self.me.clone(),
            id: id.clone(),
        })
    }

    /// Whether a request of id `request` is running in session `id`: the
    /// stream of its answer is open. Another request of that id is
    /// refused until it ends.
    pub(super) fn running(&self, id: &SessionId, request: &RequestId) -> bool {
        self.activity()
            .get(id)
            .is_some_and(|a| a.holds(request, Instant::now()))
    }

    /// Starts, once, the task that ends idle sessions. It holds the
    /// manager only while it looks, and ends with it.
    fn start_reaping(&self) {
        use std::sync::atomic::Ordering;
        if self.reaping.swap(true, Ordering::SeqCst) {
            return;
        }
        // Looked at a few times an idle period, so a session ends at most
        // a quarter late (a minute at most).
        let every = (self.idle / 4).clamp(Duration::from_millis(10), Duration::from_secs(60));
        let me = self.me.clone();
        tokio::spawn(async move {
            loop {
                tokio::time::sleep(every).await;
                let Some(sessions) = me.upgrade() else {
                    return;
                };
                for id in sessions.idle_sessions() {
                    tracing::debug!(session = %id, "ending an idle MCP session");
                    if let Err(e) = sessions.inner.close_session(&id).await {
                        tracing::warn!(session = %id, "could not end an idle MCP session: {e}");
                    }
                }
            }
        });
    }

    /// The sessions idle for longer than `idle`, forgotten here.
    fn idle_sessions(&self) -> Vec<SessionId> {
        let now = Instant::now();
        let mut activity = self.activity();
        let idle: Vec<SessionId> = activity
            .iter()
            .filter(|(_, a)| a.streams == 0 && now.saturating_duration_since(a.since) >= self.idle)
            .map(|(id, _)| id.clone())
            .collect();
        for id in &idle {
            activity.remove(id);
        }
        idle
    }
}

/// Counts one open event stream of a session until dropped.
struct StreamGuard {
    sessions: Weak<Sessions>,
    id: SessionId,
}

impl StreamGuard {
    /// Notes a message going out on the stream: an answer ends its
    /// request's run.
    fn saw(&self, message: &ServerSseMessage) {
        let answered = match message.message.as_deref() {
            Some(JsonRpcMessage::Response(response)) => Some(&response.id),
            Some(JsonRpcMessage::Error(error)) => error.id.as_ref(),
            _ => None,
        };
        if let Some(request) = answered
            && let Some(sessions) = self.sessions.upgrade()
            && let Some(activity) = sessions.activity().get_mut(&self.id)
        {
            activity.running.remove(request);
        }
    }
}

/// `stream`, counted as open until it is dropped, its answers noted.
fn guarded<S: Stream<Item = ServerSseMessage> + Send + Sync + 'static>(
    stream: S,
    guard: StreamGuard,
) -> impl Stream<Item = ServerSseMessage> + Send + Sync + 'static {
    stream.map(move |message| {
        guard.saw(&message);
        message
    })
}

impl Drop for StreamGuard {
    fn drop(&mut self) {
        if let Some(sessions) = self.sessions.upgrade()
            && let Some(activity) = sessions.activity().get_mut(&self.id)
        {
            activity.streams = activity.streams.saturating_sub(1);
            activity.since = Instant::now();
        }
    }
}

/// Why a session could not be made or used.
#[derive(Debug)]
pub(super) enum SessionError {
    /// Every place was taken.
    Full(usize),
    /// A request of this id is still running in the session.
    Running(RequestId),
    Local(LocalSessionManagerError),
}

impl From<LocalSessionManagerError> for SessionError {
    fn from(e: LocalSessionManagerError) -> Self {
        SessionError::Local(e)
    }
}

impl fmt::Display for SessionError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            SessionError::Full(max) => write!(
                f,
                "{max} sessions are open, the most this server allows; end one or try again later"
            ),
            SessionError::Running(id) => write!(
                f,
                "a request of id {id} is still running in this session; give each request an id of its own"
            ),
            SessionError::Local(e) => e.fmt(f),
        }
    }
}

impl std::error::Error for SessionError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            SessionError::Full(_) | SessionError::Running(_) => None,
            SessionError::Local(e) => e.source(),
        }
    }
}

impl SessionManager for Sessions {
    type Error = SessionError;
    type Transport = <LocalSessionManager as SessionManager>::Transport;

    async fn create_session(&self) -> Result<(SessionId, Self::Transport), SessionError> {
        self.within_max(self.inner.create_session()).await
    }

    async fn initialize_session(
        &self,
        id: &SessionId,
        message: ClientJsonRpcMessage,
    ) -> Result<ServerJsonRpcMessage, SessionError> {
        self.touch(id);
        Ok(self.inner.initialize_session(id, message).await?)
    }

    async fn has_session(&self, id: &SessionId) -> Result<bool, SessionError> {
        // Asked of every request to a session.
        self.touch(id);
        Ok(self.inner.has_session(id).await?)
    }

    async fn close_session(&self, id: &SessionId) -> Result<(), SessionError> {
        self.activity().remove(id);
        Ok(self.inner.close_session(id).await?)
    }

    /// The stream that carries the answer to a request: while it is open
    /// (the call runs), the session is not idle.
    async fn create_stream(
        &self,
        id: &SessionId,
        message: ClientJsonRpcMessage,
    ) -> Result<impl Stream<Item = ServerSseMessage> + Send + Sync + 'static, SessionError> {
        let request = match &message {
            JsonRpcMessage::Request(request) => Some(&request.id),
            _ => None,
        };
        let guard = self.hold(id, request)?;
        Ok(guarded(self.inner.create_stream(id, message).await?, guard))
    }

    async fn accept_message(&self, id: &SessionId, message: ClientJsonRpcMessage) -> Result<(), SessionError> {
        self.touch(id);
        let cancelled = match &message {
            JsonRpcMessage::Notification(notification) => match &notification.notification {
                ClientNotification::CancelledNotification(cancelled) => cancelled.params.request_id.clone(),
                _ => None,
            },
            _ => None,
        };
        self.inner.accept_message(id, message).await?;
        // A cancelled request is never answered: it runs no longer, though
        // its id stays taken a moment.
        if let Some(request) = cancelled
            && let Some(activity) = self.activity().get_mut(id)
        {
            activity.cancel(request, Instant::now());
        }
        Ok(())
    }

    async fn create_standalone_stream(
        &self,
        id: &SessionId,
    ) -> Result<impl Stream<Item = ServerSseMessage> + Send + Sync + 'static, SessionError> {
        let guard = self.hold(id, None)?;
        Ok(guarded(self.inner.create_standalone_stream(id).await?, guard))
    }

    async fn resume(
        &self,
        id: &SessionId,
        last_event_id: String,
    ) -> Result<impl Stream<Item = ServerSseMessage> + Send + Sync + 'static, SessionError> {
        let guard = self.hold(id, None)?;
        Ok(guarded(self.inner.resume(id, last_event_id).await?, guard))
    }

    async fn restore_session(&self, id: SessionId) -> Result<RestoreOutcome<Self::Transport>, SessionError> {
        // No session store is configured, so rmcp never asks; were it to,
        // a restored session would count like any other.
        let restored = self.within_max(async {
            let outcome = self.inner.restore_session(id.clone()).await?;
            Ok((id, outcome))
        });
        Ok(restored.await?.1)
    }

    fn event_store(&self) -> Option<Arc<dyn EventStore>> {
        self.inner.event_store()
    }
}

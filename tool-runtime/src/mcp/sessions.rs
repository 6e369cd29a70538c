//! The HTTP endpoint's sessions, bounded in number.
//!
//! rmcp keeps every session a client opens until the client ends it or it
//! has been idle for five minutes; a client that opens sessions in a loop
//! would otherwise grow the server without limit. [`Sessions`] is rmcp's
//! own in-memory manager with one rule added: no new session while
//! `max` are open.

use std::fmt;
use std::sync::Arc;

use futures_util::Stream;
use rmcp::model::{ClientJsonRpcMessage, ServerJsonRpcMessage};
use rmcp::transport::streamable_http_server::session::local::{LocalSessionManager, LocalSessionManagerError};
use rmcp::transport::streamable_http_server::session::{
    EventStore, RestoreOutcome, ServerSseMessage, SessionId, SessionManager,
};

/// rmcp's in-memory session manager, refusing a new session while `max`
/// are open.
pub(super) struct Sessions {
    inner: LocalSessionManager,
    max: usize,
    /// Held while a session is made.
    creating: tokio::sync::Mutex<()>,
}

impl Sessions {
    pub(super) fn new(max: usize) -> Arc<Self> {
        Arc::new(Sessions {
            inner: LocalSessionManager::default(),
            max,
            creating: tokio::sync::Mutex::new(()),
        })
    }

    /// Makes a session with `make` unless every place is taken; one at a
    /// time, so that two made at once cannot both take the last place.
    async fn within_max<T>(
        &self,
        make: impl Future<Output = Result<T, LocalSessionManagerError>>,
    ) -> Result<T, SessionError> {
        let _creating = self.creating.lock().await;
        if self.full().await {
            return Err(SessionError::Full(self.max));
        }
        Ok(make.await?)
    }

    /// Whether every place is taken: a new session would be refused.
    pub(super) async fn full(&self) -> bool {
        self.inner.sessions.read().await.len() >= self.max
    }
}

/// Why a session could not be made or used.
#[derive(Debug)]
pub(super) enum SessionError {
    /// Every place was taken.
    Full(usize),
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
            SessionError::Local(e) => e.fmt(f),
        }
    }
}

impl std::error::Error for SessionError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            SessionError::Full(_) => None,
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
        Ok(self.inner.initialize_session(id, message).await?)
    }

    async fn has_session(&self, id: &SessionId) -> Result<bool, SessionError> {
        Ok(self.inner.has_session(id).await?)
    }

    async fn close_session(&self, id: &SessionId) -> Result<(), SessionError> {
        Ok(self.inner.close_session(id).await?)
    }

    async fn create_stream(
        &self,
        id: &SessionId,
        message: ClientJsonRpcMessage,
    ) -> Result<impl Stream<Item = ServerSseMessage> + Send + Sync + 'static, SessionError> {
        Ok(self.inner.create_stream(id, message).await?)
    }

    async fn accept_message(&self, id: &SessionId, message: ClientJsonRpcMessage) -> Result<(), SessionError> {
        Ok(self.inner.accept_message(id, message).await?)
    }

    async fn create_standalone_stream(
        &self,
        id: &SessionId,
    ) -> Result<impl Stream<Item = ServerSseMessage> + Send + Sync + 'static, SessionError> {
        Ok(self.inner.create_standalone_stream(id).await?)
    }

    async fn resume(
        &self,
        id: &SessionId,
        last_event_id: String,
    ) -> Result<impl Stream<Item = ServerSseMessage> + Send + Sync + 'static, SessionError> {
        Ok(self.inner.resume(id, last_event_id).await?)
    }

    async fn restore_session(&self, id: SessionId) -> Result<RestoreOutcome<Self::Transport>, SessionError> {
        // No session store is configured, so rmcp never asks; were it to,
        // a restored session would count like any other.
        self.within_max(self.inner.restore_session(id)).await
    }

    fn event_store(&self) -> Option<Arc<dyn EventStore>> {
        self.inner.event_store()
    }
}

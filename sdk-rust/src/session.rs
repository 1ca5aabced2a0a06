//! Agent sessions (`SessionService`): a conversation with a model whose
//! tool calls run on the agent inside the engine (docs/SESSIONS.md).
//! [`AgentFS::open_session`](crate::AgentFS::open_session) opens one;
//! [`Session::prompt`] returns an iterator of its [`SessionEvent`]s as the
//! engine produces them. The engine runs the loop, the tools and the
//! storage; this module only calls it.

use std::io;
use std::sync::Arc;

use crate::clients::SessionServiceClient;
use crate::pb;
use crate::transport::Transport;

/// ReadSessionEvents waits this long for events before answering empty.
const WAIT_MS: u32 = 30_000;

/// Options of [`AgentFS::open_session`](crate::AgentFS::open_session);
/// empty fields come from the stored session, then the engine's
/// environment (OPENAI_API_KEY, OPENAI_BASE_URL, ANTHROPIC_API_KEY,
/// ANTHROPIC_BASE_URL, AGENTFS_MODEL).
#[derive(Clone, Debug, Default)]
pub struct SessionOptions {
    /// The session to resume or create (empty: a new one).
    pub id: String,
    /// `"openai"` (Chat Completions) or `"anthropic"` (Messages).
    pub provider: String,
    pub model: String,
    /// Base URL and key of the model server (an HTTP server refuses them).
    pub base_url: String,
    pub api_key: String,
    /// System prompt of a new session.
    pub system: String,
    /// Tools offered (empty: all eight); `read_only` leaves out the writing ones.
    pub tools: Vec<String>,
    pub read_only: bool,
    /// Limits profile of bash and search ("normal", "hardened", "none").
    pub limits: String,
    /// Commands bash may (empty: all) and may not run.
    pub allow: Vec<String>,
    pub deny: Vec<String>,
    /// Path prefixes every tool may read and write (`None`: everything).
    pub readable: Option<Vec<String>>,
    pub writable: Option<Vec<String>>,
    /// Bounds (0: the engine's defaults).
    pub max_turns: u32,
    pub max_tokens: u32,
    pub max_response_bytes: u64,
    pub timeout_ms: u32,
}

impl SessionOptions {
    pub(crate) fn to_pb(&self) -> pb::OpenSessionRequest {
        pb::OpenSessionRequest {
            session_id: self.id.clone(),
            provider: self.provider.clone(),
            model: self.model.clone(),
            base_url: self.base_url.clone(),
            api_key: self.api_key.clone(),
            system: self.system.clone(),
            policy: Some(pb::ExecRequest {
                limits: self.limits.clone(),
                allow: self.allow.clone(),
                deny: self.deny.clone(),
                readable: self.readable.clone().unwrap_or_default(),
                writable: self.writable.clone().unwrap_or_default(),
                restrict_paths: self.readable.is_some() || self.writable.is_some(),
                ..Default::default()
            }),
            tools: self.tools.clone(),
            read_only: self.read_only,
            max_turns: self.max_turns,
            max_tokens: self.max_tokens,
            max_response_bytes: self.max_response_bytes,
            timeout_ms: self.timeout_ms,
        }
    }
}

/// One step of a prompt: `kind` is "text", "tool_call", "tool_result",
/// "error" or "done" (always last); `arguments_json` and `result_json`
/// are JSON text.
pub type SessionEvent = pb::SessionEvent;

/// A stored session ([`AgentFS::sessions`](crate::AgentFS::sessions)).
pub type SessionInfo = pb::SessionInfo;

/// An open agent session.
pub struct Session {
    c: SessionServiceClient,
    info: SessionInfo,
}

impl Session {
    pub(crate) fn open(t: &Arc<dyn Transport>, o: &SessionOptions) -> io::Result<Session> {
        let c = SessionServiceClient::new(Arc::clone(t));
        let r = c.open_session(&o.to_pb())?;
        Ok(Session { c, info: r.session.unwrap_or_default() })
    }

    pub fn id(&self) -> &str {
        &self.info.session_id
    }

    /// The session as it was opened (provider, model, stored messages).
    pub fn info(&self) -> &SessionInfo {
        &self.info
    }

    /// Sends `text`; the iterator yields its events as they come and ends
    /// after "done". Dropping it early cancels the prompt (completed turns
    /// stay stored).
    pub fn prompt(&self, text: &str) -> io::Result<Prompt<'_>> {
        self.c.prompt(&pb::PromptRequest { session_id: self.id().into(), text: text.into() })?;
        Ok(Prompt { s: self, queue: Vec::new().into_iter(), finished: false })
    }

    /// Sends `text` and returns the whole text with every event; a failed
    /// prompt is an error with its message.
    pub fn run(&self, text: &str) -> io::Result<(String, Vec<SessionEvent>)> {
        let mut out = String::new();
        let mut events = Vec::new();
        let mut failure = None;
        for ev in self.prompt(text)? {
            let ev = ev?;
            match ev.r#type.as_str() {
                "text" => out.push_str(&ev.text),
                "error" => failure = Some(ev.error.clone()),
                _ => {}
            }
            events.push(ev);
        }
        match failure {
            Some(msg) => Err(io::Error::other(format!("prompt failed: {msg}"))),
            None => Ok((out, events)),
        }
    }

    /// Stops the running prompt.
    pub fn cancel(&self) -> io::Result<()> {
        self.c.cancel_prompt(&pb::CancelPromptRequest { session_id: self.id().into() })?;
        Ok(())
    }

    /// Cancels a running prompt and forgets the open session; the
    /// conversation stays stored.
    pub fn close(self) -> io::Result<()> {
        self.c.close_session(&pb::CloseSessionRequest { session_id: self.id().into() })?;
        Ok(())
    }
}

/// The events of one prompt ([`Session::prompt`]).
pub struct Prompt<'a> {
    s: &'a Session,
    queue: std::vec::IntoIter<SessionEvent>,
    finished: bool,
}

impl Iterator for Prompt<'_> {
    type Item = io::Result<SessionEvent>;

    fn next(&mut self) -> Option<Self::Item> {
        loop {
            if let Some(ev) = self.queue.next() {
                if ev.r#type == "done" {
                    self.finished = true;
                    self.queue = Vec::new().into_iter();
                }
                return Some(Ok(ev));
            }
            if self.finished {
                return None;
            }
            let req = pb::ReadSessionEventsRequest { session_id: self.s.id().into(), wait_ms: WAIT_MS, max_events: 0 };
            match self.s.c.read_session_events(&req) {
                Ok(r) => {
                    if r.events.is_empty() && r.idle {
                        self.finished = true;
                        return None;
                    }
                    self.queue = r.events.into_iter();
                }
                Err(e) => {
                    self.finished = true;
                    return Some(Err(e));
                }
            }
        }
    }
}

impl Drop for Prompt<'_> {
    fn drop(&mut self) {
        if !self.finished {
            // Stopped early: cancel and drain so the next prompt can start.
            let _ = self.s.cancel();
            let req = pb::ReadSessionEventsRequest { session_id: self.s.id().into(), wait_ms: 1000, max_events: 0 };
            while let Ok(r) = self.s.c.read_session_events(&req) {
                if r.idle {
                    break;
                }
            }
        }
    }
}

pub(crate) fn list(t: &Arc<dyn Transport>) -> io::Result<Vec<SessionInfo>> {
    Ok(SessionServiceClient::new(Arc::clone(t)).list_sessions(&pb::ListSessionsRequest {})?.sessions)
}

pub(crate) fn delete(t: &Arc<dyn Transport>, id: &str) -> io::Result<bool> {
    Ok(SessionServiceClient::new(Arc::clone(t))
        .delete_session(&pb::DeleteSessionRequest { session_id: id.into() })?
        .deleted)
}

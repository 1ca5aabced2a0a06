//! Transports carry one serialized request to the engine and bring its
//! serialized response back. The generated clients (crate::clients) encode
//! and decode around them; everything above is transport-independent.

use std::future::Future;
use std::io;
use std::pin::Pin;
use std::sync::{Arc, Condvar, Mutex};
use std::task::Waker;

use prost::Message;

use crate::error;
use crate::pb;

#[cfg(feature = "http")]
pub mod http;
pub mod stdio;

/// A boxed future of a call's serialized response.
pub type CallFuture = Pin<Box<dyn Future<Output = io::Result<Vec<u8>>> + Send + 'static>>;

/// One way to reach the engine.
pub trait Transport: Send + Sync {
    /// Sends `payload` (a serialized request) to `procedure`
    /// ("/agentfs.v1.FilesystemService/Stat") and waits for the serialized
    /// response. Failures reported by the engine come back through
    /// [`crate::ErrorExt`] (the errno and path kept).
    fn call(&self, procedure: &'static str, payload: Vec<u8>) -> io::Result<Vec<u8>>;

    /// The same call as a future. The default runs [`Transport::call`] on
    /// tokio's blocking pool; the stdio transport overrides it with a
    /// future that no thread waits on.
    #[cfg(feature = "tokio")]
    fn call_async(self: Arc<Self>, procedure: &'static str, payload: Vec<u8>) -> CallFuture
    where
        Self: 'static,
    {
        Box::pin(async move {
            tokio::task::spawn_blocking(move || self.call(procedure, payload))
                .await
                .map_err(|e| io::Error::other(format!("{procedure}: {e}")))?
        })
    }

    /// A round trip that does no work in the engine: Ping/Pong over stdio,
    /// the health endpoint over HTTP.
    fn ping(&self) -> io::Result<()>;

    /// Finishes the calls in flight and releases the engine.
    fn close(&self) -> io::Result<()>;

    /// The engine's process id, when this transport started one.
    fn engine_pid(&self) -> Option<u32> {
        None
    }

    /// Answers the engine's calls of `procedure` with `handler` (`None`
    /// stops serving it): sandbox bindings serve
    /// `/agentfs.v1.HostService/CallBinding`. Only a transport the engine
    /// can call back (stdio) supports it.
    fn serve(&self, procedure: &'static str, handler: Option<Handler>) -> io::Result<()> {
        let _ = (procedure, handler);
        Err(error::other(
            pb::ErrorKind::FailedPrecondition,
            "this transport cannot be called back by the engine (bindings need stdio)",
        ))
    }
}

/// Serves one procedure the engine calls: serialized request in,
/// serialized response out, or an error message.
pub type Handler = Arc<dyn Fn(Vec<u8>) -> Result<Vec<u8>, String> + Send + Sync>;

/// Calls `procedure` with `req` and decodes the response (used by the
/// generated clients).
pub fn unary<Req: Message, Resp: Message + Default>(
    t: &dyn Transport,
    procedure: &'static str,
    req: &Req,
) -> io::Result<Resp> {
    let out = t.call(procedure, req.encode_to_vec())?;
    decode(procedure, &out)
}

/// The async form of [`unary`].
#[cfg(feature = "tokio")]
pub async fn unary_async<Req: Message, Resp: Message + Default>(
    t: &Arc<dyn Transport>,
    procedure: &'static str,
    req: &Req,
) -> io::Result<Resp> {
    let fut = Arc::clone(t).call_async(procedure, req.encode_to_vec());
    let out = fut.await?;
    decode(procedure, &out)
}

fn decode<Resp: Message + Default>(procedure: &str, out: &[u8]) -> io::Result<Resp> {
    Resp::decode(out)
        .map_err(|e| error::other(pb::ErrorKind::Internal, format!("{procedure}: response does not decode: {e}")))
}

/// Where a caller waits for the answer of one call: the stdio reader thread
/// fills it, a blocked thread (condvar) or a task (waker) takes it.
pub(crate) struct Slot {
    state: Mutex<SlotState>,
    cv: Condvar,
}

struct SlotState {
    result: Option<io::Result<Vec<u8>>>,
    waker: Option<Waker>,
}

impl Slot {
    pub(crate) fn new() -> Arc<Slot> {
        Arc::new(Slot { state: Mutex::new(SlotState { result: None, waker: None }), cv: Condvar::new() })
    }

    pub(crate) fn fill(&self, r: io::Result<Vec<u8>>) {
        let mut s = self.state.lock().unwrap_or_else(|p| p.into_inner());
        if s.result.is_none() {
            s.result = Some(r);
        }
        if let Some(w) = s.waker.take() {
            w.wake();
        }
        self.cv.notify_all();
    }

    pub(crate) fn wait(&self) -> io::Result<Vec<u8>> {
        let mut s = self.state.lock().unwrap_or_else(|p| p.into_inner());
        loop {
            if let Some(r) = s.result.take() {
                return r;
            }
            s = self.cv.wait(s).unwrap_or_else(|p| p.into_inner());
        }
    }

    #[cfg(feature = "tokio")]
    pub(crate) fn poll(&self, cx: &mut std::task::Context<'_>) -> std::task::Poll<io::Result<Vec<u8>>> {
        let mut s = self.state.lock().unwrap_or_else(|p| p.into_inner());
        match s.result.take() {
            Some(r) => std::task::Poll::Ready(r),
            None => {
                s.waker = Some(cx.waker().clone());
                std::task::Poll::Pending
            }
        }
    }
}

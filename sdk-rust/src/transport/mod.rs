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

    /// Starts a server-streaming call (`ProcessService/StreamProcess`):
    /// the engine's messages and then the stream's end arrive in the
    /// returned [`Feed`]. `None`: this transport does not stream; the
    /// caller falls back to unary calls. Closing the feed ends the call.
    fn stream(&self, procedure: &'static str, payload: Vec<u8>) -> Option<io::Result<Arc<Feed>>> {
        let _ = (procedure, payload);
        None
    }

    /// Whether [`Transport::stream`] waits for the server (an HTTP round
    /// trip): the async API then calls it on tokio's blocking pool.
    fn stream_blocks(&self) -> bool {
        false
    }

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

/// The messages of one server stream: `Ok(Some(payload))` per message,
/// then `Ok(None)` at a clean end or the stream's error. Over stdio the
/// reader thread pushes them, for a blocked thread (condvar) or a task
/// (waker); over HTTP they are pulled from the response body as `next`
/// asks, so no more than one is held in memory.
pub struct Feed {
    state: Mutex<FeedState>,
    cv: Condvar,
    /// HTTP: the response body, read on demand; `None` inside once closed.
    source: Option<Mutex<Option<Box<dyn Pull>>>>,
    /// Set by close: a pull in flight drops the body when it returns.
    closed: std::sync::atomic::AtomicBool,
    /// stdio: sends the Cancel of the call (taken by close).
    cancel: Mutex<Option<Box<dyn FnOnce() + Send>>>,
    /// HTTP: what close does when a pull holds the body (kills the
    /// process, whose exit then ends that pull).
    stuck: Mutex<Option<Box<dyn FnOnce() + Send>>>,
}

/// A stream's messages read from where they arrive (an HTTP body).
pub(crate) trait Pull: Send {
    fn next(&mut self) -> io::Result<Option<Vec<u8>>>;
}

struct FeedState {
    items: std::collections::VecDeque<io::Result<Option<Vec<u8>>>>,
    waker: Option<Waker>,
}

impl Feed {
    pub(crate) fn new() -> Arc<Feed> {
        Feed::with(None)
    }

    /// A feed whose messages are pulled from `source` by `next`.
    #[cfg_attr(not(feature = "http"), allow(dead_code))]
    pub(crate) fn pulling(source: Box<dyn Pull>) -> Arc<Feed> {
        Feed::with(Some(Mutex::new(Some(source))))
    }

    fn with(source: Option<Mutex<Option<Box<dyn Pull>>>>) -> Arc<Feed> {
        Arc::new(Feed {
            state: Mutex::new(FeedState { items: std::collections::VecDeque::new(), waker: None }),
            cv: Condvar::new(),
            source,
            closed: std::sync::atomic::AtomicBool::new(false),
            cancel: Mutex::new(None),
            stuck: Mutex::new(None),
        })
    }

    /// Whether `next` reads from the connection (HTTP).
    pub(crate) fn pulls(&self) -> bool {
        self.source.is_some()
    }

    /// What close does when a read of a pulled feed is in flight on
    /// another thread (it runs on a thread of its own).
    pub(crate) fn on_stuck(&self, f: Box<dyn FnOnce() + Send>) {
        *self.stuck.lock().unwrap_or_else(|p| p.into_inner()) = Some(f);
    }

    /// What close does for a pushed feed (the stdio transport's Cancel).
    pub(crate) fn on_close(&self, f: Box<dyn FnOnce() + Send>) {
        *self.cancel.lock().unwrap_or_else(|p| p.into_inner()) = Some(f);
    }

    pub(crate) fn push(&self, item: io::Result<Option<Vec<u8>>>) {
        let mut s = self.state.lock().unwrap_or_else(|p| p.into_inner());
        s.items.push_back(item);
        if let Some(w) = s.waker.take() {
            w.wake();
        }
        self.cv.notify_all();
    }

    /// Ends the stream: the engine ends the call (StreamProcess kills
    /// its process). Over HTTP the response is dropped, which closes its
    /// connection; a pull in flight on another thread drops it when it
    /// returns.
    ///
    /// Such a pull (an async read that was dropped, blocked in the body)
    /// cannot be woken from here: the stream ends when a message comes,
    /// so the on_stuck action (killing the process) makes one come.
    pub fn close(&self) {
        self.closed.store(true, std::sync::atomic::Ordering::SeqCst);
        if let Some(src) = &self.source {
            match src.try_lock() {
                Ok(mut g) => drop(g.take()),
                Err(_) => {
                    if let Some(f) = self.stuck.lock().unwrap_or_else(|p| p.into_inner()).take() {
                        std::thread::spawn(f);
                    }
                }
            }
        }
        let cancel = self.cancel.lock().unwrap_or_else(|p| p.into_inner()).take();
        if let Some(f) = cancel {
            f();
        }
    }

    fn closed_error() -> io::Error {
        error::other(pb::ErrorKind::Canceled, "the process stream was closed")
    }

    /// The next item, waiting for one.
    pub fn next(&self) -> io::Result<Option<Vec<u8>>> {
        if let Some(src) = &self.source {
            let mut g = src.lock().unwrap_or_else(|p| p.into_inner());
            let Some(body) = g.as_mut() else { return Err(Feed::closed_error()) };
            let r = body.next();
            if self.closed.load(std::sync::atomic::Ordering::SeqCst) {
                g.take();
                return Err(Feed::closed_error());
            }
            if !matches!(r, Ok(Some(_))) {
                g.take(); // the end: the connection is this stream's alone
            }
            return r;
        }
        let mut s = self.state.lock().unwrap_or_else(|p| p.into_inner());
        loop {
            if let Some(r) = s.items.pop_front() {
                return r;
            }
            s = self.cv.wait(s).unwrap_or_else(|p| p.into_inner());
        }
    }

    /// The next item, awaited: a pushed feed is polled; a pulled one is
    /// read on tokio's blocking pool.
    #[cfg(feature = "tokio")]
    pub async fn next_async(self: &Arc<Self>) -> io::Result<Option<Vec<u8>>> {
        if self.source.is_some() {
            let f = Arc::clone(self);
            return tokio::task::spawn_blocking(move || f.next())
                .await
                .map_err(|e| io::Error::other(format!("the process stream: {e}")))?;
        }
        std::future::poll_fn(|cx| self.poll_next(cx)).await
    }

    /// The next item as a future's poll (a pushed feed).
    #[cfg(feature = "tokio")]
    pub fn poll_next(&self, cx: &mut std::task::Context<'_>) -> std::task::Poll<io::Result<Option<Vec<u8>>>> {
        let mut s = self.state.lock().unwrap_or_else(|p| p.into_inner());
        match s.items.pop_front() {
            Some(r) => std::task::Poll::Ready(r),
            None => {
                s.waker = Some(cx.waker().clone());
                std::task::Poll::Pending
            }
        }
    }
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

//! The stdio transport: the engine as a child process (`agentfs serve
//! --stdio`) speaking length-prefixed `agentfs.v1.Frame`s (spec/PROTOCOL.md).
//!
//! Callers write their Call frame under a lock and wait on a slot; one
//! reader thread owns the engine's stdout and hands each Result to the slot
//! of its id, so calls from many threads (and tasks) are in flight at once.
//! When the engine goes away the reader fails every waiting slot with the
//! exit status and the last lines of the engine's stderr: a call never
//! hangs on a dead engine.

use std::collections::{HashMap, VecDeque};
use std::io::{self, BufRead, BufReader, Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, Command, Stdio as Pipe};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::thread;
use std::time::{Duration, Instant};

use prost::Message;

use super::{Feed, Slot, Transport};
use crate::error;
use crate::pb;
use crate::pb::frame::Body;

/// The protocol version this crate speaks (PROTOCOL_VERSION).
pub const PROTOCOL_VERSION: u32 = 1;

/// Largest frame either side may send.
const MAX_FRAME: usize = 1 << 30;

/// Lines of the engine's stderr kept to quote when it dies.
const STDERR_LINES: usize = 20;

/// How to start the engine.
#[derive(Debug, Clone, Default)]
pub struct StdioConfig {
    /// The agentfs binary.
    pub engine: PathBuf,
    /// What the engine opens (sent in Hello).
    pub open: pb::OpenOptions,
    /// Working directory of the engine (an `id` resolves to
    /// `.agentfs/ID.db` under it); `None` is the current one.
    pub dir: Option<PathBuf>,
}

/// A running engine.
pub struct Stdio {
    shared: Arc<Shared>,
    next_id: AtomicU64,
    pid: u32,
    welcome: pb::Welcome,
    reader: Mutex<Option<thread::JoinHandle<()>>>,
}

struct Shared {
    /// What this process serves to the engine, by procedure.
    served: Mutex<HashMap<String, super::Handler>>,
    writer: Mutex<Option<ChildStdin>>,
    pending: Mutex<Pending>,
    child: Mutex<Child>,
    stderr_tail: Arc<Mutex<VecDeque<String>>>,
    engine: PathBuf,
    /// Set by close(): the end of the engine's output is expected.
    closing: AtomicBool,
}

struct Pending {
    calls: HashMap<u64, Arc<Slot>>,
    /// Server streams in flight: their Frame.message frames and Result.
    streams: HashMap<u64, Arc<Feed>>,
    /// Why no more calls can be made, once the connection is over.
    closed: Option<String>,
}

impl Stdio {
    /// Starts the engine and performs the handshake.
    pub fn start(cfg: StdioConfig) -> io::Result<Stdio> {
        let mut cmd = Command::new(&cfg.engine);
        cmd.args(["serve", "--stdio"]).stdin(Pipe::piped()).stdout(Pipe::piped()).stderr(Pipe::piped());
        if let Some(d) = &cfg.dir {
            cmd.current_dir(d);
        }
        let mut child = cmd
            .spawn()
            .map_err(|e| io::Error::new(e.kind(), format!("starting {} serve --stdio: {e}", cfg.engine.display())))?;
        let pid = child.id();
        let stdin = child.stdin.take().expect("piped stdin");
        let mut stdout = BufReader::with_capacity(256 << 10, child.stdout.take().expect("piped stdout"));
        let stderr = child.stderr.take().expect("piped stderr");

        let tail = Arc::new(Mutex::new(VecDeque::new()));
        let stderr_thread = {
            let tail = Arc::clone(&tail);
            thread::Builder::new().name("agentfs-stderr".into()).spawn(move || keep_tail(stderr, &tail))?
        };
        let shared = Arc::new(Shared {
            served: Mutex::new(HashMap::new()),
            writer: Mutex::new(Some(stdin)),
            pending: Mutex::new(Pending { calls: HashMap::new(), streams: HashMap::new(), closed: None }),
            child: Mutex::new(child),
            stderr_tail: tail,
            engine: cfg.engine.clone(),
            closing: AtomicBool::new(false),
        });

        let hello = pb::Frame {
            id: 1,
            body: Some(Body::Hello(pb::Hello {
                protocol_version: PROTOCOL_VERSION,
                client: concat!("agentfs-sdk-rust/", env!("CARGO_PKG_VERSION")).into(),
                open: Some(cfg.open),
                heartbeat_ms: 0,
            })),
        };
        let answer = shared.send(&hello).and_then(|_| read_frame(&mut stdout));
        let welcome = match answer {
            Ok(pb::Frame { body: Some(Body::Welcome(w)), .. }) => w,
            Ok(pb::Frame { body: Some(Body::Result(pb::Result { error: Some(e), .. })), .. }) => {
                shared.finish_after_failed_handshake(stderr_thread);
                return Err(error::from_pb(e));
            }
            Ok(f) => {
                shared.finish_after_failed_handshake(stderr_thread);
                return Err(error::other(
                    pb::ErrorKind::Internal,
                    format!("agentfs engine answered Hello with {:?}", f.body.map(|b| body_name(&b))),
                ));
            }
            Err(e) => {
                let status = shared.finish_after_failed_handshake(stderr_thread);
                return Err(error::other(
                    pb::ErrorKind::Unavailable,
                    format!(
                        "{} serve --stdio ended before its handshake ({e}; {status}){}",
                        cfg.engine.display(),
                        shared.stderr_quote()
                    ),
                ));
            }
        };

        let reader = {
            let shared = Arc::clone(&shared);
            thread::Builder::new().name("agentfs-reader".into()).spawn(move || {
                let why = shared.read_loop(&mut stdout);
                shared.fail_all(why);
            })?
        };
        Ok(Stdio { shared, next_id: AtomicU64::new(2), pid, welcome, reader: Mutex::new(Some(reader)) })
    }

    /// The engine's Welcome (its version and what it opened).
    pub fn welcome(&self) -> &pb::Welcome {
        &self.welcome
    }

    /// Sends a Call and returns the slot its answer will fill.
    fn start_call(&self, procedure: &'static str, payload: Vec<u8>) -> io::Result<(u64, Arc<Slot>)> {
        self.send_new(procedure, |id| pb::Frame {
            id,
            body: Some(Body::Call(pb::Call { method: procedure.into(), payload })),
        })
    }

    /// Registers a slot for a new id and sends the frame `make` builds.
    fn send_new(&self, what: &str, make: impl FnOnce(u64) -> pb::Frame) -> io::Result<(u64, Arc<Slot>)> {
        let id = self.next_id.fetch_add(1, Ordering::Relaxed);
        // Encoding first: a frame too large to send fails here, before a
        // slot waits for an answer that will never come.
        let buf = encode(&make(id))?;
        let slot = Slot::new();
        {
            let mut p = self.shared.lock_pending();
            if let Some(why) = &p.closed {
                return Err(error::other(pb::ErrorKind::Unavailable, format!("{what}: {why}")));
            }
            p.calls.insert(id, Arc::clone(&slot));
        }
        if let Err(e) = self.shared.write(&buf) {
            // A broken pipe means the engine is gone: its stdout ends too,
            // and the reader fails this slot with the exit status. Only a
            // connection closed on our side is answered here.
            if self.shared.writer.lock().unwrap_or_else(|p| p.into_inner()).is_none() {
                self.shared.lock_pending().calls.remove(&id);
                return Err(error::other(pb::ErrorKind::Unavailable, format!("{what}: {e}")));
            }
        }
        Ok((id, slot))
    }
}

impl Transport for Stdio {
    fn serve(&self, procedure: &'static str, handler: Option<super::Handler>) -> io::Result<()> {
        let mut served = self.shared.served.lock().unwrap_or_else(|e| e.into_inner());
        match handler {
            Some(h) => served.insert(procedure.to_string(), h),
            None => served.remove(procedure),
        };
        Ok(())
    }

    fn call(&self, procedure: &'static str, payload: Vec<u8>) -> io::Result<Vec<u8>> {
        let (_, slot) = self.start_call(procedure, payload)?;
        slot.wait()
    }

    fn stream(&self, procedure: &'static str, payload: Vec<u8>) -> Option<io::Result<Arc<Feed>>> {
        Some((|| {
            let id = self.next_id.fetch_add(1, Ordering::Relaxed);
            let buf =
                encode(&pb::Frame { id, body: Some(Body::Call(pb::Call { method: procedure.into(), payload })) })?;
            let feed = Feed::new();
            {
                let mut p = self.shared.lock_pending();
                if let Some(why) = &p.closed {
                    return Err(error::other(pb::ErrorKind::Unavailable, format!("{procedure}: {why}")));
                }
                p.streams.insert(id, Arc::clone(&feed));
            }
            if let Err(e) = self.shared.write(&buf) {
                // As in send_new: a dead engine's end reaches the feed
                // through the reader; a connection closed here does not.
                if self.shared.writer.lock().unwrap_or_else(|p| p.into_inner()).is_none() {
                    self.shared.lock_pending().streams.remove(&id);
                    return Err(error::other(pb::ErrorKind::Unavailable, format!("{procedure}: {e}")));
                }
            }
            // Closing the feed cancels the call; the Result (CANCELED)
            // still ends it through the reader. Weak: the feed is held by
            // the pending table, which Shared holds.
            let shared = Arc::downgrade(&self.shared);
            feed.on_close(Box::new(move || {
                if let Some(sh) = shared.upgrade() {
                    if sh.lock_pending().streams.contains_key(&id) {
                        let _ = sh.send(&pb::Frame { id, body: Some(Body::Cancel(pb::Cancel {})) });
                    }
                }
            }));
            Ok(feed)
        })())
    }

    fn ping(&self) -> io::Result<()> {
        let (_, slot) = self.send_new("ping", |id| pb::Frame { id, body: Some(Body::Ping(pb::Ping {})) })?;
        slot.wait().map(|_| ())
    }

    #[cfg(feature = "tokio")]
    fn call_async(self: Arc<Self>, procedure: &'static str, payload: Vec<u8>) -> super::CallFuture {
        // The frame is written here (a pipe write, short unless the payload
        // is large); the answer is awaited without a thread.
        match self.start_call(procedure, payload) {
            Ok((id, slot)) => Box::pin(AnswerFuture { slot, id, shared: Arc::clone(&self.shared), done: false }),
            Err(e) => Box::pin(std::future::ready(Err(e))),
        }
    }

    fn close(&self) -> io::Result<()> {
        self.shared.closing.store(true, Ordering::SeqCst);
        let id = self.next_id.fetch_add(1, Ordering::Relaxed);
        let slot = Slot::new();
        let open = {
            let mut p = self.shared.lock_pending();
            if p.closed.is_none() {
                p.calls.insert(id, Arc::clone(&slot));
                true
            } else {
                false
            }
        };
        // Shutdown lets the calls in flight finish and checkpoints; its
        // answer comes after theirs. A dead engine has nothing to finish.
        if open && self.shared.send(&pb::Frame { id, body: Some(Body::Shutdown(pb::Shutdown {})) }).is_ok() {
            let _ = slot.wait();
        }
        self.shared.writer.lock().unwrap_or_else(|p| p.into_inner()).take();
        if let Some(h) = self.reader.lock().unwrap_or_else(|p| p.into_inner()).take() {
            let _ = h.join();
        }
        let status = self.shared.wait_child(Duration::from_secs(10));
        match status {
            Some(s) if s.success() => Ok(()),
            Some(s) => Err(error::other(
                pb::ErrorKind::Internal,
                format!("agentfs engine exited with {s}{}", self.shared.stderr_quote()),
            )),
            None => Ok(()),
        }
    }

    fn engine_pid(&self) -> Option<u32> {
        Some(self.pid)
    }
}

impl Drop for Stdio {
    fn drop(&mut self) {
        // Closing stdin makes the engine finish its calls, close the
        // database (a temporary one is removed) and exit; wait for that so
        // the files are complete when the caller goes on.
        let _ = self.close();
    }
}

impl Shared {
    fn lock_pending(&self) -> std::sync::MutexGuard<'_, Pending> {
        self.pending.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Writes one frame.
    fn send(&self, frame: &pb::Frame) -> io::Result<()> {
        self.write(&encode(frame)?)
    }

    /// Writes an encoded frame (length prefix and message in one write).
    fn write(&self, buf: &[u8]) -> io::Result<()> {
        let mut w = self.writer.lock().unwrap_or_else(|p| p.into_inner());
        match w.as_mut() {
            Some(w) => w.write_all(buf).and_then(|_| w.flush()),
            None => Err(io::Error::new(io::ErrorKind::BrokenPipe, "agentfs connection is closed")),
        }
    }

    /// Dispatches the engine's frames until its stdout ends; returns why.
    fn read_loop(self: &Arc<Self>, r: &mut impl Read) -> String {
        loop {
            let frame = match read_frame(r) {
                Ok(f) => f,
                Err(e) if e.kind() == io::ErrorKind::UnexpectedEof => break String::new(),
                Err(e) => break format!("reading from the engine: {e}"),
            };
            match frame.body {
                Some(Body::Message(m)) => {
                    let feed = self.lock_pending().streams.get(&frame.id).cloned();
                    if let Some(feed) = feed {
                        feed.push(Ok(Some(m.payload)));
                    }
                }
                Some(Body::Result(res)) if self.lock_pending().streams.contains_key(&frame.id) => {
                    // The end of a server stream.
                    if let Some(feed) = self.lock_pending().streams.remove(&frame.id) {
                        feed.push(match res.error {
                            Some(e) => Err(error::from_pb(e)),
                            None => Ok(None),
                        });
                    }
                }
                Some(Body::Result(res)) => {
                    let slot = self.lock_pending().calls.remove(&frame.id);
                    if let Some(slot) = slot {
                        slot.fill(match res.error {
                            Some(e) => Err(error::from_pb(e)),
                            None => Ok(res.payload),
                        });
                    }
                }
                Some(Body::Call(c)) => {
                    let handler = self.served.lock().unwrap_or_else(|e| e.into_inner()).get(&c.method).cloned();
                    let Some(handler) = handler else {
                        let err = pb::Error {
                            kind: pb::ErrorKind::Unimplemented as i32,
                            message: format!("{}: not served by this process", c.method),
                            ..Default::default()
                        };
                        let answer = pb::Result { payload: Vec::new(), error: Some(err) };
                        let _ = self.send(&pb::Frame { id: frame.id, body: Some(Body::Result(answer)) });
                        continue;
                    };
                    // Not on the reader thread: a handler may call the engine.
                    let shared = Arc::clone(self);
                    let id = frame.id;
                    let _ = thread::Builder::new().name("agentfs-host-call".into()).spawn(move || {
                        let answer = match handler(c.payload) {
                            Ok(payload) => pb::Result { payload, error: None },
                            Err(message) => pb::Result {
                                payload: Vec::new(),
                                error: Some(pb::Error {
                                    kind: pb::ErrorKind::Internal as i32,
                                    message: format!("{}: {message}", c.method),
                                    ..Default::default()
                                }),
                            },
                        };
                        let _ = shared.send(&pb::Frame { id, body: Some(Body::Result(answer)) });
                    });
                }
                Some(Body::Pong(_)) => {
                    if let Some(slot) = self.lock_pending().calls.remove(&frame.id) {
                        slot.fill(Ok(Vec::new()));
                    }
                }
                Some(Body::Ping(_)) => {
                    let _ = self.send(&pb::Frame { id: frame.id, body: Some(Body::Pong(pb::Pong {})) });
                }
                _ => {}
            }
        }
    }

    /// Marks the connection over and fails every waiting call.
    fn fail_all(&self, why: String) {
        let closing = self.closing.load(Ordering::SeqCst);
        let why = if closing && why.is_empty() {
            "agentfs connection is closed".to_string()
        } else {
            let status = match self.wait_child(Duration::from_secs(2)) {
                Some(s) => format!("exited with {s}"),
                None => "closed its output".to_string(),
            };
            let detail = if why.is_empty() { String::new() } else { format!(" ({why})") };
            format!("agentfs engine {} {status}{detail}{}", self.engine.display(), self.stderr_quote())
        };
        let (calls, streams): (Vec<_>, Vec<_>) = {
            let mut p = self.lock_pending();
            p.closed = Some(why.clone());
            (p.calls.drain().collect(), p.streams.drain().collect())
        };
        for (_, feed) in streams {
            feed.push(Err(error::other(pb::ErrorKind::Unavailable, why.clone())));
        }
        for (_, slot) in calls {
            slot.fill(Err(error::other(pb::ErrorKind::Unavailable, why.clone())));
        }
    }

    /// Waits up to `limit` for the engine to exit (killing it after that);
    /// `None` when it was reaped already.
    fn wait_child(&self, limit: Duration) -> Option<std::process::ExitStatus> {
        let mut child = self.child.lock().unwrap_or_else(|p| p.into_inner());
        let deadline = Instant::now() + limit;
        loop {
            match child.try_wait() {
                Ok(Some(s)) => return Some(s),
                Ok(None) if Instant::now() < deadline => thread::sleep(Duration::from_millis(5)),
                Ok(None) => {
                    let _ = child.kill();
                    return child.wait().ok();
                }
                Err(_) => return None,
            }
        }
    }

    fn finish_after_failed_handshake(&self, stderr_thread: thread::JoinHandle<()>) -> String {
        self.writer.lock().unwrap_or_else(|p| p.into_inner()).take();
        let status = self.wait_child(Duration::from_secs(10));
        let _ = stderr_thread.join();
        self.lock_pending().closed = Some("handshake failed".into());
        match status {
            Some(s) => format!("exit {s}"),
            None => "no exit status".into(),
        }
    }

    /// The last lines of the engine's stderr, for error messages.
    fn stderr_quote(&self) -> String {
        let t = self.stderr_tail.lock().unwrap_or_else(|p| p.into_inner());
        if t.is_empty() {
            return String::new();
        }
        let lines: Vec<&str> = t.iter().map(String::as_str).collect();
        format!("; engine stderr: {}", lines.join(" | "))
    }
}

/// Keeps the last lines of the engine's stderr (and echoes them when
/// AGENTFS_DEBUG is set).
fn keep_tail(stderr: impl Read, tail: &Mutex<VecDeque<String>>) {
    let echo = std::env::var_os("AGENTFS_DEBUG").is_some();
    for line in BufReader::new(stderr).lines() {
        let Ok(line) = line else { break };
        if echo {
            eprintln!("agentfs engine: {line}");
        }
        let mut t = tail.lock().unwrap_or_else(|p| p.into_inner());
        if t.len() == STDERR_LINES {
            t.pop_front();
        }
        t.push_back(line);
    }
}

/// The length prefix and the serialized frame.
fn encode(frame: &pb::Frame) -> io::Result<Vec<u8>> {
    let n = frame.encoded_len();
    if n > MAX_FRAME {
        return Err(error::other(
            pb::ErrorKind::ResourceExhausted,
            format!("frame of {n} bytes exceeds the protocol's 1 GiB; use open and pwrite for large files"),
        ));
    }
    let mut buf = Vec::with_capacity(4 + n);
    buf.extend_from_slice(&(n as u32).to_be_bytes());
    frame.encode(&mut buf).map_err(io::Error::other)?;
    Ok(buf)
}

fn read_frame(r: &mut impl Read) -> io::Result<pb::Frame> {
    let mut len = [0u8; 4];
    r.read_exact(&mut len)?;
    let n = u32::from_be_bytes(len) as usize;
    if n > MAX_FRAME {
        return Err(io::Error::new(io::ErrorKind::InvalidData, format!("frame of {n} bytes exceeds 1 GiB")));
    }
    let mut buf = vec![0u8; n];
    r.read_exact(&mut buf)?;
    pb::Frame::decode(&buf[..]).map_err(|e| io::Error::new(io::ErrorKind::InvalidData, e))
}

fn body_name(b: &Body) -> &'static str {
    match b {
        Body::Hello(_) => "Hello",
        Body::Welcome(_) => "Welcome",
        Body::Call(_) => "Call",
        Body::Result(_) => "Result",
        Body::Cancel(_) => "Cancel",
        Body::Ping(_) => "Ping",
        Body::Pong(_) => "Pong",
        Body::Shutdown(_) => "Shutdown",
        Body::Message(_) => "Message",
    }
}

/// The answer of one call as a future; dropping it before the answer
/// cancels the call (a Cancel frame).
#[cfg(feature = "tokio")]
struct AnswerFuture {
    slot: Arc<Slot>,
    id: u64,
    shared: Arc<Shared>,
    done: bool,
}

#[cfg(feature = "tokio")]
impl std::future::Future for AnswerFuture {
    type Output = io::Result<Vec<u8>>;

    fn poll(mut self: std::pin::Pin<&mut Self>, cx: &mut std::task::Context<'_>) -> std::task::Poll<Self::Output> {
        let r = self.slot.poll(cx);
        if r.is_ready() {
            self.done = true;
        }
        r
    }
}

#[cfg(feature = "tokio")]
impl Drop for AnswerFuture {
    fn drop(&mut self) {
        if !self.done && self.shared.lock_pending().calls.remove(&self.id).is_some() {
            let _ = self.shared.send(&pb::Frame { id: self.id, body: Some(Body::Cancel(pb::Cancel {})) });
        }
    }
}

/// Whether `p` names an executable file.
pub(crate) fn is_executable(p: &Path) -> bool {
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        p.metadata().map(|m| m.is_file() && m.permissions().mode() & 0o111 != 0).unwrap_or(false)
    }
    #[cfg(not(unix))]
    {
        p.is_file()
    }
}

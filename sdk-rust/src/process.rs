//! Processes and persistent shells of the engine (`ProcessService`):
//! [`AgentFS::spawn`](crate::AgentFS::spawn) starts a script and returns a
//! [`Process`] whose output is read as it comes, whose stdin is written
//! while it runs, which is killed with a signal and waited for;
//! [`AgentFS::shell`](crate::AgentFS::shell) opens a [`Shell`] whose
//! working directory, variables and functions survive between scripts.
//! The process table is the engine's. A spawned process streams its
//! output (StreamProcess, over stdio and HTTP) and ends with its stream:
//! when its handle is closed or dropped, or the agent closed. A detached
//! one (HTTP) is read by long-poll (ReadProcess) and outlives its handle.
//! The async forms are in [`crate::aio`].

use std::io;
use std::sync::Arc;

use prost::Message;

use crate::clients::ProcessServiceClient;
use crate::pb;
use crate::sandbox::{exec_request, Registry};
use crate::transport::{Feed, Transport};
use crate::ExecOptions;

/// ReadProcess waits this long for output before answering empty.
pub(crate) const WAIT_MS: u32 = 30_000;

/// Options of [`AgentFS::spawn`](crate::AgentFS::spawn).
#[derive(Clone, Default)]
pub struct SpawnOptions {
    /// Script options as for exec (`stdin` holds the first bytes).
    pub exec: ExecOptions,
    /// Keep stdin open after `exec.stdin` for [`Process::write`].
    pub keep_stdin_open: bool,
    /// Kill the process (SIGKILL) after this many milliseconds (0: none).
    pub timeout_ms: u32,
    /// HTTP: read by long-poll, no lease: the process outlives its handle
    /// and this client (others stream and end with their stream).
    pub detach: bool,
    /// HTTP: kill a long-polled process that is not detached when nobody
    /// reads or writes it for this long (0: the server's 30 s). Spawn
    /// streams every process but a detached one, so this is unused by it.
    pub lease_ms: u32,
}

/// Which stream a [`Chunk`] came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Stream {
    Stdout,
    Stderr,
}

/// Output in the order the script wrote it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Chunk {
    pub stream: Stream,
    pub data: Vec<u8>,
}

/// How a process ended, with the output not read before `wait`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProcessResult {
    pub exit_code: i32,
    pub stdout: Vec<u8>,
    pub stderr: Vec<u8>,
    /// Set when a limit stopped the script.
    pub limit: Option<String>,
    /// The signal of kill that stopped it (0: none).
    pub signal: i32,
}

/// A process of [`AgentFS::processes`](crate::AgentFS::processes).
pub type ProcessInfo = pb::ProcessInfo;

pub(crate) fn start_request(script: &str, o: &SpawnOptions, shell_id: u64) -> pb::StartProcessRequest {
    pb::StartProcessRequest {
        exec: Some(exec_request(script, &o.exec)),
        shell_id,
        keep_stdin_open: o.keep_stdin_open,
        timeout_ms: o.timeout_ms,
        lease_ms: o.lease_ms,
        detach: o.detach,
    }
}

pub(crate) const STREAM_PROCESS: &str = "/agentfs.v1.ProcessService/StreamProcess";

/// One message of a process's stream, in the shape of a read's answer.
pub(crate) fn streamed(payload: &[u8]) -> io::Result<pb::ReadProcessResponse> {
    let m = pb::StreamProcessResponse::decode(payload).map_err(|e| {
        crate::error::other(pb::ErrorKind::Internal, format!("{STREAM_PROCESS}: message does not decode: {e}"))
    })?;
    Ok(pb::ReadProcessResponse {
        chunks: m.chunks,
        exited: m.exited,
        exit_code: m.exit_code,
        signal: m.signal,
        limit: m.limit,
    })
}

/// The stream's next message, or the error of a stream that ended before
/// the exit status.
pub(crate) fn feed_item(item: io::Result<Option<Vec<u8>>>) -> io::Result<pb::ReadProcessResponse> {
    match item? {
        Some(b) => streamed(&b),
        None => Err(crate::error::other(
            pb::ErrorKind::Unavailable,
            format!("{STREAM_PROCESS}: the stream ended without the exit status"),
        )),
    }
}

/// Starts a process with StreamProcess when the transport streams (stdio,
/// HTTP) and the process is not detached (a streamed process ends with its
/// client); returns the feed and the pid of the first message.
pub(crate) fn stream_request(t: &Arc<dyn Transport>, start: pb::StartProcessRequest) -> Option<io::Result<Arc<Feed>>> {
    if start.detach {
        return None;
    }
    let req =
        pb::StreamProcessRequest { target: Some(pb::stream_process_request::Target::Start(start)), deadline_ms: 0 };
    t.stream(STREAM_PROCESS, req.encode_to_vec())
}

/// The pid of a stream's first message.
pub(crate) fn first_pid(item: io::Result<Option<Vec<u8>>>) -> io::Result<u64> {
    let b = item?.ok_or_else(|| {
        crate::error::other(
            pb::ErrorKind::Unavailable,
            format!("{STREAM_PROCESS}: the stream ended before the process started"),
        )
    })?;
    pb::StreamProcessResponse::decode(b.as_slice()).map(|m| m.pid).map_err(|e| {
        crate::error::other(pb::ErrorKind::Internal, format!("{STREAM_PROCESS}: message does not decode: {e}"))
    })
}

pub(crate) fn chunks(r: &mut pb::ReadProcessResponse) -> Vec<Chunk> {
    r.chunks
        .drain(..)
        .map(|c| Chunk { stream: if c.stream == 2 { Stream::Stderr } else { Stream::Stdout }, data: c.data })
        .collect()
}

pub(crate) fn end(r: &pb::ReadProcessResponse) -> Option<ProcessResult> {
    r.exited.then(|| ProcessResult {
        exit_code: r.exit_code,
        stdout: Vec::new(),
        stderr: Vec::new(),
        limit: (!r.limit.is_empty()).then(|| r.limit.clone()),
        signal: r.signal,
    })
}

pub(crate) fn finish(mut r: ProcessResult, cs: Vec<Chunk>) -> ProcessResult {
    for c in cs {
        match c.stream {
            Stream::Stdout => r.stdout.extend(c.data),
            Stream::Stderr => r.stderr.extend(c.data),
        }
    }
    r
}

/// Releases a script's bindings once it ended.
pub(crate) struct Release {
    pub(crate) t: Arc<dyn Transport>,
    pub(crate) reg: Arc<Registry>,
    pub(crate) opts: ExecOptions,
    pub(crate) done: bool,
}

impl Release {
    pub(crate) fn release(&mut self) {
        if !self.done {
            self.done = true;
            self.reg.unregister(&self.t, &self.opts.bindings);
        }
    }
}

impl Drop for Release {
    fn drop(&mut self) {
        self.release();
    }
}

/// A script running in the engine (blocking API).
pub struct Process {
    pub(crate) pid: u64,
    pub(crate) c: ProcessServiceClient,
    pub(crate) result: Option<ProcessResult>,
    pub(crate) release: Release,
    /// The process's stream; `None`: read long-polls ReadProcess.
    pub(crate) feed: Option<Arc<Feed>>,
}

impl Drop for Process {
    fn drop(&mut self) {
        if self.result.is_none() {
            if let Some(f) = &self.feed {
                f.close(); // the engine kills the process
            }
        }
    }
}

/// Arms a pulled (HTTP) feed to kill its process when it is closed while
/// a read of it is in flight on another thread (see [`Feed::close`]).
/// Not for a pushed (stdio) feed: its transport holds it, and the client
/// in the action would hold the transport.
pub(crate) fn arm(f: &Feed, c: &ProcessServiceClient, pid: u64) {
    if f.pulls() {
        let c = c.clone();
        f.on_stuck(Box::new(move || {
            let _ = c.kill_process(&pb::KillProcessRequest { pid, signal: 9 });
        }));
    }
}

impl Process {
    pub fn pid(&self) -> u64 {
        self.pid
    }

    /// The next output (waits up to 30 s); `true` once the process ended
    /// and every byte was read.
    pub fn read(&mut self) -> io::Result<(Vec<Chunk>, bool)> {
        if self.result.is_some() {
            return Ok((Vec::new(), true));
        }
        let mut r = match &self.feed {
            Some(f) => feed_item(f.next())?,
            None => self.c.read_process(&pb::ReadProcessRequest { pid: self.pid, wait_ms: WAIT_MS, max_bytes: 0 })?,
        };
        let cs = chunks(&mut r);
        if let Some(e) = end(&r) {
            self.result = Some(e);
            self.release.release();
            if let Some(f) = self.feed.as_ref().filter(|f| f.pulls()) {
                // HTTP: the end envelope follows the exit at once; reading
                // it frees the connection for the next call.
                let _ = f.next();
            }
        }
        Ok((cs, self.result.is_some()))
    }

    /// Writes to stdin (spawn with `keep_stdin_open`).
    pub fn write(&self, data: &[u8]) -> io::Result<()> {
        self.c.write_process(&pb::WriteProcessRequest { pid: self.pid, data: data.to_vec(), close_stdin: false })?;
        Ok(())
    }

    /// The script reads end of file after what was written.
    pub fn close_stdin(&self) -> io::Result<()> {
        self.c.write_process(&pb::WriteProcessRequest { pid: self.pid, data: Vec::new(), close_stdin: true })?;
        Ok(())
    }

    /// Sends a POSIX signal (0: SIGKILL); the exit code becomes 128+signal.
    pub fn kill(&self, signal: i32) -> io::Result<()> {
        if self.result.is_none() {
            match self.c.kill_process(&pb::KillProcessRequest { pid: self.pid, signal }) {
                // A streamed process that ended was reaped by its stream:
                // the exit is on its way to read().
                Err(e) if self.feed.is_some() && e.kind() == io::ErrorKind::NotFound => {}
                r => {
                    r?;
                }
            }
        }
        Ok(())
    }

    /// Stops reading (as dropping the handle does). A streamed process
    /// (every one but a detached) that still runs is killed by the engine
    /// when its stream ends, which this does; a detached one keeps running.
    pub fn close(self) {}

    /// Reads to the end: the exit status and the output not read before.
    pub fn wait(&mut self) -> io::Result<ProcessResult> {
        let mut all = Vec::new();
        loop {
            let (cs, done) = self.read()?;
            all.extend(cs);
            if done {
                return Ok(finish(self.result.clone().expect("ended"), all));
            }
        }
    }
}

/// A persistent shell (blocking API).
pub struct Shell {
    pub(crate) id: u64,
    pub(crate) t: Arc<dyn Transport>,
    pub(crate) reg: Arc<Registry>,
    pub(crate) c: ProcessServiceClient,
    pub(crate) release: Release,
}

impl Shell {
    pub fn id(&self) -> u64 {
        self.id
    }

    /// Starts a script in the shell (`exec.stdin` and `exec.env` apply).
    pub fn spawn(&self, script: &str, opts: &SpawnOptions) -> io::Result<Process> {
        spawn(&self.t, &self.reg, script, opts, self.id)
    }

    /// Runs a script in the shell and waits for it.
    pub fn run(&self, script: &str) -> io::Result<ProcessResult> {
        self.spawn(script, &SpawnOptions::default())?.wait()
    }

    /// Kills the shell's scripts and forgets its state.
    pub fn close(mut self) -> io::Result<()> {
        let r = self.c.close_shell(&pb::CloseShellRequest { shell_id: self.id });
        self.release.release();
        r.map(|_| ())
    }
}

pub(crate) fn spawn(
    t: &Arc<dyn Transport>,
    reg: &Arc<Registry>,
    script: &str,
    opts: &SpawnOptions,
    shell_id: u64,
) -> io::Result<Process> {
    reg.register(t, &opts.exec.bindings)?;
    let release = Release { t: Arc::clone(t), reg: Arc::clone(reg), opts: opts.exec.clone(), done: false };
    let c = ProcessServiceClient::new(Arc::clone(t));
    let start = start_request(script, opts, shell_id);
    if let Some(feed) = stream_request(t, start.clone()) {
        let feed = feed?;
        let pid = first_pid(feed.next())?;
        arm(&feed, &c, pid);
        return Ok(Process { pid, c, result: None, release, feed: Some(feed) });
    }
    let r = c.start_process(&start)?;
    Ok(Process { pid: r.pid, c, result: None, release, feed: None })
}

pub(crate) fn shell(t: &Arc<dyn Transport>, reg: &Arc<Registry>, opts: &ExecOptions) -> io::Result<Shell> {
    reg.register(t, &opts.bindings)?;
    let release = Release { t: Arc::clone(t), reg: Arc::clone(reg), opts: opts.clone(), done: false };
    let c = ProcessServiceClient::new(Arc::clone(t));
    let r = c.open_shell(&pb::OpenShellRequest { exec: Some(exec_request("", opts)) })?;
    Ok(Shell { id: r.shell_id, t: Arc::clone(t), reg: Arc::clone(reg), c, release })
}

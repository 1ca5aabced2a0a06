//! The async API (feature `tokio`): the same operations as the blocking
//! API, as `async fn`s.
//!
//! Over stdio, a call writes its frame and then awaits the answer without
//! occupying a thread (the reader thread wakes the task); dropping a future
//! before its answer cancels the call in the engine. Over HTTP each call
//! runs on tokio's blocking pool. Starting the engine (`AgentFS::open`)
//! runs on the blocking pool too. Needs a tokio runtime.

use std::future::Future;
use std::io::{self, SeekFrom};
use std::pin::Pin;
use std::sync::Arc;
use std::task::{ready, Context, Poll};

use serde::de::DeserializeOwned;
use serde::Serialize;

use crate::agent::{self, Clients};
use crate::fs::{to_ns, OpenOptions};
use crate::pb;
use crate::WriteOptions;
use crate::{DirEntry, KvEntry, Metadata, Options, RemoveOptions, Statfs, ToolCall, ToolQuery, ToolRecord, ToolStats};

/// An open agent (async). Cheap handles from [`AgentFS::fs`], `kv`,
/// `tools` share the connection.
pub struct AgentFS {
    c: Arc<Clients>,
}

impl AgentFS {
    /// Opens the agent `opts` names.
    pub async fn open(opts: Options) -> io::Result<AgentFS> {
        let c = tokio::task::spawn_blocking(move || agent::connect(&opts)).await.map_err(io::Error::other)??;
        Ok(AgentFS { c })
    }

    pub fn fs(&self) -> Fs {
        Fs { c: Arc::clone(&self.c) }
    }

    pub fn kv(&self) -> Kv {
        Kv { c: Arc::clone(&self.c) }
    }

    pub fn tools(&self) -> Tools {
        Tools { c: Arc::clone(&self.c) }
    }

    pub async fn info(&self) -> io::Result<pb::InfoResponse> {
        self.c.agent.info_async(&pb::InfoRequest {}).await
    }

    /// See [`crate::AgentFS::pull`].
    pub async fn pull(&self) -> io::Result<pb::SyncPullResponse> {
        self.c.agent.sync_pull_async(&pb::SyncPullRequest {}).await
    }

    /// See [`crate::AgentFS::push`].
    pub async fn push(&self) -> io::Result<pb::SyncPushResponse> {
        self.c.agent.sync_push_async(&pb::SyncPushRequest {}).await
    }

    /// Pulls, then pushes.
    pub async fn sync(&self) -> io::Result<pb::SyncResponse> {
        self.c.agent.sync_async(&pb::SyncRequest {}).await
    }

    /// See [`crate::AgentFS::stats`].
    pub async fn stats(&self) -> io::Result<pb::SyncStatsResponse> {
        self.c.agent.sync_stats_async(&pb::SyncStatsRequest {}).await
    }

    /// The blocking API over the same connection.
    pub fn blocking(&self) -> crate::AgentFS {
        crate::AgentFS::from_clients(Arc::clone(&self.c))
    }

    pub fn transport(&self) -> Arc<dyn crate::transport::Transport> {
        Arc::clone(&self.c.t)
    }

    pub fn engine_pid(&self) -> Option<u32> {
        self.c.t.engine_pid()
    }

    /// Runs a shell script in the engine's sandbox (as the blocking
    /// [`crate::AgentFS::exec`]; bindings are called on the reader's
    /// threads).
    pub async fn exec(&self, script: &str, opts: &crate::ExecOptions) -> io::Result<crate::ExecResult> {
        self.c.bindings.register(&self.c.t, &opts.bindings)?;
        let req = crate::sandbox::exec_request(script, opts);
        let r = crate::clients::SandboxServiceClient::new(Arc::clone(&self.c.t)).exec_async(&req).await;
        self.c.bindings.unregister(&self.c.t, &opts.bindings);
        Ok(crate::sandbox::result(r?))
    }

    /// The effective policy of these exec options (as the blocking
    /// [`crate::AgentFS::policy`]).
    pub async fn policy(&self, opts: &crate::ExecOptions) -> io::Result<crate::Policy> {
        let r = crate::clients::SandboxServiceClient::new(Arc::clone(&self.c.t))
            .policy_async(&crate::sandbox::policy_request(opts))
            .await?;
        r.policy.ok_or_else(|| io::Error::other("policy: the engine returned no policy"))
    }

    /// Starts a script as a [`Process`] (see [`crate::Process`]).
    pub async fn spawn(&self, script: &str, opts: &crate::SpawnOptions) -> io::Result<Process> {
        spawn(&self.c, script, opts, 0).await
    }

    /// Opens a persistent [`Shell`].
    pub async fn shell(&self, opts: &crate::ExecOptions) -> io::Result<Shell> {
        self.c.bindings.register(&self.c.t, &opts.bindings)?;
        let release = crate::process::Release {
            t: Arc::clone(&self.c.t),
            reg: Arc::clone(&self.c.bindings),
            opts: opts.clone(),
            done: false,
        };
        let pc = crate::clients::ProcessServiceClient::new(Arc::clone(&self.c.t));
        let r =
            pc.open_shell_async(&pb::OpenShellRequest { exec: Some(crate::sandbox::exec_request("", opts)) }).await?;
        Ok(Shell { id: r.shell_id, c: Arc::clone(&self.c), release })
    }

    /// The processes running (or ended with their exit not read).
    pub async fn processes(&self) -> io::Result<Vec<crate::ProcessInfo>> {
        let pc = crate::clients::ProcessServiceClient::new(Arc::clone(&self.c.t));
        Ok(pc.list_processes_async(&pb::ListProcessesRequest {}).await?.processes)
    }

    /// Kills a process by pid (signal 0: SIGKILL).
    pub async fn kill(&self, pid: u64, signal: i32) -> io::Result<()> {
        let pc = crate::clients::ProcessServiceClient::new(Arc::clone(&self.c.t));
        pc.kill_process_async(&pb::KillProcessRequest { pid, signal }).await?;
        Ok(())
    }

    /// Finishes the calls in flight and stops the engine.
    /// [`crate::AgentFS::mount_sandbox`], off the runtime's threads (it
    /// waits for `agentfs mount`). The guard's `unmount` blocks likewise:
    /// call it in `spawn_blocking`, or drop the guard there.
    pub async fn mount_sandbox(&self, opts: &crate::MountOptions) -> io::Result<crate::SandboxMount> {
        let a = self.blocking();
        let opts = opts.clone();
        tokio::task::spawn_blocking(move || a.mount_sandbox(&opts)).await.map_err(io::Error::other)?
    }

    pub async fn close(self) -> io::Result<()> {
        let c = self.c;
        tokio::task::spawn_blocking(move || {
            // Mounts end before the engine (see crate::AgentFS::close).
            let unmounted = c.mounts.unmount_all();
            unmounted.and(c.t.close())
        })
        .await
        .map_err(io::Error::other)?
    }
}

impl From<crate::AgentFS> for AgentFS {
    /// The async API over a connection opened with the blocking one.
    fn from(a: crate::AgentFS) -> AgentFS {
        AgentFS { c: Arc::clone(a.clients()) }
    }
}

/// The agent's filesystem (async); see [`crate::Fs`].
#[derive(Clone)]
pub struct Fs {
    c: Arc<Clients>,
}

impl Fs {
    fs_ops!(gen_async);

    /// Whether `path` exists (following symlinks).
    pub async fn exists(&self, path: impl AsRef<str>) -> io::Result<bool> {
        match self.access(path, 0).await {
            Ok(()) => Ok(true),
            Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(false),
            Err(e) => Err(e),
        }
    }

    /// Opens a file for reading.
    pub async fn open(&self, path: impl AsRef<str>) -> io::Result<File> {
        self.open_with(path, OpenOptions::new().read(true)).await
    }

    /// Creates (or truncates) a file and opens it for writing.
    pub async fn create(&self, path: impl AsRef<str>) -> io::Result<File> {
        self.open_with(path, OpenOptions::new().write(true).create(true).truncate(true)).await
    }

    pub async fn open_with(&self, path: impl AsRef<str>, opts: &OpenOptions) -> io::Result<File> {
        let r = self.c.fs.open_async(&opts.to_pb(path.as_ref())).await?;
        Ok(File { c: Arc::clone(&self.c), handle: r.handle, open: true, pos: 0, append: opts.is_append(), op: None })
    }
}

/// An open file (async): positional reads and writes, and tokio's
/// `AsyncRead`/`AsyncWrite`/`AsyncSeek` at a cursor kept here (one
/// operation at a time, as with `tokio::fs::File`). Closed on drop (in the
/// background) or by [`File::close`].
pub struct File {
    c: Arc<Clients>,
    handle: u64,
    open: bool,
    pos: u64,
    append: bool,
    /// The call behind a pending poll_read/poll_write/poll_complete.
    op: Option<Op>,
}

type Pending<T> = Pin<Box<dyn Future<Output = io::Result<T>> + Send>>;

enum Op {
    Read(Pending<Vec<u8>>),
    /// Bytes written and the cursor after them.
    Write(Pending<(usize, u64)>),
    Seek(Pending<u64>),
}

impl File {
    pub async fn pread(&self, offset: u64, len: usize) -> io::Result<Vec<u8>> {
        let req = pb::PreadRequest { handle: self.handle, offset: offset as i64, size: len as i64 };
        Ok(self.c.fs.pread_async(&req).await?.data)
    }

    pub async fn pwrite(&self, offset: u64, data: &[u8]) -> io::Result<usize> {
        let req = pb::PwriteRequest { handle: self.handle, offset: offset as i64, data: data.to_vec() };
        Ok(self.c.fs.pwrite_async(&req).await?.written as usize)
    }

    pub async fn fsync(&self) -> io::Result<()> {
        self.c.fs.fsync_async(&pb::FsyncRequest { handle: self.handle }).await.map(|_| ())
    }

    pub async fn metadata(&self) -> io::Result<Metadata> {
        Ok(Metadata::from_pb(self.c.fs.fstat_async(&pb::FstatRequest { handle: self.handle }).await?.stat))
    }

    pub async fn set_len(&self, size: u64) -> io::Result<()> {
        self.c.fs.ftruncate_async(&pb::FtruncateRequest { handle: self.handle, size: size as i64 }).await.map(|_| ())
    }

    pub async fn close(mut self) -> io::Result<()> {
        self.open = false;
        self.c.fs.close_async(&pb::CloseRequest { handle: self.handle }).await.map(|_| ())
    }

    fn busy() -> io::Error {
        io::Error::other("agentfs::aio::File: another read, write or seek is in progress")
    }

    /// The size of the file, as a future that does not borrow self.
    fn size_future(&self) -> impl Future<Output = io::Result<u64>> + Send + 'static {
        let fs = self.c.fs.clone();
        let req = pb::FstatRequest { handle: self.handle };
        async move { Ok(fs.fstat_async(&req).await?.stat.unwrap_or_default().size.max(0) as u64) }
    }
}

impl tokio::io::AsyncRead for File {
    fn poll_read(self: Pin<&mut Self>, cx: &mut Context<'_>, buf: &mut tokio::io::ReadBuf<'_>) -> Poll<io::Result<()>> {
        let this = self.get_mut();
        if this.op.is_none() && buf.remaining() == 0 {
            return Poll::Ready(Ok(()));
        }
        if this.op.is_none() {
            let fs = this.c.fs.clone();
            let req = pb::PreadRequest { handle: this.handle, offset: this.pos as i64, size: buf.remaining() as i64 };
            this.op = Some(Op::Read(Box::pin(async move { Ok(fs.pread_async(&req).await?.data) })));
        }
        let Some(Op::Read(fut)) = &mut this.op else { return Poll::Ready(Err(File::busy())) };
        let r = ready!(fut.as_mut().poll(cx));
        this.op = None;
        let data = r?;
        let n = data.len().min(buf.remaining());
        buf.put_slice(&data[..n]);
        this.pos += n as u64;
        Poll::Ready(Ok(()))
    }
}

impl tokio::io::AsyncWrite for File {
    fn poll_write(self: Pin<&mut Self>, cx: &mut Context<'_>, buf: &[u8]) -> Poll<io::Result<usize>> {
        let this = self.get_mut();
        if this.op.is_none() && buf.is_empty() {
            return Poll::Ready(Ok(0));
        }
        if this.op.is_none() {
            let fs = this.c.fs.clone();
            let (handle, pos, data) = (this.handle, this.pos, buf.to_vec());
            let size = this.append.then(|| this.size_future());
            this.op = Some(Op::Write(Box::pin(async move {
                // Appends go to the end as it is when the write starts.
                let at = match size {
                    Some(f) => f.await?,
                    None => pos,
                };
                let req = pb::PwriteRequest { handle, offset: at as i64, data };
                let n = fs.pwrite_async(&req).await?.written as usize;
                Ok((n, at + n as u64))
            })));
        }
        let Some(Op::Write(fut)) = &mut this.op else { return Poll::Ready(Err(File::busy())) };
        let r = ready!(fut.as_mut().poll(cx));
        this.op = None;
        let (n, end) = r?;
        this.pos = end;
        Poll::Ready(Ok(n))
    }

    /// Writes reach the engine when poll_write completes; a write still in
    /// flight is finished here.
    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        let this = self.get_mut();
        if let Some(Op::Write(fut)) = &mut this.op {
            let r = ready!(fut.as_mut().poll(cx));
            this.op = None;
            this.pos = r?.1;
        }
        Poll::Ready(Ok(()))
    }

    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        self.poll_flush(cx)
    }
}

impl tokio::io::AsyncSeek for File {
    fn start_seek(self: Pin<&mut Self>, to: SeekFrom) -> io::Result<()> {
        let this = self.get_mut();
        if this.op.is_some() {
            return Err(File::busy());
        }
        let target = |base: u64, d: i64| {
            base.checked_add_signed(d)
                .ok_or_else(|| io::Error::new(io::ErrorKind::InvalidInput, "seek before the start of the file"))
        };
        match to {
            SeekFrom::Start(n) => this.pos = n,
            SeekFrom::Current(d) => this.pos = target(this.pos, d)?,
            SeekFrom::End(d) => {
                let size = this.size_future();
                this.op = Some(Op::Seek(Box::pin(async move { target(size.await?, d) })));
            }
        }
        Ok(())
    }

    fn poll_complete(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<u64>> {
        let this = self.get_mut();
        match &mut this.op {
            Some(Op::Seek(fut)) => {
                let r = ready!(fut.as_mut().poll(cx));
                this.op = None;
                this.pos = r?;
                Poll::Ready(Ok(this.pos))
            }
            // A read or write in flight is finished first.
            Some(Op::Read(_)) | Some(Op::Write(_)) => Poll::Ready(Err(File::busy())),
            None => Poll::Ready(Ok(this.pos)),
        }
    }
}

impl Drop for File {
    fn drop(&mut self) {
        if self.open {
            // Fire and forget: the answer is not awaited.
            let c = Arc::clone(&self.c);
            let req = pb::CloseRequest { handle: self.handle };
            match tokio::runtime::Handle::try_current() {
                Ok(h) => {
                    h.spawn(async move {
                        let _ = c.fs.close_async(&req).await;
                    });
                }
                Err(_) => {
                    let _ = c.fs.close(&req);
                }
            }
        }
    }
}

/// The key-value store (async); see [`crate::Kv`].
#[derive(Clone)]
pub struct Kv {
    c: Arc<Clients>,
}

impl Kv {
    kv_ops!(gen_async);

    pub async fn set<T: Serialize + ?Sized>(&self, key: impl AsRef<str>, value: &T) -> io::Result<()> {
        let req = crate::kv::set_request(key.as_ref(), value)?;
        self.c.kv.kv_set_async(&req).await.map(|_| ())
    }

    pub async fn get<T: DeserializeOwned>(&self, key: impl AsRef<str>) -> io::Result<Option<T>> {
        let key = key.as_ref();
        let r = self.c.kv.kv_get_async(&pb::KvGetRequest { key: key.into() }).await?;
        crate::kv::decode_get(key, r)
    }
}

/// The tool-call log (async); see [`crate::Tools`].
#[derive(Clone)]
pub struct Tools {
    c: Arc<Clients>,
}

impl Tools {
    tools_ops!(gen_async);
}

async fn spawn(c: &Arc<Clients>, script: &str, opts: &crate::SpawnOptions, shell_id: u64) -> io::Result<Process> {
    c.bindings.register(&c.t, &opts.exec.bindings)?;
    let release = crate::process::Release {
        t: Arc::clone(&c.t),
        reg: Arc::clone(&c.bindings),
        opts: opts.exec.clone(),
        done: false,
    };
    let pc = crate::clients::ProcessServiceClient::new(Arc::clone(&c.t));
    let start = crate::process::start_request(script, opts, shell_id);
    let streamed = if c.t.stream_blocks() {
        let (t, s) = (Arc::clone(&c.t), start.clone());
        tokio::task::spawn_blocking(move || crate::process::stream_request(&t, s))
            .await
            .map_err(|e| io::Error::other(format!("spawn: {e}")))?
    } else {
        crate::process::stream_request(&c.t, start.clone())
    };
    if let Some(feed) = streamed {
        let feed = feed?;
        let pid = crate::process::first_pid(feed.next_async().await)?;
        crate::process::arm(&feed, &pc, pid);
        return Ok(Process { pid, c: pc, result: None, release, feed: Some(feed) });
    }
    let r = pc.start_process_async(&start).await?;
    Ok(Process { pid: r.pid, c: pc, result: None, release, feed: None })
}

/// A script running in the engine (async form of [`crate::Process`]).
pub struct Process {
    pid: u64,
    c: crate::clients::ProcessServiceClient,
    result: Option<crate::ProcessResult>,
    release: crate::process::Release,
    feed: Option<Arc<crate::transport::Feed>>,
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

impl Process {
    pub fn pid(&self) -> u64 {
        self.pid
    }

    /// The next output (waits up to 30 s); `true` once the process ended
    /// and every byte was read.
    pub async fn read(&mut self) -> io::Result<(Vec<crate::Chunk>, bool)> {
        if self.result.is_some() {
            return Ok((Vec::new(), true));
        }
        let req = pb::ReadProcessRequest { pid: self.pid, wait_ms: crate::process::WAIT_MS, max_bytes: 0 };
        let mut r = match &self.feed {
            Some(f) => crate::process::feed_item(f.next_async().await)?,
            None => self.c.read_process_async(&req).await?,
        };
        let cs = crate::process::chunks(&mut r);
        if let Some(e) = crate::process::end(&r) {
            self.result = Some(e);
            self.release.release();
            if let Some(f) = self.feed.as_ref().filter(|f| f.pulls()) {
                let _ = f.next_async().await; // see crate::Process::read
            }
        }
        Ok((cs, self.result.is_some()))
    }

    /// Writes to stdin (spawn with `keep_stdin_open`).
    pub async fn write(&self, data: &[u8]) -> io::Result<()> {
        self.c
            .write_process_async(&pb::WriteProcessRequest { pid: self.pid, data: data.to_vec(), close_stdin: false })
            .await?;
        Ok(())
    }

    /// The script reads end of file after what was written.
    pub async fn close_stdin(&self) -> io::Result<()> {
        self.c
            .write_process_async(&pb::WriteProcessRequest { pid: self.pid, data: Vec::new(), close_stdin: true })
            .await?;
        Ok(())
    }

    /// Sends a POSIX signal (0: SIGKILL); the exit code becomes 128+signal.
    pub async fn kill(&self, signal: i32) -> io::Result<()> {
        if self.result.is_none() {
            match self.c.kill_process_async(&pb::KillProcessRequest { pid: self.pid, signal }).await {
                // See crate::Process::kill.
                Err(e) if self.feed.is_some() && e.kind() == io::ErrorKind::NotFound => {}
                r => {
                    r?;
                }
            }
        }
        Ok(())
    }

    /// Stops reading; see [`crate::Process::close`].
    pub fn close(self) {}

    /// Reads to the end: the exit status and the output not read before.
    pub async fn wait(&mut self) -> io::Result<crate::ProcessResult> {
        let mut all = Vec::new();
        loop {
            let (cs, done) = self.read().await?;
            all.extend(cs);
            if done {
                return Ok(crate::process::finish(self.result.clone().expect("ended"), all));
            }
        }
    }
}

/// A persistent shell (async form of [`crate::Shell`]).
pub struct Shell {
    id: u64,
    c: Arc<Clients>,
    release: crate::process::Release,
}

impl Shell {
    pub fn id(&self) -> u64 {
        self.id
    }

    /// Starts a script in the shell.
    pub async fn spawn(&self, script: &str, opts: &crate::SpawnOptions) -> io::Result<Process> {
        spawn(&self.c, script, opts, self.id).await
    }

    /// Runs a script in the shell and waits for it.
    pub async fn run(&self, script: &str) -> io::Result<crate::ProcessResult> {
        self.spawn(script, &crate::SpawnOptions::default()).await?.wait().await
    }

    /// Kills the shell's scripts and forgets its state.
    pub async fn close(mut self) -> io::Result<()> {
        let pc = crate::clients::ProcessServiceClient::new(Arc::clone(&self.c.t));
        let r = pc.close_shell_async(&pb::CloseShellRequest { shell_id: self.id }).await;
        self.release.release();
        r.map(|_| ())
    }
}

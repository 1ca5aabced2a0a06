//! Opening an agent: [`Options`], [`AgentFS`].

use std::io;
use std::path::PathBuf;
use std::sync::Arc;

use crate::clients::{AgentServiceClient, FilesystemServiceClient, KvServiceClient, ToolsServiceClient};
use crate::transport::stdio::{Stdio, StdioConfig};
use crate::transport::Transport;
use crate::{engine, pb, Fs, Kv, Tools};

/// What to open and how to reach the engine.
///
/// Locally (the default), the engine runs as a child process (`agentfs
/// serve --stdio`) and opens `id` (`.agentfs/ID.db` under `dir`) or `path`,
/// or, with neither, a temporary database removed at close. With `url`, the
/// calls go to an `agentfs serve http` server instead, to the agent `id`.
#[derive(Debug, Clone, Default)]
pub struct Options {
    /// Agent id: `.agentfs/ID.db` locally, the agent's name on a server.
    pub id: Option<String>,
    /// Database file (local only).
    pub path: Option<PathBuf>,
    /// The agentfs binary; else AGENTFS_BIN, a bundled binary, PATH
    /// (see [`crate::find_engine`]).
    pub engine: Option<PathBuf>,
    /// Working directory of the engine (where `.agentfs/` is); default the
    /// current directory.
    pub dir: Option<PathBuf>,
    /// Fail instead of creating a missing database (or server agent).
    pub no_create: bool,
    pub read_only: bool,
    /// Chunk size of a new database; `None` is the engine's default (4096).
    pub chunk_size: Option<i64>,
    /// `"normal"` (default) or `"full"` (fsync each commit).
    pub durability: Option<String>,
    /// Base URL of an `agentfs serve http` server, e.g. `http://127.0.0.1:7777`.
    pub url: Option<String>,
    /// Bearer token for the server; default `$AGENTFS_TOKEN`.
    pub token: Option<String>,
    /// Encryption at rest: the key's bytes (16 or 32, as the cipher
    /// needs; [`Options::key_hex`] parses hex). It reaches the engine in
    /// the handshake only, never its arguments or environment.
    pub encryption_key: Option<Vec<u8>>,
    /// Cipher of a new encrypted database: `aes128gcm`, `aes256gcm`,
    /// `aegis128l`, `aegis128x2`, `aegis128x4`, `aegis256` (default),
    /// `aegis256x2`, `aegis256x4`; an existing file names its own.
    pub cipher: Option<String>,
    /// Sync remote (docs/SYNC.md): a database that does not exist yet is
    /// bootstrapped from this URL; an existing one must be synced with it
    /// already. Then [`AgentFS::pull`], `push`, `sync` and `stats`.
    pub sync_remote_url: Option<String>,
    /// Bearer token of the sync remote; default the engine's
    /// `$TURSO_DB_AUTH_TOKEN`.
    pub sync_token: Option<String>,
    /// Partial sync (docs/SYNC.md; `agentfs init --sync-partial-*`): a
    /// database bootstrapped from `sync_remote_url` receives only the
    /// first this many bytes of the remote; the pages it lacks are fetched
    /// when read. Used only when the database is bootstrapped.
    pub sync_partial_bootstrap_length: Option<i64>,
    /// Partial sync: bootstrap only the pages the server reads to run this
    /// SQL query (instead of a length).
    pub sync_partial_bootstrap_query: Option<String>,
    /// Partial sync: absent pages are fetched in aligned segments of this
    /// many bytes (default 131072).
    pub sync_partial_segment_size: Option<i64>,
    /// Partial sync: with a fetched interior b-tree page, also fetch the
    /// pages it points to.
    pub sync_partial_prefetch: bool,
}

impl Options {
    /// The agent `id` (`.agentfs/ID.db`).
    pub fn id(id: impl Into<String>) -> Options {
        Options { id: Some(id.into()), ..Default::default() }
    }

    /// The database file at `path`.
    pub fn path(path: impl Into<PathBuf>) -> Options {
        Options { path: Some(path.into()), ..Default::default() }
    }

    /// The agent `id` on the server at `url`.
    pub fn http(url: impl Into<String>, id: impl Into<String>) -> Options {
        Options { url: Some(url.into()), id: Some(id.into()), ..Default::default() }
    }

    /// Sets the encryption key from hex text (as the CLI's `--key`). The
    /// error never repeats the key.
    pub fn key_hex(mut self, hex: &str) -> io::Result<Options> {
        let h = hex.trim();
        let bad = || {
            io::Error::new(
                io::ErrorKind::InvalidInput,
                format!("agentfs: the encryption key is not hexadecimal ({} characters): give 32 or 64 hex digits", h.len()),
            )
        };
        if h.is_empty() || h.len() % 2 != 0 {
            return Err(bad());
        }
        let key = (0..h.len())
            .step_by(2)
            .map(|i| h.get(i..i + 2).and_then(|b| u8::from_str_radix(b, 16).ok()))
            .collect::<Option<Vec<u8>>>()
            .ok_or_else(bad)?;
        self.encryption_key = Some(key);
        Ok(self)
    }
}

/// The generated clients over one transport, shared by every handle of an
/// agent.
pub(crate) struct Clients {
    pub(crate) t: Arc<dyn Transport>,
    pub(crate) fs: FilesystemServiceClient,
    pub(crate) kv: KvServiceClient,
    pub(crate) tools: ToolsServiceClient,
    pub(crate) agent: AgentServiceClient,
    pub(crate) bindings: Arc<crate::sandbox::Registry>,
    /// How `agentfs mount` reaches this agent's database (None: HTTP).
    pub(crate) mount: Option<crate::mount::MountCtx>,
    pub(crate) mounts: crate::mount::Mounts,
}

impl Clients {
    fn new(t: Arc<dyn Transport>) -> Clients {
        Clients {
            fs: FilesystemServiceClient::new(Arc::clone(&t)),
            kv: KvServiceClient::new(Arc::clone(&t)),
            tools: ToolsServiceClient::new(Arc::clone(&t)),
            agent: AgentServiceClient::new(Arc::clone(&t)),
            bindings: Arc::default(),
            mount: None,
            mounts: crate::mount::Mounts::default(),
            t,
        }
    }
}

/// Connects as `opts` say (blocking: starts the engine or checks the
/// server).
pub(crate) fn connect(opts: &Options) -> io::Result<Arc<Clients>> {
    if let Some(url) = &opts.url {
        return connect_http(opts, url);
    }
    if opts.id.is_some() && opts.path.is_some() {
        return Err(io::Error::new(io::ErrorKind::InvalidInput, "agentfs: set Options::id or Options::path, not both"));
    }
    let path = match &opts.path {
        None => String::new(),
        Some(p) => p.to_str().map(String::from).ok_or_else(|| {
            io::Error::new(io::ErrorKind::InvalidInput, format!("agentfs: database path {p:?} is not UTF-8"))
        })?,
    };
    let engine = engine::find_engine(opts.engine.as_deref())?;
    let open = pb::OpenOptions {
        id: opts.id.clone().unwrap_or_default(),
        path,
        no_create: opts.no_create,
        read_only: opts.read_only,
        chunk_size: opts.chunk_size.unwrap_or(0),
        durability: opts.durability.clone().unwrap_or_default(),
        encryption_key: opts.encryption_key.clone().unwrap_or_default(),
        cipher: opts.cipher.clone().unwrap_or_default(),
        sync_remote_url: opts.sync_remote_url.clone().unwrap_or_default(),
        sync_token: opts.sync_token.clone().unwrap_or_default(),
        sync_partial_bootstrap_length: opts.sync_partial_bootstrap_length.unwrap_or(0),
        sync_partial_bootstrap_query: opts.sync_partial_bootstrap_query.clone().unwrap_or_default(),
        sync_partial_segment_size: opts.sync_partial_segment_size.unwrap_or(0),
        sync_partial_prefetch: opts.sync_partial_prefetch,
        // The engine is a child process started in opts.dir: relative
        // paths already resolve there.
        ..Default::default()
    };
    let ctx = crate::mount::MountCtx::new(engine.clone(), &open.encryption_key, &open.cipher);
    let t = Stdio::start(StdioConfig { engine, open, dir: opts.dir.clone() })?;
    let mut c = Clients::new(Arc::new(t));
    c.mount = Some(ctx);
    Ok(Arc::new(c))
}

#[cfg(feature = "http")]
fn connect_http(opts: &Options, url: &str) -> io::Result<Arc<Clients>> {
    use crate::transport::http::{Http, HttpConfig};
    let Some(id) = opts.id.clone() else {
        return Err(io::Error::new(io::ErrorKind::InvalidInput, "agentfs: Options::url needs Options::id (the agent)"));
    };
    if opts.sync_partial_bootstrap_length.is_some()
        || opts.sync_partial_bootstrap_query.is_some()
        || opts.sync_partial_segment_size.is_some()
        || opts.sync_partial_prefetch
    {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            "agentfs: Options::sync_partial_* are for a local database bootstrapped from sync_remote_url, not an HTTP agent",
        ));
    }
    if opts.path.is_some() {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            "agentfs: Options::path is local; use Options::id with a server",
        ));
    }
    // As the server, the client takes the token from AGENTFS_TOKEN when none
    // is given.
    let token = opts.token.clone().or_else(|| std::env::var("AGENTFS_TOKEN").ok()).filter(|t| !t.is_empty());
    let t: Arc<dyn Transport> = Arc::new(Http::new(HttpConfig { url: url.into(), token, agent: id.clone() }));
    let c = Clients::new(t);
    if opts.no_create {
        c.agent.info(&pb::InfoRequest {})?;
    } else {
        c.agent.create_agent(&pb::CreateAgentRequest {
            id,
            chunk_size: opts.chunk_size.unwrap_or(0),
            exist_ok: true,
        })?;
    }
    Ok(Arc::new(c))
}

#[cfg(not(feature = "http"))]
fn connect_http(_: &Options, _: &str) -> io::Result<Arc<Clients>> {
    Err(io::Error::new(io::ErrorKind::Unsupported, "agentfs: built without the \"http\" feature"))
}

/// An open agent: its filesystem, key-value store and tool-call log
/// (blocking API; see [`crate::aio`] for async).
///
/// ```no_run
/// let agent = agentfs::AgentFS::open(agentfs::Options::id("demo"))?;
/// agent.fs().write_file("/notes.txt", "hello")?;
/// assert_eq!(agent.fs().read_file("/notes.txt")?, b"hello");
/// agent.kv().set("step", &3)?;
/// agent.close()?;
/// # Ok::<(), std::io::Error>(())
/// ```
pub struct AgentFS {
    c: Arc<Clients>,
}

impl AgentFS {
    /// Opens the agent `opts` names (starting the engine, or reaching the
    /// server).
    pub fn open(opts: Options) -> io::Result<AgentFS> {
        Ok(AgentFS { c: connect(&opts)? })
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

    /// Runs a shell script in the engine's in-process sandbox over this
    /// agent's files. `opts.bindings` are functions of this process the
    /// script runs as commands; the engine calls them back over stdio (an
    /// HTTP agent refuses bindings).
    pub fn exec(&self, script: &str, opts: &crate::ExecOptions) -> io::Result<crate::ExecResult> {
        crate::sandbox::exec(&self.c.t, &self.c.bindings, script, opts)
    }

    /// The effective policy of these exec options, with every default
    /// filled in (`agentfs.v1.EffectivePolicy`, as `agentfs sh
    /// --print-policy` prints it): what a script may read, write, run and
    /// reach. Nothing runs; a policy exec would refuse fails the same way
    /// (EINVAL, `io::ErrorKind::InvalidInput`). Bindings are listed by
    /// name.
    pub fn policy(&self, opts: &crate::ExecOptions) -> io::Result<crate::Policy> {
        crate::sandbox::policy(&self.c.t, opts)
    }

    /// Starts a script as a [`crate::Process`]: read its output as it
    /// comes, write its stdin, kill it, wait for its exit code.
    pub fn spawn(&self, script: &str, opts: &crate::SpawnOptions) -> io::Result<crate::Process> {
        crate::process::spawn(&self.c.t, &self.c.bindings, script, opts, 0)
    }

    /// Opens a persistent [`crate::Shell`] with this policy: working
    /// directory, variables and functions survive between its scripts.
    pub fn shell(&self, opts: &crate::ExecOptions) -> io::Result<crate::Shell> {
        crate::process::shell(&self.c.t, &self.c.bindings, opts)
    }

    /// The processes running (or ended with their exit not read).
    pub fn processes(&self) -> io::Result<Vec<crate::ProcessInfo>> {
        Ok(crate::clients::ProcessServiceClient::new(Arc::clone(&self.c.t))
            .list_processes(&pb::ListProcessesRequest {})?
            .processes)
    }

    /// Opens (resumes or creates) an agent session: a conversation with a
    /// model whose tool calls run on this agent inside the engine
    /// (docs/SESSIONS.md). [`crate::Session::prompt`] streams its events.
    pub fn open_session(&self, opts: &crate::SessionOptions) -> io::Result<crate::Session> {
        crate::Session::open(&self.c.t, opts)
    }

    /// The sessions stored in this agent.
    pub fn sessions(&self) -> io::Result<Vec<crate::SessionInfo>> {
        crate::session::list(&self.c.t)
    }

    /// Removes a stored session; `true` when there was one.
    pub fn delete_session(&self, id: &str) -> io::Result<bool> {
        crate::session::delete(&self.c.t, id)
    }

    /// Kills a process by pid (signal 0: SIGKILL).
    pub fn kill(&self, pid: u64, signal: i32) -> io::Result<()> {
        crate::clients::ProcessServiceClient::new(Arc::clone(&self.c.t))
            .kill_process(&pb::KillProcessRequest { pid, signal })?;
        Ok(())
    }

    /// What is open: id, database path, schema and engine versions.
    pub fn info(&self) -> io::Result<pb::InfoResponse> {
        self.c.agent.info(&pb::InfoRequest {})
    }

    /// Brings the sync remote's changes into the agent; rows both sides
    /// changed keep this side's version (docs/SYNC.md). Fails (failed
    /// precondition) when the agent has no sync remote.
    pub fn pull(&self) -> io::Result<pb::SyncPullResponse> {
        self.c.agent.sync_pull(&pb::SyncPullRequest {})
    }

    /// Sends the agent's changes to the sync remote (after merging the
    /// remote's).
    pub fn push(&self) -> io::Result<pb::SyncPushResponse> {
        self.c.agent.sync_push(&pb::SyncPushRequest {})
    }

    /// Pulls, then pushes.
    pub fn sync(&self) -> io::Result<pb::SyncResponse> {
        self.c.agent.sync(&pb::SyncRequest {})
    }

    /// The sync state (as `agentfs sync ID stats` prints it; unix times are
    /// 0 when it never happened).
    pub fn stats(&self) -> io::Result<pb::SyncStatsResponse> {
        self.c.agent.sync_stats(&pb::SyncStatsRequest {})
    }

    /// The transport, for the generated clients of what the idiomatic API
    /// does not cover (snapshots, SQL queries, the sandbox...):
    /// `agentfs::clients::AgentServiceClient::new(agent.transport())`.
    pub fn transport(&self) -> Arc<dyn Transport> {
        Arc::clone(&self.c.t)
    }

    /// A round trip that does no work: checks that the engine (or server)
    /// answers.
    pub fn ping(&self) -> io::Result<()> {
        self.c.t.ping()
    }

    /// The engine's process id (stdio transport).
    pub fn engine_pid(&self) -> Option<u32> {
        self.c.t.engine_pid()
    }

    /// Mounts the agent's filesystem with FUSE on a host directory so that
    /// real programs (git, a compiler, tar) run over it: the escape hatch
    /// from the in-process sandbox (agentOS's mountSandbox). The mount is
    /// served by the engine's CLI (`agentfs mount`) on the same database
    /// file; after [`SandboxMount::unmount`] (or dropping the guard, or
    /// [`AgentFS::close`]) everything the programs wrote is in the agent.
    /// While it is mounted, write through the mount: the kernel caches
    /// what it read for a few seconds, so changes made meanwhile through
    /// [`AgentFS::fs`] may show in the mount late. Needs a local agent
    /// (an HTTP agent is refused: run `agentfs mount` on the server) and
    /// Linux with /dev/fuse; an encryption key reaches the mount's server
    /// through its environment only.
    ///
    /// [`SandboxMount::unmount`]: crate::SandboxMount::unmount
    pub fn mount_sandbox(&self, opts: &crate::MountOptions) -> io::Result<crate::SandboxMount> {
        let Some(ctx) = &self.c.mount else {
            return Err(io::Error::new(
                io::ErrorKind::Unsupported,
                "agentfs: mount_sandbox needs an agent whose database is a file of this machine (not HTTP); for a server's agent, run `agentfs mount` on the server",
            ));
        };
        let mut ctx = ctx.clone();
        if let Some(e) = &opts.engine {
            ctx.engine = engine::find_engine(Some(e))?;
        }
        let path = self.info()?.path;
        self.c.mounts.mount(ctx, &path, opts.dir.as_deref())
    }

    /// Unmounts the agent's mounts ([`AgentFS::mount_sandbox`]), lets the
    /// calls in flight finish, closes the database and stops the engine.
    /// Dropping the last handle does the same without reporting.
    pub fn close(self) -> io::Result<()> {
        // Mounts end before the engine: everything they wrote is in the
        // database when close returns.
        let unmounted = self.c.mounts.unmount_all();
        let closed = self.c.t.close();
        unmounted.and(closed)
    }

    #[cfg(feature = "tokio")]
    pub(crate) fn from_clients(c: Arc<Clients>) -> AgentFS {
        AgentFS { c }
    }

    #[cfg(feature = "tokio")]
    pub(crate) fn clients(&self) -> &Arc<Clients> {
        &self.c
    }
}

//! [`crate::AgentFS::mount_sandbox`]: the escape hatch from the in-process
//! sandbox. The agent's filesystem is mounted with FUSE on a host directory
//! by the engine's CLI (`agentfs mount`, a server process of its own on the
//! same database file), so that any native program (git, a compiler, tar)
//! runs over the agent's files; unmounting hands them back. The same design
//! as the TypeScript and Python SDKs, so that one engine serves the mount
//! for every SDK. Linux with /dev/fuse (and fusermount3 when not root).

use std::io;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::{Arc, Mutex};

/// What `agentfs mount` of an agent's database needs: the engine binary
/// and, for an encrypted database, the key in its environment.
#[derive(Clone)]
pub(crate) struct MountCtx {
    pub(crate) engine: PathBuf,
    // AGENTFS_KEY/AGENTFS_CIPHER: the key travels in the mount server's
    // environment, never in its arguments (which every user of the
    // machine can read).
    pub(crate) env: Vec<(String, String)>,
}

impl MountCtx {
    pub(crate) fn new(engine: PathBuf, key: &[u8], cipher: &str) -> MountCtx {
        let mut env = Vec::new();
        if !key.is_empty() {
            env.push(("AGENTFS_KEY".into(), key.iter().map(|b| format!("{b:02x}")).collect()));
            if !cipher.is_empty() {
                env.push(("AGENTFS_CIPHER".into(), cipher.into()));
            }
        }
        MountCtx { engine, env }
    }
}

/// Options of [`crate::AgentFS::mount_sandbox`].
#[derive(Debug, Clone, Default)]
pub struct MountOptions {
    /// Host directory to mount on (it must exist and be empty); `None`: a
    /// new temporary directory, removed on unmount.
    pub dir: Option<PathBuf>,
    /// The agentfs binary that serves the mount; default the agent's
    /// engine.
    pub engine: Option<PathBuf>,
}

struct State {
    path: PathBuf,
    temp: bool,
    ctx: MountCtx,
    mounted: Mutex<bool>,
}

impl State {
    fn unmount(&self) -> io::Result<()> {
        let mut mounted = self.mounted.lock().unwrap_or_else(|e| e.into_inner());
        if !*mounted {
            return Ok(());
        }
        run(&self.ctx, &["umount".as_ref(), self.path.as_os_str()])?;
        *mounted = false;
        if self.temp {
            std::fs::remove_dir(&self.path)?;
        }
        Ok(())
    }
}

/// An agent's mounts not unmounted yet: closing the agent ends them before
/// the engine (and so the database) closes.
#[derive(Default)]
pub(crate) struct Mounts(Mutex<Vec<Arc<State>>>);

impl Mounts {
    pub(crate) fn mount(&self, ctx: MountCtx, db_path: &str, dir: Option<&Path>) -> io::Result<SandboxMount> {
        if !cfg!(target_os = "linux") {
            return Err(io::Error::new(
                io::ErrorKind::Unsupported,
                format!("agentfs: mount_sandbox: FUSE mounts are Linux only (this is {})", std::env::consts::OS),
            ));
        }
        if db_path.is_empty() {
            return Err(io::Error::new(
                io::ErrorKind::Unsupported,
                "agentfs: mount_sandbox: the engine did not name the agent's database file",
            ));
        }
        let temp = dir.is_none();
        let path = match dir {
            Some(d) => std::path::absolute(d)?,
            None => make_temp_dir()?,
        };
        if let Err(e) = run(&ctx, &["mount".as_ref(), db_path.as_ref(), path.as_os_str()]) {
            if temp {
                let _ = std::fs::remove_dir(&path);
            }
            return Err(e);
        }
        let st = Arc::new(State { path, temp, ctx, mounted: Mutex::new(true) });
        let mut live = self.0.lock().unwrap_or_else(|e| e.into_inner());
        live.retain(|s| *s.mounted.lock().unwrap_or_else(|e| e.into_inner()));
        live.push(Arc::clone(&st));
        Ok(SandboxMount { st })
    }

    /// Unmounts every mount still mounted; the first failure is returned
    /// (the others are still tried).
    pub(crate) fn unmount_all(&self) -> io::Result<()> {
        let live: Vec<Arc<State>> = std::mem::take(&mut *self.0.lock().unwrap_or_else(|e| e.into_inner()));
        let mut first = Ok(());
        for s in live {
            if let Err(e) = s.unmount() {
                if first.is_ok() {
                    first = Err(e);
                }
            }
        }
        first
    }
}

impl Drop for Mounts {
    // The agent's last handle is gone without close(): its mounts end too.
    fn drop(&mut self) {
        let _ = self.unmount_all();
    }
}

/// The agent's filesystem mounted on a host directory
/// ([`crate::AgentFS::mount_sandbox`]). Dropping it unmounts (errors
/// ignored; call [`SandboxMount::unmount`] to see them).
pub struct SandboxMount {
    st: Arc<State>,
}

impl SandboxMount {
    /// The mount point, absolute.
    pub fn path(&self) -> &Path {
        &self.st.path
    }

    /// Whether it is still mounted (closing the agent unmounts it).
    pub fn is_mounted(&self) -> bool {
        *self.st.mounted.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Unmounts (removing the directory when mount_sandbox made it). It
    /// fails with EBUSY (`io::ErrorKind::ResourceBusy`) while a process
    /// still uses the mount; once it succeeded, later calls do nothing.
    pub fn unmount(&self) -> io::Result<()> {
        self.st.unmount()
    }
}

impl Drop for SandboxMount {
    fn drop(&mut self) {
        let _ = self.st.unmount();
    }
}

impl std::fmt::Debug for SandboxMount {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SandboxMount").field("path", &self.st.path).field("mounted", &self.is_mounted()).finish()
    }
}

fn make_temp_dir() -> io::Result<PathBuf> {
    let base = std::env::temp_dir();
    let pid = std::process::id();
    let nanos =
        std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map(|d| d.subsec_nanos()).unwrap_or(0);
    for i in 0..100u32 {
        let p = base.join(format!("agentfs-mount-{pid}-{nanos:x}-{i}"));
        match std::fs::create_dir(&p) {
            Ok(()) => return Ok(p),
            Err(e) if e.kind() == io::ErrorKind::AlreadyExists => continue,
            Err(e) => return Err(e),
        }
    }
    Err(io::Error::new(io::ErrorKind::AlreadyExists, "agentfs: mount_sandbox: no free temporary directory name"))
}

fn run(ctx: &MountCtx, args: &[&std::ffi::OsStr]) -> io::Result<()> {
    // `agentfs mount` returns once the mount is ready; its server runs on,
    // detached.
    let out = Command::new(&ctx.engine)
        .args(args)
        .envs(ctx.env.iter().map(|(k, v)| (k, v)))
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .output()?;
    if out.status.success() {
        return Ok(());
    }
    // The CLI's one-line error (and hint) says what went wrong.
    let stderr = String::from_utf8_lossy(&out.stderr);
    let mut msg = stderr.lines().map(str::trim).filter(|l| !l.is_empty()).collect::<Vec<_>>().join("; ");
    if msg.is_empty() {
        msg = out.status.to_string();
    }
    let words: Vec<String> = args.iter().map(|a| a.to_string_lossy().into_owned()).collect();
    let what = format!("agentfs {}: {msg}", words.join(" "));
    let kind = if msg.to_lowercase().contains("busy") { io::ErrorKind::ResourceBusy } else { io::ErrorKind::Other };
    Err(io::Error::new(kind, what))
}

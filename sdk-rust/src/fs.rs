//! The agent's filesystem: [`Fs`] and the types its methods return.

use std::io::{self, Read, Seek, SeekFrom, Write};
use std::sync::Arc;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use crate::agent::Clients;
use crate::pb;

/// The agent's POSIX-like filesystem (blocking). Paths are absolute and
/// "/"-separated. Cheap to clone; clones share the connection and may be
/// used from many threads at once.
#[derive(Clone)]
pub struct Fs {
    pub(crate) c: Arc<Clients>,
}

impl Fs {
    fs_ops!(gen_blocking);

    /// Whether `path` exists (following symlinks).
    pub fn exists(&self, path: impl AsRef<str>) -> io::Result<bool> {
        match self.access(path, 0) {
            Ok(()) => Ok(true),
            Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(false),
            Err(e) => Err(e),
        }
    }

    /// Opens a file for reading.
    pub fn open(&self, path: impl AsRef<str>) -> io::Result<File> {
        self.open_with(path, OpenOptions::new().read(true))
    }

    /// Creates (or truncates) a file and opens it for writing.
    pub fn create(&self, path: impl AsRef<str>) -> io::Result<File> {
        self.open_with(path, OpenOptions::new().write(true).create(true).truncate(true))
    }

    /// Opens a file as `opts` say.
    pub fn open_with(&self, path: impl AsRef<str>, opts: &OpenOptions) -> io::Result<File> {
        let path = path.as_ref();
        let r = self.c.fs.open(&opts.to_pb(path))?;
        Ok(File {
            c: Arc::clone(&self.c),
            handle: r.handle,
            pos: 0,
            append: opts.append,
            path: path.into(),
            open: true,
        })
    }
}

/// The type of an inode.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FileType {
    File,
    Dir,
    Symlink,
    Fifo,
    CharDevice,
    BlockDevice,
    Socket,
    Unknown,
}

impl FileType {
    /// The type in st_mode bits.
    pub fn from_mode(mode: u32) -> FileType {
        match mode & 0o170000 {
            0o100000 => FileType::File,
            0o040000 => FileType::Dir,
            0o120000 => FileType::Symlink,
            0o010000 => FileType::Fifo,
            0o020000 => FileType::CharDevice,
            0o060000 => FileType::BlockDevice,
            0o140000 => FileType::Socket,
            _ => FileType::Unknown,
        }
    }
}

/// Attributes of an inode (as stat(2)).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Metadata {
    pub ino: i64,
    /// File type and permission bits (st_mode).
    pub mode: u32,
    pub nlink: u32,
    pub uid: u32,
    pub gid: u32,
    pub size: u64,
    pub rdev: u64,
    pub atime: SystemTime,
    pub mtime: SystemTime,
    pub ctime: SystemTime,
    /// Preferred I/O size (the database's chunk size).
    pub blksize: i64,
    /// 512-byte blocks the data occupies.
    pub blocks: i64,
}

impl Metadata {
    pub(crate) fn from_pb(s: Option<pb::Stat>) -> Metadata {
        let s = s.unwrap_or_default();
        Metadata {
            ino: s.ino,
            mode: s.mode,
            nlink: s.nlink,
            uid: s.uid,
            gid: s.gid,
            size: s.size.max(0) as u64,
            rdev: s.rdev,
            atime: from_ns(s.atime_ns),
            mtime: from_ns(s.mtime_ns),
            ctime: from_ns(s.ctime_ns),
            blksize: s.blksize,
            blocks: s.blocks,
        }
    }

    pub fn file_type(&self) -> FileType {
        FileType::from_mode(self.mode)
    }

    pub fn is_file(&self) -> bool {
        self.file_type() == FileType::File
    }

    pub fn is_dir(&self) -> bool {
        self.file_type() == FileType::Dir
    }

    pub fn is_symlink(&self) -> bool {
        self.file_type() == FileType::Symlink
    }

    /// Size in bytes.
    pub fn len(&self) -> u64 {
        self.size
    }

    pub fn is_empty(&self) -> bool {
        self.size == 0
    }

    /// The permission bits (mode & 0o7777).
    pub fn permissions(&self) -> u32 {
        self.mode & 0o7777
    }
}

/// One entry of [`Fs::readdir_plus`] or [`Fs::walk`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DirEntry {
    pub name: String,
    pub metadata: Metadata,
}

impl DirEntry {
    pub(crate) fn from_pb(e: pb::DirEntry) -> DirEntry {
        DirEntry { name: e.name, metadata: Metadata::from_pb(e.stat) }
    }
}

/// Usage of the filesystem ([`Fs::statfs`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Statfs {
    pub inodes: i64,
    pub bytes_used: i64,
    pub block_size: i64,
    pub blocks: i64,
    pub blocks_free: i64,
    pub files_free: i64,
    pub name_max: i64,
}

impl Statfs {
    pub(crate) fn from_pb(r: pb::StatfsResponse) -> Statfs {
        Statfs {
            inodes: r.inodes,
            bytes_used: r.bytes_used,
            block_size: r.block_size,
            blocks: r.blocks,
            blocks_free: r.blocks_free,
            files_free: r.files_free,
            name_max: r.name_max,
        }
    }
}

/// Options of [`Fs::write_file_with`].
#[derive(Debug, Clone, Default)]
pub struct WriteOptions {
    /// Permission bits of a new file; 0 means 0644.
    pub mode: u32,
    /// Create missing parent directories.
    pub create_parents: bool,
    /// Append instead of replacing.
    pub append: bool,
    /// Fail with EEXIST if the file exists.
    pub exclusive: bool,
}

/// Options of [`Fs::remove`].
#[derive(Debug, Clone, Copy, Default)]
pub struct RemoveOptions {
    /// Remove directories with their content.
    pub recursive: bool,
    /// Succeed when the path does not exist.
    pub force: bool,
}

/// How to open a file, as `std::fs::OpenOptions`.
#[derive(Debug, Clone, Default)]
pub struct OpenOptions {
    read: bool,
    write: bool,
    append: bool,
    create: bool,
    create_new: bool,
    truncate: bool,
    no_follow: bool,
    mode: u32,
}

impl OpenOptions {
    pub fn new() -> Self {
        Self::default()
    }
    pub fn read(&mut self, v: bool) -> &mut Self {
        self.read = v;
        self
    }
    pub fn write(&mut self, v: bool) -> &mut Self {
        self.write = v;
        self
    }
    /// Writes go to the end of the file (implies write).
    pub fn append(&mut self, v: bool) -> &mut Self {
        self.append = v;
        self
    }
    pub fn create(&mut self, v: bool) -> &mut Self {
        self.create = v;
        self
    }
    /// Create, failing with EEXIST if the file exists.
    pub fn create_new(&mut self, v: bool) -> &mut Self {
        self.create_new = v;
        self
    }
    pub fn truncate(&mut self, v: bool) -> &mut Self {
        self.truncate = v;
        self
    }
    /// Fail with ELOOP if the path is a symlink.
    pub fn no_follow(&mut self, v: bool) -> &mut Self {
        self.no_follow = v;
        self
    }
    /// Permission bits of a created file (default 0644).
    pub fn mode(&mut self, mode: u32) -> &mut Self {
        self.mode = mode;
        self
    }

    #[cfg(feature = "tokio")]
    pub(crate) fn is_append(&self) -> bool {
        self.append
    }

    /// The open(2) flags (Linux values, as the engine takes them).
    pub(crate) fn to_pb(&self, path: &str) -> pb::OpenRequest {
        let write = self.write || self.append;
        let mut flags = match (self.read, write) {
            (true, true) => 2,
            (false, true) => 1,
            _ => 0,
        };
        if self.create || self.create_new {
            flags |= 0x40;
        }
        if self.create_new {
            flags |= 0x80;
        }
        if self.truncate {
            flags |= 0x200;
        }
        if self.append {
            flags |= 0x400;
        }
        if self.no_follow {
            flags |= 0x20000;
        }
        pb::OpenRequest { path: path.into(), flags, mode: self.mode }
    }
}

/// An open file: positional reads and writes ([`File::pread`],
/// [`File::pwrite`]) and `Read`/`Write`/`Seek` at a cursor kept here. The
/// handle stays valid after the file is unlinked; it is closed on drop.
pub struct File {
    c: Arc<Clients>,
    handle: u64,
    pos: u64,
    append: bool,
    path: String,
    open: bool,
}

impl File {
    /// The path the file was opened with.
    pub fn path(&self) -> &str {
        &self.path
    }

    /// Reads up to `len` bytes at `offset` (fewer at end of file).
    pub fn pread(&self, offset: u64, len: usize) -> io::Result<Vec<u8>> {
        Ok(self.c.fs.pread(&pb::PreadRequest { handle: self.handle, offset: offset as i64, size: len as i64 })?.data)
    }

    /// Writes `data` at `offset`; returns the bytes written.
    pub fn pwrite(&self, offset: u64, data: &[u8]) -> io::Result<usize> {
        let r =
            self.c.fs.pwrite(&pb::PwriteRequest { handle: self.handle, offset: offset as i64, data: data.to_vec() })?;
        Ok(r.written as usize)
    }

    /// Makes the file's data durable.
    pub fn fsync(&self) -> io::Result<()> {
        self.c.fs.fsync(&pb::FsyncRequest { handle: self.handle }).map(|_| ())
    }

    /// The file's attributes.
    pub fn metadata(&self) -> io::Result<Metadata> {
        Ok(Metadata::from_pb(self.c.fs.fstat(&pb::FstatRequest { handle: self.handle })?.stat))
    }

    /// Cuts or extends the file to `size` bytes.
    pub fn set_len(&self, size: u64) -> io::Result<()> {
        self.c.fs.ftruncate(&pb::FtruncateRequest { handle: self.handle, size: size as i64 }).map(|_| ())
    }

    /// Closes the handle, reporting a failure that drop would ignore.
    pub fn close(mut self) -> io::Result<()> {
        self.open = false;
        self.c.fs.close(&pb::CloseRequest { handle: self.handle }).map(|_| ())
    }
}

impl Read for File {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        if buf.is_empty() {
            return Ok(0);
        }
        let data = self.pread(self.pos, buf.len())?;
        buf[..data.len()].copy_from_slice(&data);
        self.pos += data.len() as u64;
        Ok(data.len())
    }
}

impl Write for File {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        if buf.is_empty() {
            return Ok(0);
        }
        if self.append {
            self.pos = self.metadata()?.size;
        }
        let n = self.pwrite(self.pos, buf)?;
        self.pos += n as u64;
        Ok(n)
    }

    /// Writes reach the engine at once; nothing is buffered here.
    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

impl Seek for File {
    fn seek(&mut self, to: SeekFrom) -> io::Result<u64> {
        let base = match to {
            SeekFrom::Start(n) => {
                self.pos = n;
                return Ok(n);
            }
            SeekFrom::Current(d) => (self.pos as i128, d),
            SeekFrom::End(d) => (self.metadata()?.size as i128, d),
        };
        let p = base.0 + base.1 as i128;
        if p < 0 {
            return Err(io::Error::new(io::ErrorKind::InvalidInput, "seek before the start of the file"));
        }
        self.pos = p as u64;
        Ok(self.pos)
    }
}

impl Drop for File {
    fn drop(&mut self) {
        if self.open {
            let _ = self.c.fs.close(&pb::CloseRequest { handle: self.handle });
        }
    }
}

pub(crate) fn from_ns(ns: i64) -> SystemTime {
    if ns >= 0 {
        UNIX_EPOCH + Duration::from_nanos(ns as u64)
    } else {
        UNIX_EPOCH - Duration::from_nanos(ns.unsigned_abs())
    }
}

pub(crate) fn to_ns(t: SystemTime) -> i64 {
    match t.duration_since(UNIX_EPOCH) {
        Ok(d) => d.as_nanos() as i64,
        Err(e) => -(e.duration().as_nanos() as i64),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn open_flags() {
        assert_eq!(OpenOptions::new().read(true).to_pb("/a").flags, 0);
        assert_eq!(OpenOptions::new().write(true).create(true).truncate(true).to_pb("/a").flags, 0x241);
        assert_eq!(OpenOptions::new().read(true).write(true).create_new(true).to_pb("/a").flags, 0xc2);
        assert_eq!(OpenOptions::new().append(true).to_pb("/a").flags, 0x401);
    }

    #[test]
    fn times() {
        for ns in [0i64, 1, 1_700_000_000_123_456_789, -5_000_000_001] {
            assert_eq!(to_ns(from_ns(ns)), ns);
        }
        assert_eq!(FileType::from_mode(0o100644), FileType::File);
        assert_eq!(FileType::from_mode(0o040755), FileType::Dir);
        assert_eq!(FileType::from_mode(0o120777), FileType::Symlink);
    }
}

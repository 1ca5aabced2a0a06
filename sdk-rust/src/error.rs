//! The engine's errors as `std::io::Error`.
//!
//! Every failure of the engine is an `agentfs.v1.Error` (spec/PROTOCOL.md).
//! This crate returns it as an [`io::Error`] whose [`io::ErrorKind`] is the
//! one the standard library gives the same errno on Linux, and whose inner
//! error is an [`Error`] carrying the errno, the POSIX code, the operation
//! and the paths (so the message names the path, which a bare
//! `io::Error::from_raw_os_error` cannot). [`ErrorExt`] reads them back;
//! [`Error::os_error`] is the bare errno error for code that wants it.

use std::fmt;
use std::io;

use crate::pb;

/// A failure reported by the engine: the inner error of the `io::Error`s
/// this crate returns.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Error {
    /// POSIX name such as `"ENOENT"`; empty when not a filesystem error.
    pub code: String,
    /// Linux errno (2 for ENOENT); 0 when not a filesystem error.
    pub errno: i32,
    /// The operation as node:fs names it: `"stat"`, `"open"`, `"mkdir"`...
    pub syscall: String,
    /// The path the operation was given.
    pub path: String,
    /// The second path of rename, link, symlink and copy.
    pub dest: String,
    /// The engine's message.
    pub message: String,
    /// `agentfs.v1.ErrorKind` of a non-filesystem failure.
    pub kind: pb::ErrorKind,
}

impl Error {
    /// The errno as a bare OS error (`raw_os_error()` is the errno), or
    /// `None` for a failure without errno.
    pub fn os_error(&self) -> Option<io::Error> {
        (self.errno != 0).then(|| io::Error::from_raw_os_error(self.errno))
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.code.is_empty() {
            return f.write_str(if self.message.is_empty() { "agentfs engine error" } else { &self.message });
        }
        // Like node:fs: "ENOENT: no such file or directory, stat '/x'".
        write!(f, "{}: {}", self.code, describe(&self.code, &self.message))?;
        if !self.syscall.is_empty() {
            write!(f, ", {}", self.syscall)?;
        }
        if !self.path.is_empty() {
            write!(f, " '{}'", self.path)?;
        }
        if !self.dest.is_empty() {
            write!(f, " -> '{}'", self.dest)?;
        }
        Ok(())
    }
}

impl std::error::Error for Error {}

/// Reads the engine's details back from an `io::Error` of this crate.
pub trait ErrorExt {
    /// The Linux errno of a filesystem error.
    fn errno(&self) -> Option<i32>;
    /// The POSIX code of a filesystem error, e.g. `"ENOENT"`.
    fn code(&self) -> Option<&str>;
    /// The engine's error, when the failure came from the engine.
    fn agentfs_error(&self) -> Option<&Error>;
}

impl ErrorExt for io::Error {
    fn errno(&self) -> Option<i32> {
        match self.agentfs_error() {
            Some(e) if e.errno != 0 => Some(e.errno),
            Some(_) => None,
            None => self.raw_os_error(),
        }
    }

    fn code(&self) -> Option<&str> {
        self.agentfs_error().map(|e| e.code.as_str()).filter(|c| !c.is_empty())
    }

    fn agentfs_error(&self) -> Option<&Error> {
        self.get_ref().and_then(|e| e.downcast_ref::<Error>().or_else(|| e.downcast_ref::<Posix>().map(|p| &p.0)))
    }
}

/// A POSIX error raised by this crate itself (the agent tools' EINVAL):
/// its message says what to do, so it is shown instead of the code's
/// generic wording.
#[derive(Debug)]
struct Posix(Error);

impl fmt::Display for Posix {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.0.code, self.0.message)
    }
}

impl std::error::Error for Posix {}

/// An `io::Error` with POSIX `code` (Linux `errno`) and `message`, read
/// back by [`ErrorExt`] like the engine's errors.
pub(crate) fn posix(code: &str, errno: i32, message: String) -> io::Error {
    io::Error::new(
        errno_kind(code, errno),
        Posix(Error {
            code: code.into(),
            errno,
            syscall: String::new(),
            path: String::new(),
            dest: String::new(),
            message,
            kind: pb::ErrorKind::Errno,
        }),
    )
}

/// Converts the engine's error into an `io::Error`.
pub(crate) fn from_pb(e: pb::Error) -> io::Error {
    if e.syscall == "policy" && e.errno != 0 {
        // A refused sandbox policy: the message names the entry.
        let message = e.message.strip_prefix(&format!("{}: ", e.code)).unwrap_or(&e.message).to_string();
        return posix(&e.code, e.errno, message);
    }
    let kind = pb::ErrorKind::try_from(e.kind).unwrap_or(pb::ErrorKind::Unspecified);
    let io_kind = if e.errno != 0 || !e.code.is_empty() { errno_kind(&e.code, e.errno) } else { class_kind(kind) };
    io::Error::new(
        io_kind,
        Error {
            code: e.code,
            errno: e.errno,
            syscall: e.syscall,
            path: e.path,
            dest: e.dest,
            message: e.message,
            kind,
        },
    )
}

/// An error of the given class without errno (transport failures, bad
/// responses).
pub(crate) fn other(kind: pb::ErrorKind, message: impl Into<String>) -> io::Error {
    io::Error::new(
        class_kind(kind),
        Error {
            code: String::new(),
            errno: 0,
            syscall: String::new(),
            path: String::new(),
            dest: String::new(),
            message: message.into(),
            kind,
        },
    )
}

/// The `io::ErrorKind` of a POSIX error. The table is by name so that it
/// holds on every host (errno numbers differ outside Linux); it gives what
/// the standard library gives for the same errno on Linux. Codes not in it
/// fall back to the standard library's own decoding on Linux.
pub fn errno_kind(code: &str, errno: i32) -> io::ErrorKind {
    use io::ErrorKind as K;
    match code {
        "ENOENT" => K::NotFound,
        "EEXIST" => K::AlreadyExists,
        "EACCES" | "EPERM" => K::PermissionDenied,
        "ENOTDIR" => K::NotADirectory,
        "EISDIR" => K::IsADirectory,
        "ENOTEMPTY" => K::DirectoryNotEmpty,
        "EROFS" => K::ReadOnlyFilesystem,
        "EINVAL" => K::InvalidInput,
        "ENAMETOOLONG" => K::InvalidFilename,
        "EXDEV" => K::CrossesDevices,
        "ENOSPC" => K::StorageFull,
        "EFBIG" => K::FileTooLarge,
        "EBUSY" => K::ResourceBusy,
        "ETXTBSY" => K::ExecutableFileBusy,
        "EMLINK" => K::TooManyLinks,
        "ESPIPE" => K::NotSeekable,
        "EDQUOT" => K::QuotaExceeded,
        "ENOSYS" | "ENOTSUP" | "EOPNOTSUPP" => K::Unsupported,
        "EINTR" => K::Interrupted,
        "EAGAIN" => K::WouldBlock,
        "ETIMEDOUT" => K::TimedOut,
        "EPIPE" => K::BrokenPipe,
        "ENOMEM" => K::OutOfMemory,
        "E2BIG" => K::ArgumentListTooLong,
        "EDEADLK" => K::Deadlock,
        _ if cfg!(target_os = "linux") && errno > 0 => io::Error::from_raw_os_error(errno).kind(),
        _ => K::Other,
    }
}

/// The `io::ErrorKind` of a failure without errno.
fn class_kind(kind: pb::ErrorKind) -> io::ErrorKind {
    use io::ErrorKind as K;
    use pb::ErrorKind as E;
    match kind {
        E::InvalidArgument => K::InvalidInput,
        E::NotFound => K::NotFound,
        E::AlreadyExists => K::AlreadyExists,
        E::PermissionDenied => K::PermissionDenied,
        E::Canceled => K::Interrupted,
        E::Unimplemented => K::Unsupported,
        E::ResourceExhausted => K::OutOfMemory,
        E::Unavailable => K::BrokenPipe,
        E::FailedPrecondition | E::Internal | E::Errno | E::Unspecified => K::Other,
    }
}

/// Short text of common codes (node:fs wording); the engine's message for
/// the rest.
fn describe<'a>(code: &str, message: &'a str) -> &'a str {
    match code {
        "ENOENT" => "no such file or directory",
        "EEXIST" => "file already exists",
        "EACCES" | "EPERM" => "permission denied",
        "ENOTDIR" => "not a directory",
        "EISDIR" => "illegal operation on a directory",
        "ENOTEMPTY" => "directory not empty",
        "ELOOP" => "too many symbolic links encountered",
        "EINVAL" => "invalid argument",
        "EBADF" => "bad file descriptor",
        "EROFS" => "read-only file system",
        "ENAMETOOLONG" => "name too long",
        "EXDEV" => "cross-device link not permitted",
        "ENODATA" => "no data available",
        _ => message,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pb_err(code: &str, errno: i32) -> pb::Error {
        pb::Error {
            code: code.into(),
            errno,
            syscall: "stat".into(),
            path: "/x".into(),
            kind: pb::ErrorKind::Errno as i32,
            ..Default::default()
        }
    }

    #[test]
    fn errno_to_kind() {
        use io::ErrorKind as K;
        let cases = [
            ("ENOENT", 2, K::NotFound),
            ("EPERM", 1, K::PermissionDenied),
            ("EACCES", 13, K::PermissionDenied),
            ("EEXIST", 17, K::AlreadyExists),
            ("ENOTDIR", 20, K::NotADirectory),
            ("EISDIR", 21, K::IsADirectory),
            ("EINVAL", 22, K::InvalidInput),
            ("ENOSPC", 28, K::StorageFull),
            ("EROFS", 30, K::ReadOnlyFilesystem),
            ("ENAMETOOLONG", 36, K::InvalidFilename),
            ("ENOTEMPTY", 39, K::DirectoryNotEmpty),
            ("EXDEV", 18, K::CrossesDevices),
            ("EFBIG", 27, K::FileTooLarge),
            ("EBUSY", 16, K::ResourceBusy),
            ("EMLINK", 31, K::TooManyLinks),
            ("ENOSYS", 38, K::Unsupported),
        ];
        for (code, errno, kind) in cases {
            let e = from_pb(pb_err(code, errno));
            assert_eq!(e.kind(), kind, "{code}");
            assert_eq!(e.errno(), Some(errno), "{code}");
            assert_eq!(e.code(), Some(code));
            // The table agrees with the standard library's decoding of the
            // same Linux errno.
            #[cfg(target_os = "linux")]
            assert_eq!(io::Error::from_raw_os_error(errno).kind(), kind, "{code}");
            assert_eq!(e.agentfs_error().unwrap().os_error().unwrap().raw_os_error(), Some(errno));
        }
        // ELOOP and EBADF have no stable ErrorKind of their own: what std
        // says on Linux.
        #[cfg(target_os = "linux")]
        for (code, errno) in [("ELOOP", 40), ("EBADF", 9), ("ENODATA", 61)] {
            assert_eq!(from_pb(pb_err(code, errno)).kind(), io::Error::from_raw_os_error(errno).kind());
        }
    }

    #[test]
    fn message_names_the_path() {
        let e = from_pb(pb_err("ENOENT", 2));
        assert_eq!(e.to_string(), "ENOENT: no such file or directory, stat '/x'");
        let mut r = pb_err("EXDEV", 18);
        r.syscall = "rename".into();
        r.dest = "/y".into();
        assert_eq!(from_pb(r).to_string(), "EXDEV: cross-device link not permitted, rename '/x' -> '/y'");
    }

    #[test]
    fn classes_without_errno() {
        let e = from_pb(pb::Error {
            message: "no agent x".into(),
            kind: pb::ErrorKind::NotFound as i32,
            ..Default::default()
        });
        assert_eq!(e.kind(), io::ErrorKind::NotFound);
        assert_eq!(e.errno(), None);
        assert_eq!(e.code(), None);
        assert_eq!(e.to_string(), "no agent x");
        assert_eq!(other(pb::ErrorKind::Unavailable, "gone").kind(), io::ErrorKind::BrokenPipe);
        assert_eq!(other(pb::ErrorKind::PermissionDenied, "token").kind(), io::ErrorKind::PermissionDenied);
    }
}

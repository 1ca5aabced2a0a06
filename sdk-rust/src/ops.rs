//! The operations of the idiomatic API, written once and expanded twice:
//! as blocking methods (crate::Fs, Kv, Tools) and as async ones
//! (crate::aio). Each entry names the generated client method (blocking and
//! async), the request it sends, and how the response becomes the result.
//! Operations that do not fit (generic serde values, file handles) are
//! written by hand in both places.

/// Expands a list of operations into blocking methods.
macro_rules! gen_blocking {
    ($( $(#[$m:meta])* fn $name:ident ( $($arg:ident : $ty:ty),* ) -> $out:ty
        = $svc:ident . $call:ident / $acall:ident ( $req:expr ) | $r:ident | $body:expr ; )*) => {
        $(
            $(#[$m])*
            pub fn $name(&self, $($arg: $ty),*) -> std::io::Result<$out> {
                #[allow(unused_variables)]
                let $r = self.c.$svc.$call(&$req)?;
                $body
            }
        )*
    };
}

/// Expands a list of operations into async methods.
#[cfg(feature = "tokio")]
macro_rules! gen_async {
    ($( $(#[$m:meta])* fn $name:ident ( $($arg:ident : $ty:ty),* ) -> $out:ty
        = $svc:ident . $call:ident / $acall:ident ( $req:expr ) | $r:ident | $body:expr ; )*) => {
        $(
            $(#[$m])*
            pub async fn $name(&self, $($arg: $ty),*) -> std::io::Result<$out> {
                #[allow(unused_variables)]
                let $r = self.c.$svc.$acall(&$req).await?;
                $body
            }
        )*
    };
}

/// The filesystem operations of [`crate::Fs`] and [`crate::aio::Fs`].
macro_rules! fs_ops {
    ($gen:ident) => {
        $gen! {
            /// Attributes of `path`, following symlinks.
            fn stat(path: impl AsRef<str>) -> Metadata
                = fs.stat/stat_async(pb::StatRequest { path: path.as_ref().into() })
                |r| Ok(Metadata::from_pb(r.stat));
            /// Attributes of `path` itself (a symlink is not followed).
            fn lstat(path: impl AsRef<str>) -> Metadata
                = fs.lstat/lstat_async(pb::LstatRequest { path: path.as_ref().into() })
                |r| Ok(Metadata::from_pb(r.stat));
            /// Whether `path` exists and allows `mode` (R_OK=4, W_OK=2,
            /// X_OK=1; 0 checks existence): fails with ENOENT or EACCES.
            fn access(path: impl AsRef<str>, mode: u32) -> ()
                = fs.access/access_async(pb::AccessRequest { path: path.as_ref().into(), mode })
                |r| Ok(());
            /// The whole content of a file.
            fn read_file(path: impl AsRef<str>) -> Vec<u8>
                = fs.read_file/read_file_async(pb::ReadFileRequest { path: path.as_ref().into() })
                |r| Ok(r.data);
            /// The content of a file as UTF-8 text.
            fn read_to_string(path: impl AsRef<str>) -> String
                = fs.read_file/read_file_async(pb::ReadFileRequest { path: path.as_ref().into() })
                |r| String::from_utf8(r.data).map_err(|e| std::io::Error::new(std::io::ErrorKind::InvalidData, e));
            /// Replaces (or creates, 0644) a file with `data` in one transaction.
            fn write_file(path: impl AsRef<str>, data: impl AsRef<[u8]>) -> ()
                = fs.write_file/write_file_async(pb::WriteFileRequest {
                    path: path.as_ref().into(), data: data.as_ref().to_vec(), ..Default::default() })
                |r| Ok(());
            /// Appends `data` to a file (created if missing).
            fn append_file(path: impl AsRef<str>, data: impl AsRef<[u8]>) -> ()
                = fs.write_file/write_file_async(pb::WriteFileRequest {
                    path: path.as_ref().into(), data: data.as_ref().to_vec(), append: true, ..Default::default() })
                |r| Ok(());
            /// Writes a file with options (mode, parents, append, exclusive).
            fn write_file_with(path: impl AsRef<str>, data: impl AsRef<[u8]>, opts: &WriteOptions) -> ()
                = fs.write_file/write_file_async(pb::WriteFileRequest {
                    path: path.as_ref().into(), data: data.as_ref().to_vec(), mode: opts.mode,
                    create_parents: opts.create_parents, append: opts.append, exclusive: opts.exclusive })
                |r| Ok(());
            /// The names in a directory, sorted (byte order), without "." and "..".
            fn readdir(path: impl AsRef<str>) -> Vec<String>
                = fs.readdir/readdir_async(pb::ReaddirRequest { path: path.as_ref().into() })
                |r| Ok(r.names);
            /// The entries of a directory with their attributes, in one round trip.
            fn readdir_plus(path: impl AsRef<str>) -> Vec<DirEntry>
                = fs.readdir_plus/readdir_plus_async(pb::ReaddirPlusRequest { path: path.as_ref().into() })
                |r| Ok(r.entries.into_iter().map(DirEntry::from_pb).collect());
            /// Every path under (and including) `path` with lstat attributes,
            /// parents first; `name` is the full path.
            fn walk(path: impl AsRef<str>) -> Vec<DirEntry>
                = fs.walk/walk_async(pb::WalkRequest { path: path.as_ref().into() })
                |r| Ok(r.entries.into_iter().map(DirEntry::from_pb).collect());
            /// Creates a directory (0755); fails with EEXIST if it exists.
            fn mkdir(path: impl AsRef<str>) -> ()
                = fs.mkdir/mkdir_async(pb::MkdirRequest { path: path.as_ref().into(), ..Default::default() })
                |r| Ok(());
            /// Creates a directory with the given permission bits.
            fn mkdir_mode(path: impl AsRef<str>, mode: u32) -> ()
                = fs.mkdir/mkdir_async(pb::MkdirRequest { path: path.as_ref().into(), mode, recursive: false })
                |r| Ok(());
            /// Creates a directory and its missing parents; succeeds if it exists.
            fn mkdir_all(path: impl AsRef<str>) -> ()
                = fs.mkdir/mkdir_async(pb::MkdirRequest { path: path.as_ref().into(), mode: 0, recursive: true })
                |r| Ok(());
            /// Removes an empty directory.
            fn rmdir(path: impl AsRef<str>) -> ()
                = fs.rmdir/rmdir_async(pb::RmdirRequest { path: path.as_ref().into() })
                |r| Ok(());
            /// Removes a file, symlink or other non-directory.
            fn unlink(path: impl AsRef<str>) -> ()
                = fs.unlink/unlink_async(pb::UnlinkRequest { path: path.as_ref().into() })
                |r| Ok(());
            /// `rm`: removes a file or directory; `recursive` for non-empty
            /// directories, `force` to succeed when `path` does not exist.
            fn remove(path: impl AsRef<str>, opts: RemoveOptions) -> ()
                = fs.remove/remove_async(pb::RemoveRequest {
                    path: path.as_ref().into(), recursive: opts.recursive, force: opts.force })
                |r| Ok(());
            /// Renames `from` to `to`, replacing a file at `to`.
            fn rename(from: impl AsRef<str>, to: impl AsRef<str>) -> ()
                = fs.rename/rename_async(pb::RenameRequest {
                    old_path: from.as_ref().into(), new_path: to.as_ref().into(), flags: 0 })
                |r| Ok(());
            /// Copies the content of file `from` to `to` (replaced if it exists).
            fn copy_file(from: impl AsRef<str>, to: impl AsRef<str>) -> ()
                = fs.copy_file/copy_file_async(pb::CopyFileRequest { src: from.as_ref().into(), dst: to.as_ref().into() })
                |r| Ok(());
            /// Creates a symlink at `path` pointing to `target`.
            fn symlink(target: impl AsRef<str>, path: impl AsRef<str>) -> ()
                = fs.symlink/symlink_async(pb::SymlinkRequest { target: target.as_ref().into(), link_path: path.as_ref().into() })
                |r| Ok(());
            /// The target of a symlink.
            fn readlink(path: impl AsRef<str>) -> String
                = fs.readlink/readlink_async(pb::ReadlinkRequest { path: path.as_ref().into() })
                |r| Ok(r.target);
            /// Creates a hard link `to` of file `from`.
            fn link(from: impl AsRef<str>, to: impl AsRef<str>) -> ()
                = fs.link/link_async(pb::LinkRequest { old_path: from.as_ref().into(), new_path: to.as_ref().into() })
                |r| Ok(());
            /// Sets the permission bits.
            fn chmod(path: impl AsRef<str>, mode: u32) -> ()
                = fs.chmod/chmod_async(pb::ChmodRequest { path: path.as_ref().into(), mode })
                |r| Ok(());
            /// Sets owner and group; `None` leaves one unchanged.
            fn chown(path: impl AsRef<str>, uid: Option<u32>, gid: Option<u32>) -> ()
                = fs.chown/chown_async(pb::ChownRequest {
                    path: path.as_ref().into(), uid: uid.map_or(-1, i64::from), gid: gid.map_or(-1, i64::from), no_follow: false })
                |r| Ok(());
            /// Sets access and modification times; `None` leaves one unchanged.
            fn utimes(path: impl AsRef<str>, atime: Option<std::time::SystemTime>, mtime: Option<std::time::SystemTime>) -> ()
                = fs.utimes/utimes_async(pb::UtimesRequest {
                    path: path.as_ref().into(), atime_ns: atime.map(to_ns), mtime_ns: mtime.map(to_ns), no_follow: false })
                |r| Ok(());
            /// Cuts or extends (with zeros) a file to `size` bytes.
            fn truncate(path: impl AsRef<str>, size: u64) -> ()
                = fs.truncate/truncate_async(pb::TruncateRequest { path: path.as_ref().into(), size: size as i64 })
                |r| Ok(());
            /// Usage of the whole filesystem.
            fn statfs() -> Statfs
                = fs.statfs/statfs_async(pb::StatfsRequest {})
                |r| Ok(Statfs::from_pb(r));
        }
    };
}

/// The key-value operations without generic values.
macro_rules! kv_ops {
    ($gen:ident) => {
        $gen! {
            /// The entries whose key starts with `prefix`, in key order.
            fn list(prefix: impl AsRef<str>) -> Vec<KvEntry>
                = kv.kv_list/kv_list_async(pb::KvListRequest { prefix: prefix.as_ref().into(), limit: 0 })
                |r| r.entries.into_iter().map(KvEntry::from_pb).collect();
            /// Removes a key; false when it did not exist.
            fn delete(key: impl AsRef<str>) -> bool
                = kv.kv_delete/kv_delete_async(pb::KvDeleteRequest { key: key.as_ref().into() })
                |r| Ok(r.deleted);
        }
    };
}

/// The tool-call log operations.
macro_rules! tools_ops {
    ($gen:ident) => {
        $gen! {
            /// Records a pending call and returns its id.
            fn start(name: impl AsRef<str>, parameters: Option<&serde_json::Value>) -> i64
                = tools.tool_start/tool_start_async(pb::ToolStartRequest {
                    name: name.as_ref().into(), parameters_json: parameters.map(|v| v.to_string()) })
                |r| Ok(r.id);
            /// Marks a pending call successful.
            fn success(id: i64, result: Option<&serde_json::Value>) -> ()
                = tools.tool_success/tool_success_async(pb::ToolSuccessRequest { id, result_json: result.map(|v| v.to_string()) })
                |r| Ok(());
            /// Marks a pending call failed.
            fn error(id: i64, message: impl AsRef<str>) -> ()
                = tools.tool_fail/tool_fail_async(pb::ToolFailRequest { id, error: message.as_ref().into() })
                |r| Ok(());
            /// Records a finished call in one step and returns its id.
            fn record(call: &ToolRecord) -> i64
                = tools.tool_record/tool_record_async(call.to_pb())
                |r| Ok(r.id);
            /// One call by id.
            fn get(id: i64) -> Option<ToolCall>
                = tools.tool_get/tool_get_async(pb::ToolGetRequest { id })
                |r| if r.found { r.call.map(ToolCall::from_pb).transpose() } else { Ok(None) };
            /// Calls matching `query`, newest first unless ascending.
            fn list(query: &ToolQuery) -> Vec<ToolCall>
                = tools.tool_list/tool_list_async(query.to_pb())
                |r| r.calls.into_iter().map(ToolCall::from_pb).collect();
            /// Per-name statistics.
            fn stats() -> Vec<ToolStats>
                = tools.tool_stats/tool_stats_async(pb::ToolStatsRequest {})
                |r| Ok(r.stats.into_iter().map(ToolStats::from_pb).collect());
        }
    };
}

// Package overlay is the copy-on-write view of a host directory: a host
// directory (the base) below, an agent database (the delta) above. It
// holds what is specific to overlays as a whole: Diff (what the delta
// changed) and Commit (apply it to the host directory). The filesystem
// semantics themselves live in core/vfs, so every way in (the FUSE mount,
// the NFS server, the in-process shell, the SDK) sees the overlay with no
// special casing.
//
// # Contract for callers (agentfs run, agentfs init --base)
//
// Create the delta database over a host directory:
//
//	a, err := core.Open(ctx, dbPath, core.Options{Create: true, Base: hostDir})
//
// (or Create(ctx, dbPath, hostDir) below). Reopening it later needs no
// Base: core.Open recognises an overlay database (fs_overlay_config
// base_path) and a.FS is the overlay. Mount it exactly like any agent:
//
//	srv, err := mount.Mount(dir, a.FS, mount.Options{...})
//
// Reads fall through to hostDir; every write goes to the database; the
// host directory is never written (until Commit). a.FS.Base() returns the
// base directory ("" for a plain agent). The base should not change while
// the overlay is in use: a file whose base changed after its copy-up
// reads ESTALE where its bytes would come from the base, and Commit
// refuses it unless forced. A read-only open (core.Options{ReadOnly:
// true}) shows the delta layer alone.
//
// # Semantics
//
//   - Lookups fall through to the base unless the delta has the name or a
//     whiteout hides it; readdir merges both (the base directory is read
//     once, then the delta answers alone).
//   - The first lookup of a base entry copies its metadata up: a delta
//     inode with the base attributes and, as a rule, the base inode
//     number (fs_origin maps delta_ino to base_ino). stat in the overlay
//     thus reports the host's st_ino, and it never changes afterwards,
//     whatever is written. Inodes created in the delta are numbered from
//     vfs.DeltaInoBase (2^40) up.
//   - Data copy-up is per chunk: a write stores only the chunks it
//     touches; the other bytes keep coming from the base file.
//   - Removing a base entry records a whiteout and what the entry was
//     (for Commit's conflict check); removing a base tree leaves one
//     whiteout, for its root.
//   - Two base names of one inode (a hard link) are one delta inode.
//     Extended attributes of the base are not carried up.
//
// The on-disk format (fs_overlay_config, fs_whiteout, fs_origin, and this
// project's agentfs_overlay_inode) is in spec/SPEC.md, "Overlay".
package overlay

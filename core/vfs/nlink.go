package vfs

import (
	"github.com/agentfs-go/agentfs/core/schema"
	"github.com/agentfs-go/agentfs/core/store"
)

// Link counts of directories.
//
// The AgentFS format stores 1 in fs_inode.nlink for every directory (what
// Turso's AgentFS writes and reads; it must stay so). POSIX tools and test
// suites expect what a disk filesystem reports: 2 (the directory's entry in
// its parent and its own ".") plus one for the ".." of each subdirectory;
// find(1) even skips looking for subdirectories once it has seen that many.
// So every Stat that leaves the engine (stat, lookup, readdir-plus, fstat,
// and through them the FUSE mount, the NFS server, the API and the shell)
// carries that count, computed here from the entries: an indexed count of
// the directory's children that are directories, kept per directory in the
// caches and updated by mkdir, rmdir and rename. The cached inode keeps
// the stored 1.
//
// An overlay's delta layer does not list its base's subdirectories until
// they are copied up, so there a directory keeps the 1 that tools read as
// "unknown" (find then looks at every entry): a count too low would make
// find skip subdirectories.

// dirLinks sets Nlink of the directories among sts to 2 plus their
// subdirectories, counting those not cached in one query per 500.
func (f *FS) dirLinks(c *store.Conn, sts ...*Stat) error {
	if f.ov != nil {
		return nil
	}
	var need []int64
	for _, st := range sts {
		if _, ok := f.subdirs[st.Ino]; st.IsDir() && !ok {
			need = append(need, st.Ino)
		}
	}
	for len(need) > 0 {
		n := min(len(need), 500)
		counts := make(map[int64]int64, n)
		rows, err := c.Query(`SELECT d.parent_ino, count(*) FROM fs_dentry d JOIN fs_inode i ON i.ino = d.ino
			WHERE d.parent_ino IN (SELECT value FROM json_each(?)) AND i.mode & ? = ? GROUP BY d.parent_ino`,
			"["+joinInts(need[:n])+"]", schema.ModeType, schema.ModeDir)
		if err != nil {
			return err
		}
		for rows.Next() {
			var dir, k int64
			if err := rows.Scan(&dir, &k); err != nil {
				rows.Close()
				return err
			}
			counts[dir] = k
		}
		err = rows.Err()
		rows.Close()
		if err != nil {
			return err
		}
		for _, dir := range need[:n] {
			f.subdirs[dir] = counts[dir] // absent: none
		}
		need = need[n:]
	}
	for _, st := range sts {
		if st.IsDir() {
			st.Nlink = uint32(2 + f.subdirs[st.Ino])
		}
	}
	return nil
}

// subdirAdded adds d to the cached count of dir's subdirectories, if it
// is cached.
func (f *FS) subdirAdded(dir, d int64) {
	if n, ok := f.subdirs[dir]; ok {
		f.subdirs[dir] = n + d
	}
}

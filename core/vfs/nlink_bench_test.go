package vfs_test

import (
	"fmt"
	"testing"
)

// BenchmarkDirAttrs is getattr and readdir-plus of a directory of 1,000
// entries (900 files, 100 subdirectories), as a FUSE mount asks for them:
// with the engine's caches warm, and cold (dropped before each call, as
// after another process's commit), where the link counts of directories
// cost a count of their subdirectories.
func BenchmarkDirAttrs(b *testing.B) {
	f := newFS(b)
	must(b, f.Mkdir(ctx, "/big", 0o755))
	for i := range 1000 {
		p := fmt.Sprintf("/big/e%04d", i)
		if i%10 == 0 {
			must(b, f.Mkdir(ctx, p, 0o755))
			writeFile(b, f, p+"/f", "x")
		} else {
			writeFile(b, f, p, "x")
		}
	}
	ino := lstat(b, f, "/big").Ino
	for _, cold := range []bool{false, true} {
		name := "warm"
		if cold {
			name = "cold"
		}
		b.Run("getattr-"+name, func(b *testing.B) {
			for b.Loop() {
				if cold {
					f.Invalidate()
				}
				if _, err := f.StatIno(ctx, ino); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run("readdirplus-"+name, func(b *testing.B) {
			for b.Loop() {
				if cold {
					f.Invalidate()
				}
				if _, err := f.ReaddirPlusIno(ctx, ino); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

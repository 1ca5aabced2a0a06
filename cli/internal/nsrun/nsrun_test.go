//go:build linux

package nsrun

import (
	"strings"
	"syscall"
	"testing"
)

func TestParseMountPoints(t *testing.T) {
	table := `22 1 0:21 / / rw,relatime - ext4 /dev/vda rw
23 22 0:5 / /dev rw,nosuid,noexec - devtmpfs udev rw
24 22 0:22 / /my\040dir rw,nosuid,nodev,noexec,noatime shared:2 - tmpfs tmpfs rw
25 22 0:23 / /sym ro,nosymfollow,relatime - tmpfs tmpfs rw
26 22 0:24 / /my\040dir rw,relatime - tmpfs tmpfs rw
`
	got, err := parseMountPoints(strings.NewReader(table))
	if err != nil {
		t.Fatal(err)
	}
	want := []mountPoint{
		{"/", syscall.MS_RELATIME, false},
		{"/dev", syscall.MS_NOSUID | syscall.MS_NOEXEC | syscall.MS_STRICTATIME, false},
		// Mounted twice: the later mount is the one the path reaches.
		{"/my dir", syscall.MS_RELATIME, false},
		{"/sym", msNosymfollow | syscall.MS_RELATIME, true},
	}
	if len(got) != len(want) {
		t.Fatalf("got %v, want %v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("mount %d: %+v, want %+v", i, got[i], want[i])
		}
	}
}

// The running system's table parses and has /.
func TestMountPoints(t *testing.T) {
	mps, err := mountPoints()
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range mps {
		if m.dir == "/" {
			return
		}
	}
	t.Errorf("no / among the mount points of this system: %v", mps)
}

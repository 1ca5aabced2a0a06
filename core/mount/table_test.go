//go:build linux

package mount

import "testing"

func TestParseMountinfo(t *testing.T) {
	for _, tc := range []struct {
		line string
		ok   bool
		want Info
	}{
		{`36 35 0:40 / /tmp/a\040b rw,nosuid,nodev,relatime shared:1 - fuse.agentfs /data/x\040y.db rw,user_id=0,group_id=0`,
			true, Info{ID: 36, Dir: "/tmp/a b", Source: "/data/x y.db", Options: "rw,user_id=0,group_id=0"}},
		{`37 35 0:41 / /mnt rw - fuse.agentfs /a.db rw`, true, Info{ID: 37, Dir: "/mnt", Source: "/a.db", Options: "rw"}},
		{`22 1 8:1 / / rw,relatime - ext4 /dev/sda1 rw`, false, Info{}},
		{`38 35 0:42 / /other rw - fuse.sshfs host: rw`, false, Info{}},
		{`garbage`, false, Info{}},
	} {
		got, ok := parseMountinfo(tc.line)
		if ok != tc.ok || got != tc.want {
			t.Errorf("parseMountinfo(%q) = %+v, %v; want %+v, %v", tc.line, got, ok, tc.want, tc.ok)
		}
	}
	if got := UnescapeField(`a\134b\011c\`); got != "a\\b\tc\\" {
		t.Errorf("unescape: %q", got)
	}
}

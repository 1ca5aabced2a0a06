package cmd

import (
	"os"
	"os/exec"
	"testing"
)

// asCLIEnv makes this test binary behave as the agentfs binary: "agentfs
// mount" and "agentfs exec" start their FUSE server by re-executing
// os.Executable(), which in tests is this binary.
const asCLIEnv = "AGENTFS_TEST_AS_CLI"

func TestMain(m *testing.M) {
	if os.Getenv(asCLIEnv) == "1" {
		os.Exit(Main(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
	}
	os.Setenv(asCLIEnv, "1") // inherited by the servers the tests start
	os.Exit(m.Run())
}

// canMount skips unless FUSE mounts can be made here.
func canMount(t *testing.T) {
	t.Helper()
	if _, err := os.Stat("/dev/fuse"); err != nil {
		skipFUSE(t, "/dev/fuse is missing (mount tests need FUSE)")
	}
	if os.Geteuid() != 0 {
		if _, err := exec.LookPath("fusermount3"); err != nil {
			skipFUSE(t, "mount tests run as root, or need fusermount3 (Debian fuse3)")
		}
	}
}

// skipFUSE skips a test that needs FUSE, or fails it when
// AGENTFS_REQUIRE_FUSE=1 (CI sets it, so a missing FUSE cannot hide the
// mount tests).
func skipFUSE(t testing.TB, why string) {
	t.Helper()
	if os.Getenv("AGENTFS_REQUIRE_FUSE") == "1" {
		t.Fatalf("FUSE unavailable: %s (AGENTFS_REQUIRE_FUSE=1)", why)
	}
	t.Skip("skipping: " + why + "; set AGENTFS_REQUIRE_FUSE=1 to fail instead")
}

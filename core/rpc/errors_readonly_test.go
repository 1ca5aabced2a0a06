package rpc

import (
	"fmt"
	"syscall"
	"testing"

	v1 "github.com/agentfs-go/agentfs/core/api/agentfs/v1"
	"github.com/agentfs-go/agentfs/core/store"
)

// A write to a database opened read-only is a filesystem error (EROFS)
// with the operation's path, not an engine failure.
func TestToProtoReadOnly(t *testing.T) {
	err := fail(fmt.Errorf("write: %w", store.ErrReadOnly), "open", "/p")
	e := ToProto(err)
	if e.Kind != v1.ErrorKind_ERROR_KIND_ERRNO || e.Code != "EROFS" || e.Errno != int32(syscall.EROFS) || e.Path != "/p" {
		t.Errorf("ToProto = %v, want EROFS on /p", e)
	}
}

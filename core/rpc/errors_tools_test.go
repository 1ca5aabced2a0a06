package rpc

import (
	"fmt"
	"testing"

	v1 "github.com/agentfs-go/agentfs/core/api/agentfs/v1"
	"github.com/agentfs-go/agentfs/core/toolcalls"
)

// Finishing a call twice is the caller's mistake, not an engine failure:
// clients map FAILED_PRECONDITION back to their "already finished" error.
func TestToProtoToolFinished(t *testing.T) {
	err := fmt.Errorf("toolcalls: id 1 is success: %w", toolcalls.ErrFinished)
	if got := ToProto(err).Kind; got != v1.ErrorKind_ERROR_KIND_FAILED_PRECONDITION {
		t.Errorf("kind = %v, want FAILED_PRECONDITION", got)
	}
}

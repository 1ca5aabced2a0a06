package sandbox_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"github.com/agentfs-go/agentfs/core"
	"github.com/agentfs-go/agentfs/core/sandbox"
	"github.com/agentfs-go/agentfs/core/vfs"
)

func ExampleSandbox_Exec() {
	dir, _ := os.MkdirTemp("", "example-")
	defer os.RemoveAll(dir)
	a, err := core.Open(context.Background(), filepath.Join(dir, "agent.db"), core.Options{Create: true})
	if err != nil {
		panic(err)
	}
	defer a.Close()
	a.FS.WriteFile(ctx, "/src/main.go", []byte("package main\n// TODO: tests\n"), vfs.WriteOptions{CreateParents: true})

	sb, _ := sandbox.New(a, sandbox.Options{Limits: sandbox.Hardened})
	res, _ := sb.Exec(context.Background(), "grep -rn TODO /src | cut -d: -f1,2; cat /etc/passwd", sandbox.ExecOptions{})
	fmt.Print(res.Stdout, res.Stderr)
	fmt.Println("exit", res.ExitCode)
	// Output:
	// /src/main.go:2
	// cat: /etc/passwd: No such file or directory
	// exit 1
}

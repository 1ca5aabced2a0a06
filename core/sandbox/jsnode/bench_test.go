package jsnode_test

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/agentfs-go/agentfs/core/sandbox"
	"github.com/agentfs-go/agentfs/core/vfs"
)

// transformScript reads every JSON file of in/, keeps the active items,
// adds a field and writes each to out/, then prints a total.
const transformScript = `
const fs = require("fs");
fs.mkdirSync("out", { recursive: true });
let total = 0;
for (const f of fs.readdirSync("in")) {
  const doc = JSON.parse(fs.readFileSync("in/" + f, "utf8"));
  doc.items = doc.items.filter((i) => i.active).map((i) => ({ ...i, score: i.value * 2 }));
  total += doc.items.length;
  fs.writeFileSync("out/" + f, JSON.stringify(doc));
}
console.log(total);
`

func transformFiles(n int) map[string][]byte {
	files := map[string][]byte{"transform.js": []byte(transformScript)}
	for i := 0; i < n; i++ {
		doc := fmt.Sprintf(`{"id":%d,"items":[{"value":1,"active":true},{"value":2,"active":false},{"value":%d,"active":true}]}`, i, i)
		files[fmt.Sprintf("in/f%04d.json", i)] = []byte(doc)
	}
	return files
}

// BenchmarkNode_EvalSandbox is "node -e 'console.log(1)'" in a fresh
// sandbox shell each time: a new JavaScript runtime per run.
func BenchmarkNode_EvalSandbox(b *testing.B) {
	e := newEnv(b, sandboxOpts())
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		res, err := e.sb.Exec(ctx, `node -e 'console.log(1)'`, sandbox.ExecOptions{})
		if err != nil || res.Stdout != "1\n" {
			b.Fatalf("%v %+v", err, res)
		}
	}
}

// BenchmarkNode_EvalHost is the same with the host's node process.
func BenchmarkNode_EvalHost(b *testing.B) {
	nodeBin, err := exec.LookPath("node")
	if err != nil {
		b.Skip("host node not found")
	}
	for i := 0; i < b.N; i++ {
		out, err := exec.Command(nodeBin, "-e", "console.log(1)").Output()
		if err != nil || string(out) != "1\n" {
			b.Fatalf("%v %q", err, out)
		}
	}
}

// BenchmarkNode_JSONTransform1000Sandbox transforms 1,000 JSON files of
// the agent filesystem.
func BenchmarkNode_JSONTransform1000Sandbox(b *testing.B) {
	e := newEnv(b, sandboxOpts())
	for rel, data := range transformFiles(1000) {
		p := "/t/" + rel
		e.a.FS.MkdirAll(ctx, filepath.Dir(p), 0o755)
		if err := e.a.FS.WriteFile(ctx, p, data, vfs.WriteOptions{}); err != nil {
			b.Fatal(err)
		}
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		res, err := e.sb.Exec(ctx, "node transform.js", sandbox.ExecOptions{Dir: "/t"})
		if err != nil || res.Stdout != "2000\n" {
			b.Fatalf("%v %+v", err, res)
		}
	}
}

// BenchmarkNode_JSONTransform1000Host is the same with the host's node
// over a host directory.
func BenchmarkNode_JSONTransform1000Host(b *testing.B) {
	nodeBin, err := exec.LookPath("node")
	if err != nil {
		b.Skip("host node not found")
	}
	dir := b.TempDir()
	for rel, data := range transformFiles(1000) {
		p := filepath.Join(dir, rel)
		os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.WriteFile(p, data, 0o644); err != nil {
			b.Fatal(err)
		}
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		cmd := exec.Command(nodeBin, "transform.js")
		cmd.Dir = dir
		out, err := cmd.Output()
		if err != nil || string(out) != "2000\n" {
			b.Fatalf("%v %q", err, out)
		}
	}
}

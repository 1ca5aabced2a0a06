// Command gomodpublish publishes the project's Go modules from the working
// tree into a directory laid out as a module proxy (the layout the go
// command reads through GOPROXY=file://DIR: <module>/@v/list, .info, .mod,
// .zip). tests/gomod uses it to stand in for tagging a release, so that
// `go install .../cli/cmd/agentfs@VERSION` and `go get .../sdk-go@VERSION`
// are tried exactly as a user would, before any tag exists.
//
//	go run ./tools/cmd/gomodpublish -out DIR -version v0.7.0 core cli sdk-go wasm
//
// Each module's files are the ones git would put in a commit (tracked and
// untracked-but-not-ignored files of the working tree), zipped by
// golang.org/x/mod/zip, the implementation the go command itself uses, so
// the zip obeys the same rules (no nested modules, no vendor, size limits)
// a published tag would.
package main

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"golang.org/x/mod/modfile"
	"golang.org/x/mod/module"
	modzip "golang.org/x/mod/zip"
)

func main() {
	out := flag.String("out", "", "proxy directory to write (created if missing)")
	version := flag.String("version", "", "module version to publish, e.g. v0.7.0")
	root := flag.String("root", ".", "repository root (the directory holding the module directories)")
	flag.Usage = func() {
		fmt.Fprintln(os.Stderr, "usage: gomodpublish -out DIR -version vX.Y.Z [-root REPO] MODULE_DIR...")
		flag.PrintDefaults()
	}
	flag.Parse()
	if *out == "" || *version == "" || flag.NArg() == 0 {
		flag.Usage()
		os.Exit(2)
	}
	if err := module.Check("example.com/m", *version); err != nil {
		fatalf("version %q: %v", *version, err)
	}
	stamp := commitTime(*root)
	for _, dir := range flag.Args() {
		path, err := publish(*root, dir, *out, *version, stamp)
		if err != nil {
			fatalf("%s: %v", dir, err)
		}
		fmt.Printf("published %s@%s\n", path, *version)
	}
}

func fatalf(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "gomodpublish: "+format+"\n", args...)
	os.Exit(1)
}

// commitTime is the time of HEAD, so .info files do not change between two
// runs on the same commit; the current time when git cannot tell.
func commitTime(root string) time.Time {
	b, err := exec.Command("git", "-C", root, "log", "-1", "--format=%cI").Output()
	if err == nil {
		if t, err := time.Parse(time.RFC3339, strings.TrimSpace(string(b))); err == nil {
			return t.UTC()
		}
	}
	return time.Now().UTC().Truncate(time.Second)
}

func publish(root, dir, out, version string, stamp time.Time) (string, error) {
	modDir := filepath.Join(root, dir)
	gomod, err := os.ReadFile(filepath.Join(modDir, "go.mod"))
	if err != nil {
		return "", err
	}
	mf, err := modfile.ParseLax("go.mod", gomod, nil)
	if err != nil {
		return "", err
	}
	if mf.Module == nil {
		return "", fmt.Errorf("go.mod has no module line")
	}
	// A published go.mod with a replace of a sibling would build for no
	// user; refuse it here too, not only in the version test.
	if len(mf.Replace) > 0 {
		return "", fmt.Errorf("go.mod has replace directives; a published module must not")
	}
	mv := module.Version{Path: mf.Module.Mod.Path, Version: version}
	escPath, err := module.EscapePath(mv.Path)
	if err != nil {
		return "", err
	}
	vdir := filepath.Join(out, filepath.FromSlash(escPath), "@v")
	if err := os.MkdirAll(vdir, 0o755); err != nil {
		return "", err
	}

	files, err := worktreeFiles(root, dir)
	if err != nil {
		return "", err
	}
	var zbuf bytes.Buffer
	if err := modzip.Create(&zbuf, mv, files); err != nil {
		return "", err
	}
	info, err := json.Marshal(struct {
		Version string
		Time    time.Time
	}{version, stamp})
	if err != nil {
		return "", err
	}
	for name, data := range map[string][]byte{
		version + ".mod":  gomod,
		version + ".zip":  zbuf.Bytes(),
		version + ".info": info,
	} {
		if err := os.WriteFile(filepath.Join(vdir, name), data, 0o644); err != nil {
			return "", err
		}
	}
	return mv.Path, addToList(filepath.Join(vdir, "list"), version)
}

// addToList records version in the proxy's version list, once.
func addToList(listPath, version string) error {
	old, err := os.ReadFile(listPath)
	if err != nil && !os.IsNotExist(err) {
		return err
	}
	for _, v := range strings.Fields(string(old)) {
		if v == version {
			return nil
		}
	}
	return os.WriteFile(listPath, append(old, []byte(version+"\n")...), 0o644)
}

// worktreeFiles lists the files of module directory dir that a commit of
// the working tree would hold: tracked files still present plus untracked
// files git does not ignore. Build outputs, databases and node_modules
// stay out, as they would from a tag.
func worktreeFiles(root, dir string) ([]modzip.File, error) {
	cmd := exec.Command("git", "-C", root, "ls-files", "-z", "--cached", "--others", "--exclude-standard", "--", dir)
	cmd.Stderr = os.Stderr
	b, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("git ls-files: %w", err)
	}
	seen := map[string]bool{}
	var files []modzip.File
	prefix := filepath.ToSlash(filepath.Clean(dir)) + "/"
	for _, name := range strings.Split(string(b), "\x00") {
		if name == "" || seen[name] {
			continue
		}
		seen[name] = true
		full := filepath.Join(root, filepath.FromSlash(name))
		if _, err := os.Lstat(full); os.IsNotExist(err) {
			continue // deleted in the working tree, not yet committed
		}
		rel, ok := strings.CutPrefix(name, prefix)
		if !ok {
			return nil, fmt.Errorf("git listed %s outside %s", name, dir)
		}
		files = append(files, diskFile{rel: rel, full: full})
	}
	if len(files) == 0 {
		return nil, fmt.Errorf("no files (is %s a module directory of this repository?)", dir)
	}
	return files, nil
}

// diskFile is a modzip.File read from the working tree.
type diskFile struct{ rel, full string }

func (f diskFile) Path() string                 { return f.rel }
func (f diskFile) Lstat() (os.FileInfo, error)  { return os.Lstat(f.full) }
func (f diskFile) Open() (io.ReadCloser, error) { return os.Open(f.full) }

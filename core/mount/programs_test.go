//go:build linux

package mount_test

import (
	"fmt"
	"math/rand"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// Real programs through the mount: git, tar, diff, cp -a, find, du,
// rm -rf and a parallel make of a small C project.

func needTool(t *testing.T, names ...string) {
	t.Helper()
	for _, n := range names {
		if _, err := exec.LookPath(n); err != nil {
			t.Skipf("skipping: %s is not installed", n)
		}
	}
}

// sh runs a shell command line in dir and returns its output.
func sh(t *testing.T, dir, cmdline string) string {
	t.Helper()
	cmd := exec.Command("sh", "-c", cmdline)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "LC_ALL=C", "GIT_CONFIG_NOSYSTEM=1", "HOME="+dir,
		"GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@example.com", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@example.com")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%s (in %s): %v\n%s", cmdline, dir, err, out)
	}
	return string(out)
}

// timed runs sh and returns how long it took.
func timed(t *testing.T, dir, cmdline string) time.Duration {
	t.Helper()
	start := time.Now()
	sh(t, dir, cmdline)
	return time.Since(start)
}

// treeFiles is the size of the tree that TestPrograms untars.
const treeFiles = 10000

// makeTree writes n files of random sizes (up to 8 KiB, every 500th about
// 256 KiB) in nested
// directories, with a few symlinks and hard links, under dir.
func makeTree(t *testing.T, dir string, n int) {
	t.Helper()
	r := rand.New(rand.NewSource(1))
	buf := make([]byte, 256<<10)
	for i := range n {
		sub := filepath.Join(dir, fmt.Sprintf("pkg%02d", i%37), fmt.Sprintf("lib%d", i%5))
		must(t, os.MkdirAll(sub, 0o755))
		size := r.Intn(8 << 10)
		if i%500 == 7 {
			size = len(buf) - r.Intn(4096) // a few larger files
		}
		r.Read(buf[:size])
		name := filepath.Join(sub, fmt.Sprintf("file%04d.dat", i))
		must(t, os.WriteFile(name, buf[:size], 0o644))
		if i%100 == 0 {
			must(t, os.Symlink(fmt.Sprintf("file%04d.dat", i), name+".link"))
		}
		if i%250 == 0 {
			must(t, os.Chmod(name, 0o755))
			must(t, os.Link(name, name+".hard"))
		}
	}
}

func TestPrograms(t *testing.T) {
	needTool(t, "tar", "diff", "cp", "find", "du", "rm")
	fx := mountT(t)
	native := t.TempDir()
	src := filepath.Join(native, "src")
	makeTree(t, src, treeFiles)
	archive := filepath.Join(native, "tree.tar")
	sh(t, native, "tar cf tree.tar -C src .")

	must(t, os.Mkdir(fx.p("untar"), 0o755))
	must(t, os.Mkdir(filepath.Join(native, "untar"), 0o755))
	tMount := timed(t, fx.dir, "tar xf "+archive+" -C untar")
	tNative := timed(t, native, "tar xf "+archive+" -C untar")
	sh(t, fx.dir, "diff -r "+src+" untar")
	t.Logf("tar x of %d files: mount %v, native %v (%.1fx)", treeFiles, tMount, tNative, float64(tMount)/float64(tNative))

	// find and du agree with the native tree.
	count := func(dir string) string { return sh(t, dir, "find . | sort | md5sum") }
	if a, b := count(fx.p("untar")), count(filepath.Join(native, "untar")); a != b {
		t.Errorf("find listings differ")
	}
	if got := strings.Fields(sh(t, fx.p("untar"), "find . -type f | wc -l"))[0]; got != strconv.Itoa(treeFiles+treeFiles/250) {
		t.Errorf("find -type f: %s files", got)
	}
	duApparent := func(dir string) string {
		return strings.Fields(sh(t, dir, "du -s --apparent-size --block-size=1 --count-links ."))[0]
	}
	if a, b := duApparent(fx.p("untar")), duApparent(filepath.Join(native, "untar")); a == "" || a == "0" {
		t.Errorf("du through the mount: %q (native %q)", a, b)
	}
	// The sizes of the files (du counts directories as the filesystem
	// reports them, which differs): the same sum both ways.
	sumSizes := func(dir string) string {
		return sh(t, dir, "find . -type f -printf '%s\\n' | awk '{s+=$1} END {print s}'")
	}
	if a, b := sumSizes(fx.p("untar")), sumSizes(filepath.Join(native, "untar")); a != b {
		t.Errorf("file sizes: mount %s, native %s", a, b)
	}

	// cp -a keeps modes, times, symlinks and hard links (of a part of
	// the tree, to keep the test short).
	must(t, os.Mkdir(fx.p("copy"), 0o755))
	tCp := timed(t, fx.dir, "cp -a "+src+"/pkg00 "+src+"/pkg01 "+src+"/pkg02 copy/")
	for _, pkg := range []string{"pkg00", "pkg01", "pkg02"} {
		sh(t, fx.dir, "diff -r "+filepath.Join(src, pkg)+" copy/"+pkg)
	}
	var stSrc, stCopy os.FileInfo
	stSrc, _ = os.Lstat(filepath.Join(src, "pkg00/lib0/file0000.dat"))
	stCopy, _ = os.Lstat(fx.p("copy/pkg00/lib0/file0000.dat"))
	if stSrc.Mode() != stCopy.Mode() || !stSrc.ModTime().Equal(stCopy.ModTime()) {
		t.Errorf("cp -a: mode %v/%v mtime %v/%v", stSrc.Mode(), stCopy.Mode(), stSrc.ModTime(), stCopy.ModTime())
	}
	if out := sh(t, fx.dir, "stat -c %h copy/pkg00/lib0/file0000.dat"); strings.TrimSpace(out) != "2" {
		t.Errorf("cp -a hard link count: %s", out)
	}

	tRm := timed(t, fx.dir, "rm -rf untar copy")
	tRmNative := timed(t, native, "rm -rf untar")
	if es, _ := os.ReadDir(fx.dir); len(es) != 0 {
		t.Errorf("after rm -rf: %d entries left", len(es))
	}
	t.Logf("cp -a of 3 packages: %v; rm -rf: mount %v, native %v", tCp, tRm, tRmNative)
}

func TestGit(t *testing.T) {
	needTool(t, "git")
	fx := mountT(t)
	repo := fx.p("repo")
	must(t, os.Mkdir(repo, 0o755))
	sh(t, repo, "git init -q -b main .")
	for i := range 50 {
		dir := filepath.Join(repo, "src", strconv.Itoa(i%5))
		must(t, os.MkdirAll(dir, 0o755))
		writeFile(t, filepath.Join(dir, fmt.Sprintf("f%d.txt", i)), strings.Repeat("line\n", i+1))
	}
	sh(t, repo, "git add -A && git commit -q -m first")
	if out := sh(t, repo, "git status --porcelain"); out != "" {
		t.Errorf("status after commit: %q", out)
	}
	writeFile(t, filepath.Join(repo, "src/0/f0.txt"), "changed\n")
	must(t, os.Remove(filepath.Join(repo, "src/1/f1.txt")))
	writeFile(t, filepath.Join(repo, "new.txt"), "new\n")
	out := sh(t, repo, "git status --porcelain")
	for _, want := range []string{" M src/0/f0.txt", " D src/1/f1.txt", "?? new.txt"} {
		if !strings.Contains(out, want) {
			t.Errorf("git status lacks %q:\n%s", want, out)
		}
	}
	sh(t, repo, "git add -A && git commit -q -m second && git gc -q")
	if got := strings.TrimSpace(sh(t, repo, "git rev-list --count HEAD")); got != "2" {
		t.Errorf("commits: %s", got)
	}
	sh(t, repo, "git fsck --strict --no-progress")
	if out := sh(t, repo, "git status --porcelain"); out != "" {
		t.Errorf("status after gc: %q", out)
	}
}

func TestMake(t *testing.T) {
	needTool(t, "make", "gcc")
	fx := mountT(t)
	proj := fx.p("proj")
	must(t, os.Mkdir(proj, 0o755))
	var objs []string
	var calls []string
	for i := range 8 {
		writeFile(t, filepath.Join(proj, fmt.Sprintf("m%d.c", i)),
			fmt.Sprintf("#include \"common.h\"\nint f%d(void) { return %d + COMMON; }\n", i, i))
		objs = append(objs, fmt.Sprintf("m%d.o", i))
		calls = append(calls, fmt.Sprintf("f%d()", i))
	}
	writeFile(t, filepath.Join(proj, "common.h"), "#define COMMON 1\n")
	var decls strings.Builder
	for i := range 8 {
		fmt.Fprintf(&decls, "int f%d(void);\n", i)
	}
	writeFile(t, filepath.Join(proj, "main.c"), "#include <stdio.h>\n"+decls.String()+
		"int main(void) { printf(\"%d\\n\", "+strings.Join(calls, " + ")+"); return 0; }\n")
	writeFile(t, filepath.Join(proj, "Makefile"), "OBJS = main.o "+strings.Join(objs, " ")+"\n"+
		"prog: $(OBJS)\n\t$(CC) -o $@ $(OBJS)\n%.o: %.c common.h\n\t$(CC) -O1 -c -o $@ $<\nclean:\n\trm -f prog $(OBJS)\n")
	start := time.Now()
	sh(t, proj, "make -s -j2")
	t.Logf("make -j2 of 9 C files: %v", time.Since(start))
	if got := strings.TrimSpace(sh(t, proj, "./prog")); got != "36" {
		t.Errorf("prog printed %q, want 36", got)
	}
	// Touching the header rebuilds everything; an up-to-date tree builds
	// nothing.
	time.Sleep(20 * time.Millisecond)
	writeFile(t, filepath.Join(proj, "common.h"), "#define COMMON 2\n")
	sh(t, proj, "make -s -j2")
	if got := strings.TrimSpace(sh(t, proj, "./prog")); got != "44" {
		t.Errorf("after header change prog printed %q, want 44", got)
	}
	if out := sh(t, proj, "make -j2"); !strings.Contains(out, "up to date") {
		t.Errorf("second make: %q", out)
	}
	sh(t, proj, "make -s clean")
}

// TestPackageInstalls installs real packages from the registries into an
// empty directory through the mount and into a native one, and compares
// the two trees: npm (tarball extraction, renames, the .bin symlink it
// runs) and pip (wheels unpacked with --target). It needs the npm
// registry and PyPI: without them it skips, unless
// AGENTFS_REQUIRE_NETWORK=1 (CI, which installs from both anyway).
func TestPackageInstalls(t *testing.T) {
	needTool(t, "npm", "node", "python3", "diff")
	if os.Getenv("AGENTFS_REQUIRE_NETWORK") != "1" {
		if err := exec.Command("npm", "view", "--silent", "semver@7.6.3", "version").Run(); err != nil {
			t.Skipf("skipping: the npm registry is not reachable (%v)", err)
		}
	}
	fx := mountT(t)
	tmp := t.TempDir()
	// Caches outside both trees, shared: the second install of each
	// kind reads the first one's downloads.
	env := append(os.Environ(), "npm_config_cache="+filepath.Join(tmp, "npm-cache"),
		"npm_config_update_notifier=false", "PIP_CACHE_DIR="+filepath.Join(tmp, "pip-cache"),
		"PIP_DISABLE_PIP_VERSION_CHECK=1", "PYTHONDONTWRITEBYTECODE=1")
	run := func(dir string, args ...string) string {
		t.Helper()
		cmd := exec.Command(args[0], args[1:]...)
		cmd.Dir, cmd.Env = dir, env
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("%s (in %s): %v\n%s", strings.Join(args, " "), dir, err, out)
		}
		return string(out)
	}
	venv := filepath.Join(tmp, "venv")
	run(tmp, "python3", "-m", "venv", venv)
	pip := filepath.Join(venv, "bin", "pip")

	native := filepath.Join(tmp, "proj") // the same name: npm init names the package after it
	mounted := fx.p("proj")
	for _, dir := range []string{native, mounted} {
		must(t, os.Mkdir(dir, 0o755))
		start := time.Now()
		run(dir, "npm", "init", "-y")
		run(dir, "npm", "install", "--no-audit", "--no-fund", "semver@7.6.3", "is-number@7.0.0")
		npmTook := time.Since(start)
		start = time.Now()
		run(dir, pip, "install", "--no-deps", "--no-compile", "--target", "py", "six==1.16.0", "packaging==24.1")
		t.Logf("%s: npm init+install %v, pip install %v", dir, npmTook.Round(time.Millisecond), time.Since(start).Round(time.Millisecond))
	}
	if out := run(tmp, "diff", "-r", "--no-dereference", native, mounted); out != "" {
		t.Errorf("the installed trees differ:\n%s", out)
	}
	// The installed code runs from the mount.
	if got := strings.TrimSpace(run(mounted, "node", "-e", "console.log(require('semver').valid('1.2.3'), require('is-number')(5))")); got != "1.2.3 true" {
		t.Errorf("node require from the mount: %q", got)
	}
	if got := strings.TrimSpace(run(mounted, "./node_modules/.bin/semver", "-i", "minor", "1.2.3")); got != "1.3.0" {
		t.Errorf("node_modules/.bin/semver: %q", got)
	}
	if fi, err := os.Lstat(filepath.Join(mounted, "node_modules/.bin/semver")); err != nil || fi.Mode()&os.ModeSymlink == 0 {
		t.Errorf("node_modules/.bin/semver is not a symlink: %v %v", fi, err)
	}
	cmd := exec.Command(filepath.Join(venv, "bin", "python"), "-c", "import six, packaging.version as v; print(six.__version__, v.Version('1.0') < v.Version('1.1'))")
	cmd.Dir, cmd.Env = mounted, append(env, "PYTHONPATH="+filepath.Join(mounted, "py"))
	if out, err := cmd.CombinedOutput(); err != nil || strings.TrimSpace(string(out)) != "1.16.0 True" {
		t.Errorf("python import from the mount: %q %v", out, err)
	}
}

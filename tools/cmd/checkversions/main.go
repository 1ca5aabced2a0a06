// Command checkversions fails when any manifest of the project disagrees
// with the one version in the VERSION file at the repository root:
//
//   - every Go module's go.mod has no replace directive and requires its
//     sibling modules (github.com/agentfs-go/agentfs/...) at vVERSION;
//   - go.work maps exactly those sibling versions onto the workspace
//     directories (it is what lets an unpublished vVERSION build);
//   - core.Version (what `agentfs version` and the stdio handshake report);
//   - sdk-ts/package.json, sdk-python/pyproject.toml, sdk-rust/Cargo.toml;
//   - the npm engine packages sdk-ts/npm/TARGET/package.json (name, os, cpu);
//   - every `github.com/agentfs-go/agentfs/...@vX.Y.Z` in the READMEs, whose
//     install commands tests/gomod runs;
//
// and that each published Go module holds a copy of the root LICENSE.
//
// Run from the repository root: go run ./tools/cmd/checkversions
package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"

	"golang.org/x/mod/modfile"
	"golang.org/x/mod/semver"
)

const modPrefix = "github.com/agentfs-go/agentfs/"

// goModules are the module directories; tools is dev-only (never
// published) but still must not replace a sibling.
// The first four are published.
var goModules = []string{"core", "cli", "sdk-go", "wasm", "tools"}

func main() {
	root := "."
	if len(os.Args) > 1 {
		root = os.Args[1]
	}
	problems, err := check(root)
	if err != nil {
		fmt.Fprintln(os.Stderr, "checkversions:", err)
		os.Exit(2)
	}
	for _, p := range problems {
		fmt.Fprintln(os.Stderr, p)
	}
	if len(problems) > 0 {
		fmt.Fprintf(os.Stderr, "checkversions: %d problem(s): manifests must agree with VERSION (and modules carry LICENSE)\n", len(problems))
		os.Exit(1)
	}
	fmt.Println("checkversions: every manifest agrees with VERSION")
}

func check(root string) ([]string, error) {
	raw, err := os.ReadFile(filepath.Join(root, "VERSION"))
	if err != nil {
		return nil, err
	}
	version := strings.TrimSpace(string(raw))
	gov := "v" + version
	if !semver.IsValid(gov) || semver.Canonical(gov) != gov {
		return nil, fmt.Errorf("VERSION %q is not a semantic version X.Y.Z (without a leading v)", version)
	}
	var problems []string
	bad := func(format string, args ...any) { problems = append(problems, fmt.Sprintf(format, args...)) }

	required := map[string]bool{} // sibling module paths some go.mod requires
	for _, dir := range goModules {
		name := filepath.Join(dir, "go.mod")
		data, err := os.ReadFile(filepath.Join(root, name))
		if err != nil {
			return nil, err
		}
		mf, err := modfile.Parse(name, data, nil)
		if err != nil {
			return nil, err
		}
		if want := modPrefix + dir; mf.Module.Mod.Path != want {
			bad("%s: module %s, want %s", name, mf.Module.Mod.Path, want)
		}
		for _, r := range mf.Replace {
			bad("%s: replace %s => %s: go.mod files must not replace (go.work joins the modules for development)", name, r.Old.Path, r.New.Path)
		}
		for _, r := range mf.Require {
			if strings.HasPrefix(r.Mod.Path, modPrefix) {
				required[r.Mod.Path] = true
				if r.Mod.Version != gov {
					bad("%s: requires %s %s, want %s", name, r.Mod.Path, r.Mod.Version, gov)
				}
			}
		}
	}

	// go.work: each required sibling is replaced at exactly vVERSION by its
	// workspace directory; any other replace would hide a go.mod mistake.
	data, err := os.ReadFile(filepath.Join(root, "go.work"))
	if err != nil {
		return nil, err
	}
	wf, err := modfile.ParseWork("go.work", data, nil)
	if err != nil {
		return nil, err
	}
	replaced := map[string]bool{}
	for _, r := range wf.Replace {
		dir := strings.TrimPrefix(r.Old.Path, modPrefix)
		switch {
		case !strings.HasPrefix(r.Old.Path, modPrefix):
			bad("go.work: replace of %s: only the project's own modules may be replaced there", r.Old.Path)
		case r.Old.Version != gov:
			bad("go.work: replace %s %s, want %s", r.Old.Path, r.Old.Version, gov)
		case filepath.Clean(r.New.Path) != dir:
			bad("go.work: replace %s => %s, want ./%s", r.Old.Path, r.New.Path, dir)
		default:
			replaced[r.Old.Path] = true
		}
	}
	for p := range required {
		if !replaced[p] {
			bad("go.work: no `replace %s %s => ./%s`: the workspace would look for the unpublished version on the proxy", p, gov, strings.TrimPrefix(p, modPrefix))
		}
	}

	// core.Version, the version the engine reports.
	if got, err := find(root, "core/agent.go", `(?m)^var Version = "([^"]*)"`); err != nil {
		return nil, err
	} else if got != version {
		bad("core/agent.go: Version = %q, want %q", got, version)
	}

	// The SDK manifests.
	if pkg, err := os.ReadFile(filepath.Join(root, "sdk-ts/package.json")); err != nil {
		return nil, err
	} else {
		var m struct{ Version string }
		if err := json.Unmarshal(pkg, &m); err != nil {
			return nil, fmt.Errorf("sdk-ts/package.json: %w", err)
		}
		if m.Version != version {
			bad("sdk-ts/package.json: version %q, want %q", m.Version, version)
		}
	}
	for _, f := range []struct{ file, section string }{
		{"sdk-python/pyproject.toml", "project"},
		{"sdk-rust/Cargo.toml", "package"},
	} {
		got, err := tomlVersion(filepath.Join(root, f.file), f.section)
		if err != nil {
			return nil, err
		}
		if got != version {
			bad("%s: [%s] version %q, want %q", f.file, f.section, got, version)
		}
	}

	// The npm engine packages.
	npm, err := checkNpm(root, version)
	if err != nil {
		return nil, err
	}
	problems = append(problems, npm...)

	// Each published Go module carries the license: a module zip holds only
	// its own directory, so the root LICENSE would not reach users.
	license, err := os.ReadFile(filepath.Join(root, "LICENSE"))
	if err != nil {
		return nil, err
	}
	for _, dir := range goModules[:4] { // tools is never published
		if b, err := os.ReadFile(filepath.Join(root, dir, "LICENSE")); err != nil || string(b) != string(license) {
			bad("%s/LICENSE: missing or not the root LICENSE; copy it: cp LICENSE %s/", dir, dir)
		}
	}

	// Install commands in the READMEs.
	pinned := regexp.MustCompile(regexp.QuoteMeta(modPrefix) + `[\w./-]*@(v[0-9][\w.+-]*)`)
	for _, readme := range []string{"README.md", "sdk-go/README.md"} {
		data, err := os.ReadFile(filepath.Join(root, readme))
		if err != nil {
			return nil, err
		}
		for _, m := range pinned.FindAllStringSubmatch(string(data), -1) {
			if m[1] != gov {
				bad("%s: %s, want @%s", readme, m[0], gov)
			}
		}
	}
	return problems, nil
}

// find returns the first submatch of pattern in file, or an error naming
// the file when it does not match (the check itself is out of date then).
func find(root, file, pattern string) (string, error) {
	data, err := os.ReadFile(filepath.Join(root, file))
	if err != nil {
		return "", err
	}
	m := regexp.MustCompile(pattern).FindSubmatch(data)
	if m == nil {
		return "", fmt.Errorf("%s: no version found (pattern %s)", file, pattern)
	}
	return string(m[1]), nil
}

// tomlVersion returns the `version = "..."` value of table [section] of a
// TOML manifest, reading it line by line (a manifest's version is always a
// plain string on its own line).
func tomlVersion(file, section string) (string, error) {
	data, err := os.ReadFile(file)
	if err != nil {
		return "", err
	}
	line := regexp.MustCompile(`^version\s*=\s*"([^"]*)"`)
	table := ""
	for _, l := range strings.Split(string(data), "\n") {
		l = strings.TrimSpace(l)
		if strings.HasPrefix(l, "[") {
			table = strings.Trim(l, "[] ")
			continue
		}
		if table == section {
			if m := line.FindStringSubmatch(l); m != nil {
				return m[1], nil
			}
		}
	}
	return "", fmt.Errorf("%s: no version in [%s]", file, section)
}

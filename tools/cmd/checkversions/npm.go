package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// npmTargets are the platforms of the engine packages @agentfs-sdk/TARGET
// (sdk-ts/npm/TARGET/package.json), which sdk-ts/scripts/pack-all.sh packs
// and lists as agentfs-sdk's optional dependencies at VERSION.
var npmTargets = []string{"linux-x64", "linux-arm64", "darwin-arm64", "darwin-x64", "win32-x64"}

// checkNpm checks each engine package's manifest: its name, version, and
// the os/cpu npm selects it by, which must match its directory, or npm
// would install a binary that cannot run (or none) on some platform.
func checkNpm(root, version string) ([]string, error) {
	var problems []string
	dirs, err := os.ReadDir(filepath.Join(root, "sdk-ts", "npm"))
	if err != nil {
		return nil, err
	}
	var found []string
	for _, d := range dirs {
		found = append(found, d.Name())
	}
	slices.Sort(found)
	want := slices.Sorted(slices.Values(npmTargets))
	if !slices.Equal(found, want) {
		problems = append(problems, fmt.Sprintf("sdk-ts/npm: packages %v, want %v", found, want))
	}
	for _, t := range found {
		file := filepath.ToSlash(filepath.Join("sdk-ts", "npm", t, "package.json"))
		data, err := os.ReadFile(filepath.Join(root, file))
		if err != nil {
			return nil, err
		}
		var m struct {
			Name, Version string
			OS, CPU       []string
		}
		if err := json.Unmarshal(data, &m); err != nil {
			return nil, fmt.Errorf("%s: %w", file, err)
		}
		osName, cpu, _ := strings.Cut(t, "-")
		if m.Name != "@agentfs-sdk/"+t {
			problems = append(problems, fmt.Sprintf("%s: name %q, want %q", file, m.Name, "@agentfs-sdk/"+t))
		}
		if m.Version != version {
			problems = append(problems, fmt.Sprintf("%s: version %q, want %q", file, m.Version, version))
		}
		if !slices.Equal(m.OS, []string{osName}) || !slices.Equal(m.CPU, []string{cpu}) {
			problems = append(problems, fmt.Sprintf("%s: os %v cpu %v, want [%s] [%s]", file, m.OS, m.CPU, osName, cpu))
		}
	}
	return problems, nil
}

// Command fakemodel serves a scripted model (core/session/fakemodel) on
// 127.0.0.1 for the SDKs' session tests: `fakemodel SCRIPT.json` prints
// the server's base URL on its first line of output and serves until its
// standard input closes (the test ends) or it is killed. The failed
// checks are at GET BASE/_fakemodel/failures.
package main

import (
	"encoding/json"
	"fmt"
	"io"
	"os"

	"github.com/agentfs-go/agentfs/core/session/fakemodel"
)

func main() {
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: fakemodel SCRIPT.json")
		os.Exit(2)
	}
	b, err := os.ReadFile(os.Args[1])
	if err != nil {
		fmt.Fprintln(os.Stderr, "fakemodel:", err)
		os.Exit(1)
	}
	var sc fakemodel.Script
	if err := json.Unmarshal(b, &sc); err != nil {
		fmt.Fprintln(os.Stderr, "fakemodel: script:", err)
		os.Exit(1)
	}
	s, err := fakemodel.Start(sc)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	fmt.Println(s.URL)
	_, _ = io.Copy(io.Discard, os.Stdin)
	_ = s.Close()
}

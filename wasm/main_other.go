//go:build !js

package main

import (
	"fmt"
	"os"
)

func main() {
	fmt.Fprintln(os.Stderr, "agentfs wasm: build this program with GOOS=js GOARCH=wasm (go tool task build-wasm)")
	os.Exit(2)
}

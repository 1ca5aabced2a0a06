//go:build !agentfs_nonode

package sandbox

// The node command (JavaScript, ES modules and TypeScript in the engine)
// lives in its own package and registers itself in commands.Default.
// Builds with the tag agentfs_nonode leave it out: goja and esbuild are
// about 29 MiB of the engine, more than half of the WebAssembly build.
import _ "github.com/agentfs-go/agentfs/core/sandbox/jsnode"

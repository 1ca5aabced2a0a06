//go:build !agentfs_nonode && !agentfs_workers

package sandbox

// The node command (JavaScript, ES modules and TypeScript in the engine)
// lives in its own package and registers itself in commands.Default.
// Builds with the tag agentfs_nonode leave it out (goja and esbuild are
// about 29 MiB of the engine, more than half of the WebAssembly build),
// and so does the Workers build (tag agentfs_workers): a Worker runs
// JavaScript itself.
import _ "github.com/agentfs-go/agentfs/core/sandbox/jsnode"

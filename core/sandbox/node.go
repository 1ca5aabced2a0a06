//go:build !agentfs_workers

package sandbox

// The node command (JavaScript, ES modules and TypeScript in the engine)
// lives in its own package and registers itself in commands.Default. The
// Workers build (tag agentfs_workers) leaves it out: goja and esbuild are
// most of the engine's size, and a Worker runs JavaScript itself.
import _ "github.com/agentfs-go/agentfs/core/sandbox/jsnode"

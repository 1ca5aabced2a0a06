package sandbox

// The node command (JavaScript, ES modules and TypeScript in the engine)
// lives in its own package and registers itself in commands.Default.
import _ "github.com/agentfs-go/agentfs/core/sandbox/jsnode"

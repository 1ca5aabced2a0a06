module github.com/agentfs-go/agentfs/sdk-go

go 1.26.8

require github.com/agentfs-go/agentfs/core v0.0.0

replace github.com/agentfs-go/agentfs/core => ../core

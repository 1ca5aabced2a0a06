module github.com/agentfs-go/agentfs/sdk-go

go 1.26.8

require (
	github.com/agentfs-go/agentfs/core v0.0.0
	golang.org/x/sys v0.47.0
)

require (
	github.com/antlr4-go/antlr/v4 v4.13.0 // indirect
	github.com/libsql/sqlite-antlr4-parser v0.0.0-20240327125255-dbf53b6cbf06 // indirect
	github.com/tursodatabase/go-libsql v0.0.0-20251219133454-43644db490ff // indirect
	golang.org/x/exp v0.0.0-20260410095643-746e56fc9e2f // indirect
)

replace github.com/agentfs-go/agentfs/core => ../core

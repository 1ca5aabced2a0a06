// Package tools pins the developer tools of the project as Go tool
// dependencies, so `go tool task` works on a machine with only Go.
package tools

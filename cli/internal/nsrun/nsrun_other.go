//go:build !linux

package nsrun

import "errors"

// Layout is what Setup mounts (see the Linux implementation).
type Layout struct {
	Workdir, Overlay string
	Allow            []string
	Host             []string
	PrivateDirs      []string
}

// Setup needs Linux namespaces.
func Setup(l Layout) error { return errors.New("the agentfs run sandbox needs Linux") }

//go:build !linux

package treewatch

import (
	"context"
	"fmt"
	"runtime"
)

// Watcher is not available off Linux: New returns ErrUnsupported.
type Watcher struct{}

// New returns ErrUnsupported: the kernel's reports are read on Linux only.
func New(nodesDir, stateDir string, o Options) (*Watcher, error) {
	return nil, fmt.Errorf("%w: %s", ErrUnsupported, runtime.GOOS)
}

// Changes reports All.
func (w *Watcher) Changes(context.Context) Changes { return Changes{All: true, Reason: ReasonClosed} }

// Unsure does nothing.
func (w *Watcher) Unsure() {}

// Broken says the watcher does not work here.
func (w *Watcher) Broken() string { return ErrUnsupported.Error() }

// Stats returns no counts.
func (w *Watcher) Stats() Stats { return Stats{All: map[string]int{}} }

// Close does nothing.
func (w *Watcher) Close() error { return nil }

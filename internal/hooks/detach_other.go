//go:build !unix && !windows

package hooks

import "os/exec"

// detach does nothing where processes have no sessions or groups to leave.
func detach(cmd *exec.Cmd) {}

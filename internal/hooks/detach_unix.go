//go:build unix

package hooks

import (
	"os/exec"
	"syscall"
)

// detach makes cmd a session leader of its own, so that it outlives the
// hook and is not killed with the harness's process group.
func detach(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
}

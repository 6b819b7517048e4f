//go:build linux

package gitx

import (
	"os/exec"
	"syscall"
)

// dieWithKK makes the system send cmd SIGTERM when kk's process ends.
func dieWithKK(cmd *exec.Cmd) {
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	cmd.SysProcAttr.Pdeathsig = syscall.SIGTERM
}

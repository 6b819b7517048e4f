//go:build windows

package hooks

import (
	"os/exec"
	"syscall"
)

// detachedProcess is Windows' DETACHED_PROCESS creation flag.
const detachedProcess = 0x00000008

// detach starts cmd in a process group of its own without a console, so
// that it outlives the hook.
func detach(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{CreationFlags: syscall.CREATE_NEW_PROCESS_GROUP | detachedProcess}
}

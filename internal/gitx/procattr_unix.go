//go:build unix

package gitx

import (
	"errors"
	"os"
	"os/exec"
	"syscall"
)

// ownGroup starts cmd in a process group of its own, so that a signal
// sent to kk's process group (systemd's stop, kill -- -PGID, a terminal's
// Ctrl-C) does not reach the git commands kk runs: kk finishes what it
// started and stops them itself.
func ownGroup(cmd *exec.Cmd) {
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	cmd.SysProcAttr.Setpgid = true
}

// terminate asks cmd to end (its context is done): SIGTERM to its process
// group, its own (ownGroup), so that what git started ends with it (git
// fetch's remote helpers, a hook, ssh), each removing the locks it holds;
// a helper left waiting on a remote that never answers would stay for
// ever. SIGTERM to git alone when the group cannot be signalled.
func terminate(cmd *exec.Cmd) error {
	if err := syscall.Kill(-cmd.Process.Pid, syscall.SIGTERM); err == nil {
		return nil
	}
	return cmd.Process.Signal(syscall.SIGTERM)
}

// signalled reports whether err is a command's end by a signal.
func signalled(err error) bool {
	var ee *exec.ExitError
	return errors.As(err, &ee) && stateSignalled(ee.ProcessState)
}

// stateSignalled reports whether an ended process was ended by a signal.
func stateSignalled(ps *os.ProcessState) bool {
	if ps == nil {
		return false
	}
	ws, ok := ps.Sys().(syscall.WaitStatus)
	return ok && ws.Signaled()
}

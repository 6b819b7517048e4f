//go:build !unix

package gitx

import (
	"os"
	"os/exec"
	"syscall"
)

// ownGroup leaves cmd in kk's process group where process groups are not
// Unix's.
func ownGroup(*exec.Cmd) {}

// terminate asks cmd to end (its context is done).
func terminate(cmd *exec.Cmd) error { return cmd.Process.Signal(syscall.SIGTERM) }

// signalled reports whether err is a command's end by a signal: never
// told apart where signals are not Unix's.
func signalled(error) bool { return false }

// stateSignalled reports whether an ended process was ended by a signal:
// never told apart where signals are not Unix's.
func stateSignalled(*os.ProcessState) bool { return false }

//go:build !unix

package gitx

import "os/exec"

// ownGroup leaves cmd in kk's process group where process groups are not
// Unix's.
func ownGroup(*exec.Cmd) {}

//go:build !linux

package gitx

import "os/exec"

// dieWithKK does nothing where the system cannot tie a child's life to
// its parent's; the next start aborts what a killed kk left.
func dieWithKK(*exec.Cmd) {}

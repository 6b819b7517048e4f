//go:build unix

// Package nobodytest runs a test as the user nobody when the tests run as
// root: a test of what kk does with a file it may not read (chmod 000)
// proves nothing as root, who reads every file whatever its mode.
package nobodytest

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// Unprivileged reports whether the test may go on in this process: not
// as root. As root, it runs the test again in a process of its own as the
// user nobody (a copy of the test binary, in a folder nobody may enter)
// and reports false: that process ran the test, and t fails when it did
// not pass.
func Unprivileged(t *testing.T) bool {
	t.Helper()
	if os.Geteuid() != 0 {
		return true
	}
	dir, err := os.MkdirTemp("", "kk-nobody-")
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = os.RemoveAll(dir) }()
	bin := filepath.Join(dir, "test")
	data, err := os.ReadFile(os.Args[0])
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(bin, data, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, "-test.run=^"+t.Name()+"$", "-test.v", "-test.count=1")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "TMPDIR="+os.TempDir(), "HOME="+dir)
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534}}
	out, err := cmd.CombinedOutput()
	if err != nil || !strings.Contains(string(out), "--- PASS: "+t.Name()) {
		t.Fatalf("%s as the user nobody: %v\n%s", t.Name(), err, out)
	}
	return false
}

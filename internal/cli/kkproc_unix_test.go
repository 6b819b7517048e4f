//go:build unix

package cli

import (
	"os"
	"os/exec"
	"testing"
)

// kkProcess is a kk a test started as a child process (the kk on PATH,
// built for the tests), its end watched.
type kkProcess struct {
	exited  chan struct{}
	waitErr error
}

// startKK starts kk with args, env added to the test's, and the given
// stdin, stdout and stderr (nil: none). They are the child's ends of
// pipes: startKK closes the test's copies once the child holds them, so
// that the child alone keeps them open. The child is killed when the test
// ends, if it has not ended before.
func startKK(t *testing.T, env []string, stdin, stdout, stderr *os.File, args ...string) *kkProcess {
	t.Helper()
	cmd := exec.Command("kk", args...)
	cmd.Env = append(os.Environ(), env...)
	if stdin != nil {
		cmd.Stdin = stdin
	}
	if stdout != nil {
		cmd.Stdout = stdout
	}
	if stderr != nil {
		cmd.Stderr = stderr
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	for _, f := range []*os.File{stdin, stdout, stderr} {
		if f != nil {
			_ = f.Close()
		}
	}
	p := &kkProcess{exited: make(chan struct{})}
	go func() { p.waitErr = cmd.Wait(); close(p.exited) }()
	t.Cleanup(func() {
		_ = cmd.Process.Kill() // it may have ended already
		<-p.exited
	})
	return p
}

// ended reports, without waiting, whether kk has ended, and how.
func (p *kkProcess) ended() (bool, error) {
	select {
	case <-p.exited:
		return true, p.waitErr
	default:
		return false, nil
	}
}

// pipe returns the two ends of a new pipe.
func pipe(t *testing.T) (r, w *os.File) {
	t.Helper()
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	return r, w
}

// closedPipe returns the write end of a pipe whose read end is closed: a
// stderr whose reader has gone (`kk … 2>&1 | grep -m1 …` once grep has
// its line).
func closedPipe(t *testing.T) *os.File {
	t.Helper()
	r, w := pipe(t)
	_ = r.Close()
	return w
}

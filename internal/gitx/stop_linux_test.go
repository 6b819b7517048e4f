//go:build linux

package gitx

import (
	"context"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// A git command stopped by its context ends with every process it
// started (git fetch runs git remote-http, which runs git-remote-http):
// the stop signals git's whole process group. Found by the QA run: a
// fetch from a remote that never answered, stopped, left its two
// remote-http helpers waiting on the remote for ever, each holding its
// connection (one more at every --push-every tick), and Run returned
// only after WaitDelay, the helpers holding git's standard error.
func TestStoppedCommandLeavesNoHelper(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git not installed")
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var conns []net.Conn
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			conns = append(conns, c)
			mu.Unlock()
		}
	}()
	defer func() {
		_ = ln.Close()
		mu.Lock()
		defer mu.Unlock()
		for _, c := range conns {
			_ = c.Close()
		}
	}()
	dir := t.TempDir()
	if _, err := Run(context.Background(), dir, "init", "-q"); err != nil {
		t.Fatal(err)
	}
	url := "http://" + ln.Addr().String() + "/never-answers.git"
	ctx, cancel := context.WithTimeout(context.Background(), 500*time.Millisecond)
	defer cancel()
	if _, err := Run(ctx, dir, "fetch", "-q", url); err == nil {
		t.Fatal("a fetch from a remote that never answers succeeded")
	}
	for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		left := processesNaming(t, url)
		if len(left) == 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("processes left after the stopped fetch:\n%s", strings.Join(left, "\n"))
		}
	}
}

// processesNaming lists the command lines of the processes whose
// command line holds s.
func processesNaming(t *testing.T, s string) []string {
	t.Helper()
	cmdlines, err := filepath.Glob("/proc/[0-9]*/cmdline")
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, p := range cmdlines {
		b, err := os.ReadFile(p)
		if err != nil {
			continue
		}
		if line := strings.ReplaceAll(string(b), "\x00", " "); strings.Contains(line, s) {
			out = append(out, line)
		}
	}
	return out
}

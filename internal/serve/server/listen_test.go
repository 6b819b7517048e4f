//go:build unix

package server

import (
	"context"
	"net"
	"net/http"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/kk-project/kk/internal/store"
)

// TestRestartWaitsForThePortAKilledServerLeft: kk serve killed (kill -9)
// and started again at once. Found by the serve11 red team's restart
// loop: the start failed with "address already in use" and exited 1 now
// and then, with no server running. A git command the killed server was
// starting holds a copy of its listening socket until that command
// execs (and the git commands are in process groups of their own, out of
// reach of a kill of kk's group): the port is held a moment longer than
// the server's life, as kk serve's lock is (Options.LockWait). The
// start waits for the port, bounded (Options.ListenWait), and then
// serves. Here a child process holds a copy of the socket until the test
// lets it end.
func TestRestartWaitsForThePortAKilledServerLeft(t *testing.T) {
	needGit(t)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	f, err := ln.(*net.TCPListener).File()
	if err != nil {
		t.Fatal(err)
	}
	holder := exec.Command("cat")
	holder.ExtraFiles = append(holder.ExtraFiles, f)
	stdin, err := holder.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := holder.Start(); err != nil {
		t.Fatal(err)
	}
	_ = f.Close()
	_ = ln.Close()
	t.Cleanup(func() { _ = stdin.Close(); _ = holder.Wait() })
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan error, 1)
	go func() {
		done <- Run(ctx, Options{Root: filepath.Join(t.TempDir(), "kb"), Addr: addr, ListenWait: time.Minute, Init: store.InitOptions{Version: "test", Now: time.Now()}, Getenv: func(string) string { return "" }})
	}()
	// The port is held: the start has not failed.
	select {
	case err := <-done:
		t.Fatalf("the start over a port a dying process holds ended: %v", err)
	case <-time.After(300 * time.Millisecond):
	}
	_ = stdin.Close()
	_ = holder.Wait()
	deadline := time.Now().Add(time.Minute)
	for {
		resp, err := http.Get("http://" + addr + "/healthz")
		if err == nil {
			_ = resp.Body.Close()
			break
		}
		select {
		case err := <-done:
			t.Fatalf("the start ended once the port was free: %v", err)
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("kk serve never answered at %s: %v", addr, err)
		}
		time.Sleep(20 * time.Millisecond)
	}
	cancel()
	if err := <-done; err != nil {
		t.Errorf("Run: %v", err)
	}
}

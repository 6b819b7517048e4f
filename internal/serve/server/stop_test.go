package server

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/kk-project/kk/internal/store"
)

// endsWhen returns a context that ends (canceled) once file exists, as
// kk serve's signal context ends when SIGTERM comes at that point of a
// start (a goroutine watches for the file until the test ends).
func endsWhen(t *testing.T, file string) context.Context {
	ctx, cancel := context.WithCancel(context.Background())
	over := make(chan struct{})
	t.Cleanup(func() { close(over) })
	go func() {
		for {
			if _, err := os.Stat(file); err == nil {
				cancel()
				return
			}
			select {
			case <-over:
				cancel()
				return
			case <-time.After(time.Millisecond):
			}
		}
	}()
	return ctx
}

// TestStopDuringTheStartIsAStop: a stop (SIGTERM, Ctrl-C, systemd's stop
// right after its start) that comes while kk serve starts is a stop, as
// one while it serves: Run returns nil (kk serve exits 0), the new
// folder set up whole, with its one commit. Found by the serve red team,
// round 5: SIGTERM at 50 to 100 ms into the start exited 1 with "kk:
// context canceled" or "kk: syncing index …: context canceled".
func TestStopDuringTheStartIsAStop(t *testing.T) {
	needGit(t)
	for _, at := range []string{filepath.Join(store.DirName, "config.yaml"), filepath.Join(store.DirName, ".state", "serve.lock")} {
		t.Run(at, func(t *testing.T) {
			root := filepath.Join(t.TempDir(), "kb")
			stop := endsWhen(t, filepath.Join(root, at))
			if err := Run(stop, Options{Root: root, Addr: "127.0.0.1:0", Init: store.InitOptions{Version: "test", Now: time.Now()}, Getenv: func(string) string { return "" }}); err != nil {
				t.Errorf("stopped once %s was made: %v; want a stop", at, err)
			}
			if stop.Err() == nil {
				t.Fatal("the stop never came")
			}
			out, err := exec.Command("git", "-C", root, "log", "--format=%s").Output()
			if err != nil || strings.TrimSpace(string(out)) != "init: bootstrap knowledge base" {
				t.Errorf("history %q, %v; want the one bootstrap commit", out, err)
			}
			if out, err := exec.Command("git", "-C", root, "status", "--porcelain").Output(); err != nil || len(out) > 0 {
				t.Errorf("the work tree is not clean: %s %v", out, err)
			}
		})
	}
}

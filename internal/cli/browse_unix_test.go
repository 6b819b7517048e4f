//go:build unix

package cli

import (
	"context"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestBrowseStopsOnSIGTERM sends the process SIGTERM while kk browse
// serves: kk browse catches it (from before it prints the URL until it
// returns), shuts down and exits 0.
func TestBrowseStopsOnSIGTERM(t *testing.T) {
	dir := t.TempDir()
	if code, _, errs := run(t, dir, "", "init"); code != 0 {
		t.Fatalf("init: %d %s", code, errs)
	}
	var out, errb lockedBuffer
	done := make(chan int, 1)
	go func() {
		done <- Run(context.Background(), []string{"browse"}, IO{In: strings.NewReader(""), Out: &out, Err: &errb},
			func(k string) string {
				if k == "KK_ROOT" {
					return dir
				}
				return ""
			})
	}()
	for deadline := time.Now().Add(20 * time.Second); !strings.HasSuffix(out.String(), "\n"); time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("kk browse printed nothing in 20s: %s", errb.String())
		}
	}
	if err := syscall.Kill(syscall.Getpid(), syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	select {
	case code := <-done:
		if code != 0 {
			t.Fatalf("exit %d after SIGTERM: %s", code, errb.String())
		}
	case <-time.After(10 * time.Second):
		t.Fatal("kk browse did not stop within 10s of SIGTERM")
	}
}

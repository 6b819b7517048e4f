//go:build linux || freebsd || openbsd || netbsd

package hooks

import (
	"os"
	"path/filepath"
	"runtime"
	"testing"
	"time"
)

// The real notifier starts the desktop's program, detached, with the
// title and body as its arguments; without one it does nothing.
func TestKenkeepLibDesktopNotifier(t *testing.T) {
	if name, _ := notifyCommand(runtime.GOOS, "", ""); name != "notify-send" {
		t.Fatalf("the notifier here is %q, want notify-send", name)
	}
	bin := t.TempDir()
	out := filepath.Join(bin, "args")
	writeFile(t, filepath.Join(bin, "notify-send"), "#!/bin/sh\nprintf '%s\\n' \"$@\" > "+out+".tmp && mv "+out+".tmp "+out+"\n")
	if err := os.Chmod(filepath.Join(bin, "notify-send"), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", bin+string(os.PathListSeparator)+os.Getenv("PATH"))
	if err := DesktopNotifier("kk: repo on host", "Project: repo\nIssue"); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		data, err := os.ReadFile(out)
		if err == nil {
			if want := "--app-name=kk\nkk: repo on host\nProject: repo\nIssue\n"; string(data) != want {
				t.Fatalf("notify-send got %q, want %q", data, want)
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("notify-send was not run")
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Setenv("PATH", t.TempDir())
	if err := DesktopNotifier("t", "b"); err != nil {
		t.Errorf("without notify-send: %v, want nothing", err)
	}
}

package hooks

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestNotifyCommand: session start's notes reach the desktop as one
// notification: notify-send with kk's app name (and kenkeep's icon when
// the knowledge base has it) on Linux, osascript with the text escaped
// for AppleScript on macOS, nothing elsewhere (kenkeep's
// notifications.test.ts and kk-session-start.test.ts, with kk's name).
func TestNotifyCommand(t *testing.T) {
	root := filepath.Join(t.TempDir(), "shop")
	host, _ := os.Hostname()
	notes := []string{`The index is "stale" \ old.`, "Two logs wait."}
	name, args := notifyCommand("linux", root, notes)
	want := []string{"--app-name=kk", "kk: shop on " + host, "Project: shop\nHost: " + host + "\nPath: " + root + "\n" + notes[0] + "\nTwo logs wait."}
	if name != "notify-send" || !slices.Equal(args, want) {
		t.Errorf("linux: %s %q\nwant %q", name, args, want)
	}
	icon := filepath.Join(root, ".ai", "kenkeep", "assets", "notification-icon.png")
	writeFile(t, icon, "png")
	if _, args := notifyCommand("linux", root, notes); len(args) != 4 || args[1] != "--icon="+icon {
		t.Errorf("linux with kenkeep's icon: %q", args)
	}
	name, args = notifyCommand("darwin", root, notes)
	if name != "osascript" || len(args) != 2 || args[0] != "-e" ||
		!strings.HasPrefix(args[1], `display notification "Project: shop\nHost: `) ||
		!strings.Contains(args[1], `The index is \"stale\" \\ old.\nTwo logs wait." with title "kk: shop on `) {
		t.Errorf("darwin: %s %q", name, args)
	}
	if name, _ := notifyCommand("windows", root, notes); name != "" {
		t.Errorf("windows: %s", name)
	}
}

// TestDesktopNotifierNeedsTheProgram: without notify-send (or osascript)
// on PATH nothing is started, and nothing fails.
func TestDesktopNotifierNeedsTheProgram(t *testing.T) {
	DesktopNotifier(func(string) string { return "" })(t.TempDir(), []string{"a note"})
	if p := lookPathIn(t.TempDir(), "notify-send"); p != "" {
		t.Errorf("found %q in an empty folder", p)
	}
}

package hooks

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"

	"github.com/kk-project/kk/internal/harness"
)

// A desktop notification tells the user, outside the agent session, what
// session start asked for (a stale index, curation waiting, lint errors),
// as kenkeep does: on macOS through osascript, on Linux through
// notify-send; elsewhere none. config.yaml's notifications.enabled: false
// turns it off. It is best effort: the program is started detached and
// never waited for, and a missing program is no error of the session.

// Notifier shows one desktop notification.
type Notifier func(title, body string) error

// DesktopNotifier shows notifications with the desktop's own program
// (notifyCommand), started detached.
func DesktopNotifier(title, body string) error {
	name, args := notifyCommand(runtime.GOOS, title, body)
	if name == "" {
		return nil
	}
	path, err := exec.LookPath(name)
	if err != nil {
		return nil // no notification program: nothing to show it with
	}
	cmd := exec.Command(path, args...)
	cmd.Env = harness.ChildEnv(os.Environ())
	detach(cmd)
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("starting %s: %w", name, err)
	}
	return cmd.Process.Release()
}

// notifyCommand is the program and arguments that show a notification on
// goos ("" when kk has none there).
func notifyCommand(goos, title, body string) (string, []string) {
	switch goos {
	case "darwin":
		return "osascript", []string{"-e", "display notification " + appleScriptString(body) + " with title " + appleScriptString(title)}
	case "linux", "freebsd", "openbsd", "netbsd":
		return "notify-send", []string{"--app-name=kk", title, body}
	}
	return "", nil
}

// appleScriptString quotes s as an AppleScript string literal.
func appleScriptString(s string) string {
	return `"` + strings.NewReplacer(`\`, `\\`, `"`, `\"`).Replace(s) + `"`
}

// notification is the title and body of the notification for notes: the
// project, the host and the path, then each note.
func notification(root string, notes []string) (title, body string) {
	host, _ := os.Hostname()
	if host == "" {
		host = "this machine"
	}
	project := filepath.Base(root)
	var b strings.Builder
	fmt.Fprintf(&b, "Project: %s\nHost: %s\nPath: %s", project, host, root)
	for _, n := range notes {
		b.WriteString("\n" + n)
	}
	return "kk: " + project + " on " + host, b.String()
}

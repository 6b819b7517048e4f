package hooks

import (
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
)

// notifyIcon is the icon kenkeep ships for its notifications, relative to
// the knowledge base; kk uses it when it is there.
const notifyIcon = "assets/notification-icon.png"

// DesktopNotifier returns a Request.Notify that shows session start's
// notes as one desktop notification, as kenkeep does: `notify-send
// --app-name=kk [--icon=…] <title> <body>` on Linux, `osascript -e
// 'display notification …'` on macOS, nothing elsewhere or when the
// program is not on the PATH getenv reads. The title is "kk: <project> on
// <host>"; the body names the project, the host and the folder, then the
// notes. The program is started detached and not waited for; that it
// fails (no notification daemon, no display) is no problem of the hook's.
func DesktopNotifier(getenv func(string) string) func(root string, notes []string) {
	return func(root string, notes []string) {
		name, args := notifyCommand(runtime.GOOS, root, notes)
		if name == "" {
			return
		}
		bin := lookPathIn(getenv("PATH"), name)
		if bin == "" {
			return
		}
		cmd := exec.Command(bin, args...)
		cmd.Env = os.Environ()
		detach(cmd)
		if cmd.Start() == nil {
			_ = cmd.Process.Release()
		}
	}
}

// notifyCommand returns the program and arguments that show the notes of
// the knowledge base at root on goos, or "" where kk shows none.
func notifyCommand(goos, root string, notes []string) (string, []string) {
	project := filepath.Base(root)
	host, _ := os.Hostname()
	title := "kk: " + project + " on " + host
	lines := append([]string{"Project: " + project, "Host: " + host, "Path: " + root}, notes...)
	body := strings.Join(lines, "\n")
	switch goos {
	case "linux":
		args := []string{"--app-name=kk"}
		if icon := filepath.Join(root, ".ai", "kenkeep", filepath.FromSlash(notifyIcon)); isFile(icon) {
			args = append(args, "--icon="+icon)
		}
		return "notify-send", append(args, title, body)
	case "darwin":
		return "osascript", []string{"-e", `display notification "` + appleScriptString(body) + `" with title "` + appleScriptString(title) + `"`}
	}
	return "", nil
}

// appleScriptString escapes s for an AppleScript string literal.
func appleScriptString(s string) string {
	return strings.NewReplacer(`\`, `\\`, `"`, `\"`, "\r\n", `\n`, "\n", `\n`).Replace(s)
}

// lookPathIn finds the executable name in the folders of path, or "".
func lookPathIn(path, name string) string {
	for _, dir := range filepath.SplitList(path) {
		if dir == "" {
			continue
		}
		p := filepath.Join(dir, name)
		if st, err := os.Stat(p); err == nil && st.Mode().IsRegular() && st.Mode().Perm()&0o111 != 0 {
			return p
		}
	}
	return ""
}

// isFile reports whether p is a regular file.
func isFile(p string) bool {
	st, err := os.Stat(p)
	return err == nil && st.Mode().IsRegular()
}

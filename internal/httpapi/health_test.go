package httpapi_test

import (
	"strings"
	"testing"

	"github.com/kk-project/kk/internal/httpapi"
)

// /healthz's reason is one line: kk's own reasons as they are, a git
// error cut to its meaningful line with kk's advice for git's.
func TestHealthReasonIsOneLine(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"", ""},
		{"waiting for /r/.git/index.lock, held by another git process since 2026-11-29T10:00:00Z (if none is running, remove the file)",
			"waiting for /r/.git/index.lock, held by another git process since 2026-11-29T10:00:00Z (if none is running, remove the file)"},
		{"git update-ref: fatal: cannot lock ref 'HEAD': Unable to create '/r/.git/refs/heads/main.lock': File exists.\n\nAnother git process seems to be running in this repository, e.g.\nan editor opened by 'git commit'.\nremove the file manually to continue.",
			"git update-ref: fatal: cannot lock ref 'HEAD': Unable to create '/r/.git/refs/heads/main.lock': File exists. (another git process holds this lock: kk serve waits for it; if no git command is running, remove the file; the server's log has git's whole message)"},
		{"recording the end of job 1: git gc: hint: a hint\nhint: another\nerror: the object store is damaged\nmore",
			"recording the end of job 1: git gc: hint: a hint error: the object store is damaged (kk serve tries again on its own; the server's log has git's whole message)"},
	} {
		got := httpapi.HealthReason(tc.in)
		if got != tc.want {
			t.Errorf("healthReason(%q)\n got %q\nwant %q", tc.in, got, tc.want)
		}
		if strings.Contains(got, "\n") {
			t.Errorf("healthReason(%q) is not one line", tc.in)
		}
	}
}

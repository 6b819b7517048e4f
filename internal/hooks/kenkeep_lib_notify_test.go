package hooks

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/kk-project/kk/internal/harness"
	"github.com/kk-project/kk/internal/session"
)

// Ported from kenkeep v1.17 tests/lib/notifications.test.ts and the
// notification cases of tests/lib/session-start.test.ts: session start
// shows one desktop notification holding every signal, unless config.yaml
// turns notifications off; a notifier that fails never fails the session.

func TestKenkeepLibNotifyCommand(t *testing.T) {
	name, args := notifyCommand("darwin", `kk: repo on host`, `say "hi" \ now`)
	if name != "osascript" || !slices.Equal(args, []string{"-e", `display notification "say \"hi\" \\ now" with title "kk: repo on host"`}) {
		t.Errorf("darwin: %s %q", name, args)
	}
	name, args = notifyCommand("linux", "kk: repo on host", "body")
	if name != "notify-send" || !slices.Equal(args, []string{"--app-name=kk", "kk: repo on host", "body"}) {
		t.Errorf("linux: %s %q", name, args)
	}
	if name, _ := notifyCommand("windows", "t", "b"); name != "" {
		t.Errorf("windows: %s, want no notification program", name)
	}
}

func TestKenkeepLibSessionStartNotifies(t *testing.T) {
	k := newKB(t)
	setConfig(t, k, "curationThreshold: 1\n")
	writeLog(t, k, 1, session.StatusPending, "")
	type shown struct{ title, body string }
	var got []shown
	start := func(notify Notifier) []string {
		t.Helper()
		r, warnings := request(k, harness.HookInput{})
		r.Notify = notify
		if out, err := SessionStart(context.Background(), r); err != nil || len(out) == 0 {
			t.Fatalf("session start: %q %v", out, err)
		}
		return *warnings
	}
	record := func(title, body string) error { got = append(got, shown{title, body}); return nil }

	start(record)
	host, _ := os.Hostname()
	project := filepath.Base(k.Root)
	if len(got) != 1 || got[0].title != "kk: "+project+" on "+host {
		t.Fatalf("notifications %+v, want one titled kk: %s on %s", got, project, host)
	}
	for _, want := range []string{"Project: " + project, "Host: " + host, "Path: " + k.Root, "wait for curation"} {
		if !strings.Contains(got[0].body, want) {
			t.Errorf("body %q lacks %q", got[0].body, want)
		}
	}

	// No signal (nudged within the hour): no notification.
	got = nil
	start(record)
	if len(got) != 0 {
		t.Errorf("notified with nothing to say: %+v", got)
	}

	// notifications.enabled: false turns them off.
	setConfig(t, k, "curationThreshold: 1\nnotifications:\n  enabled: false\n")
	writeFile(t, statePath(k), "{}")
	start(record)
	if len(got) != 0 {
		t.Errorf("notified with notifications off: %+v", got)
	}

	// A notifier that fails is a warning, never a failed session start.
	setConfig(t, k, "curationThreshold: 1\n")
	writeFile(t, statePath(k), "{}")
	if w := start(func(string, string) error { return errors.New("no display") }); len(w) != 1 || !strings.Contains(w[0], "notify: no display") {
		t.Errorf("warnings %q, want the notifier's failure", w)
	}
}

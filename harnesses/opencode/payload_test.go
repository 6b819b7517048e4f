package opencode

import (
	"path/filepath"
	"reflect"
	"testing"

	"github.com/kk-project/kk/internal/harness"
)

func TestParseHookInput(t *testing.T) {
	a := New()
	sid := "ses_3a9bX2kLmN8pQ4rS7tUvW1yZ0c"
	for file, want := range map[string]harness.HookInput{
		"session.created.json": {HarnessEvent: "session.created", SessionID: sid, CWD: "/home/dev/shop"},
		"session.idle.json":    {HarnessEvent: "session.idle", SessionID: sid, CWD: "/home/dev/shop"},
		"compacting.json":      {HarnessEvent: "experimental.session.compacting", SessionID: sid, CWD: "/home/dev/shop"},
	} {
		got, err := a.ParseHookInput(read(t, filepath.Join("testdata", "payloads", file)))
		if err != nil || got != want {
			t.Errorf("%s: %+v %v, want %+v", file, got, err, want)
		}
	}
	for _, bad := range []string{"", "{", "[]"} {
		if _, err := a.ParseHookInput([]byte(bad)); err == nil {
			t.Errorf("payload %q accepted", bad)
		}
	}
	// A session id of another type is an error for the hooks that read
	// it; the rest of the payload reads.
	got, err := a.ParseHookInput([]byte(`{"session_id": 7, "cwd": "/r", "opencode_bin": {"p": 1}}`))
	if err != nil || got.CWD != "/r" || got.Check(harness.UseCWD|harness.UsePrompt) != nil {
		t.Errorf("%+v %v", got, err)
	}
	if err := got.Check(harness.UseSessionID); err == nil || err.Error() != `hook payload field "session_id" is a number, want a string` {
		t.Errorf("session_id of another type: %v", err)
	}
	if err := got.Check(harness.UseBinary); err == nil || err.Error() != `hook payload field "opencode_bin" is an object, want a string` {
		t.Errorf("opencode_bin of another type: %v", err)
	}
}

func TestHookOutputAndDetect(t *testing.T) {
	a := New()
	for _, e := range harness.Events {
		if out, ok := a.HookOutput(e, "x"); ok || out != nil {
			t.Errorf("HookOutput(%s) = %q: OpenCode reads no hook output", e, out)
		}
	}
	if !a.Detect(env(map[string]string{"OPENCODE": "1"})) || a.Detect(env(map[string]string{"OPENCODE_PID": "1"})) || a.Detect(env(nil)) {
		t.Error("Detect")
	}
	if got := a.LaunchArgs("/kk-curate", harness.Model{}); !reflect.DeepEqual(got, []string{"run", "/kk-curate"}) {
		t.Errorf("LaunchArgs = %v", got)
	}
	var _ ContextWriter = a
	var _ TranscriptExporter = a
}

package cli

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/kk-project/kk/internal/harness"
	"github.com/kk-project/kk/internal/hooks"
	"github.com/kk-project/kk/internal/hooks/hookstest"
)

// The hook scripts (testdata/script/hook_*.txtar) drive `kk hook` with the
// fake harness of internal/hooks/hookstest (a payload, transcript and
// headless format of its own), registered as "hookfake". Setting
// KK_TEST_FAKE_HARNESS=1 adds it, so that other scripts keep their list
// of harnesses. KK_TEST_HOOK_DEADLINE (a
// duration) shortens every hook deadline. Both are read in the kk process
// the script starts, which runs this test binary's init.
func init() {
	prev := newHarnessRegistry
	newHarnessRegistry = func() *harness.Registry {
		r := prev()
		if os.Getenv("KK_TEST_FAKE_HARNESS") != "1" {
			return r
		}
		adapters := []harness.Adapter{&hookstest.Adapter{AdapterID: hookFake}}
		for _, id := range r.IDs() {
			a, err := r.Get(id)
			if err != nil {
				panic(err)
			}
			adapters = append(adapters, a)
		}
		reg, err := harness.NewRegistry(adapters...)
		if err != nil {
			panic(err)
		}
		return reg
	}
	if s := os.Getenv("KK_TEST_HOOK_DEADLINE"); s != "" {
		d, err := time.ParseDuration(s)
		if err != nil {
			panic(err)
		}
		hookOptions.Deadlines = map[harness.Event]time.Duration{}
		for _, ev := range harness.Events {
			hookOptions.Deadlines[ev] = d
		}
	}
}

// hookFake is the id of the hooks' fake harness in the scripts.
const hookFake = "hookfake"

// A hook always exits 0, whatever it is given, and says why in the hook
// error log; stdout stays empty.
func TestHookExitsZero(t *testing.T) {
	t.Setenv("KK_TEST_FAKE_HARNESS", "1")
	dir := t.TempDir()
	if code, _, errs := run(t, dir, "", "init"); code != 0 {
		t.Fatalf("init: %d %s", code, errs)
	}
	for _, args := range [][]string{
		{"hook"},
		{"hook", "a", "b", "--harness", hookFake},
		{"hook", "session-start", "--harness", hookFake, "--no-such-flag"},
		{"hook", "bogus", "--harness", hookFake},
		{"hook", "capture", "--harness", "nope"},
		{"hook", "capture", "--harness", hookFake},
		{"--json", "hook", "prompt-context", "--harness", hookFake, "--foreground=maybe"},
	} {
		code, out, errs := run(t, dir, "{not json", args...)
		if code != 0 || out != "" || errs != "" {
			t.Errorf("%v: exit %d, stdout %q, stderr %q", args, code, out, errs)
		}
	}
	logs, err := filepath.Glob(filepath.Join(dir, ".ai", "kenkeep", "_logs", "hook-errors-*.log"))
	if err != nil || len(logs) != 1 {
		t.Fatalf("logs %v %v", logs, err)
	}
	data, err := os.ReadFile(logs[0])
	if err != nil {
		t.Fatal(err)
	}
	var phases []string
	for _, line := range strings.Split(strings.TrimSpace(string(data)), "\n") {
		var d hooks.Diagnostic
		if err := json.Unmarshal([]byte(line), &d); err != nil {
			t.Fatalf("%q: %v", line, err)
		}
		phases = append(phases, d.Phase)
	}
	if got, want := strings.Join(phases, " "), "args args args event harness payload args"; got != want {
		t.Fatalf("phases %q, want %q\n%s", got, want, data)
	}
}

package hooks

import (
	"context"
	"os"
	"testing"
	"time"

	"github.com/kk-project/kk/internal/checks"
	"github.com/kk-project/kk/internal/harness"
)

func TestLintTick(t *testing.T) {
	k := newKB(t)
	setConfig(t, k, "lintEveryNSessions: 2\n")
	tick := func(now time.Time) *LintTickResult {
		t.Helper()
		r, _ := request(k, harness.HookInput{})
		r.Now = now
		res, err := LintTick(context.Background(), r)
		if err != nil {
			t.Fatal(err)
		}
		return res
	}
	if res := tick(t0); res.Ran || res.State.SessionsSinceLint != 1 {
		t.Fatalf("first tick: %+v", res)
	}
	if res := tick(t0); !res.Ran || res.State != (LintState{LastRunAt: "2026-05-20T08:30:00.000Z"}) {
		t.Fatalf("second tick: %+v", res)
	}
	// A note written by hand is a lint error (invalid-leaf), which the
	// next run stores and session-start reports.
	if err := os.WriteFile(k.NodePath("by-hand.md"), []byte("---\ntype: practice\ntitle: By hand\n---\nb\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	tick(t0)
	later := t0.Add(time.Hour)
	res := tick(later)
	rep, err := checks.Lint(context.Background(), k)
	if err != nil {
		t.Fatal(err)
	}
	if !res.Ran || res.State.LastErrors == 0 || res.State.LastErrors != rep.Errors || res.State.LastFindings != rep.Findings {
		t.Fatalf("tick after an error: %+v, lint %d/%d", res, rep.Errors, rep.Findings)
	}
	st, err := ReadLintState(k)
	if err != nil || st != res.State {
		t.Fatalf("stored %+v %v", st, err)
	}
	mustContain(t, sessionStartText(t, k, later), "The last lint run (2026-05-20T09:30:00.000Z) found")

	writeFile(t, lintStatePath(k), "{broken")
	r, warnings := request(k, harness.HookInput{})
	if res, err := LintTick(context.Background(), r); err != nil || res.State.SessionsSinceLint != 1 || len(*warnings) != 1 {
		t.Fatalf("broken state: %+v %v %v", res, err, *warnings)
	}
}

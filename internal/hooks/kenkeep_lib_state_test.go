package hooks

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/kk-project/kk/internal/harness"
	"github.com/kk-project/kk/internal/session"
)

// Ported from kenkeep v1.17 tests/lib/state.test.ts: a state.json an older
// kenkeep left with its obsolete "lock" object is still read (its
// last_nudged_at counts). kk keeps keys it does not know instead of
// dropping them; the lock object is never acted on.
func TestKenkeepLibStateWithObsoleteLock(t *testing.T) {
	k := newKB(t)
	setConfig(t, k, "curationThreshold: 1\n")
	writeLog(t, k, 1, session.StatusPending, "")
	writeFile(t, statePath(k), `{"schema_version":1,"last_nudged_at":"2026-05-20T08:00:00Z",`+
		`"lock":{"name":"curator","pid":99999,"acquired_at":"2020-01-01T00:00:00Z","ttl_ms":1800000}}`)
	const nudge = "captured session(s) wait for curation"
	// Nudged 30 minutes ago: the state is read, so no second nudge yet.
	mustNotContain(t, sessionStartText(t, k, t0), nudge)
	mustContain(t, sessionStartText(t, k, t0.Add(31*time.Minute)), nudge)
	var state map[string]any
	if err := json.Unmarshal([]byte(readFile(t, statePath(k))), &state); err != nil || state["last_nudged_at"] != "2026-05-20T09:01:00.000Z" {
		t.Fatalf("state.json after the nudge: %v %v", state, err)
	}
}

// Ported from kenkeep v1.17 tests/lib/lint-state.test.ts: a lint-state.json
// that does not parse, or that breaks its schema (a negative counter), counts
// as no state at all, so the tick starts counting again from zero.
func TestKenkeepLibLintStateFallsBackToDefaults(t *testing.T) {
	k := newKB(t)
	setConfig(t, k, "lintEveryNSessions: 50\n")
	for _, bad := range []string{
		"{not json",
		`{"schema_version":1,"sessions_since_last_lint":-3}`,
		`{"schema_version":1,"sessions_since_last_lint":1,"last_errors":-1}`,
		`{"schema_version":1,"sessions_since_last_lint":"x"}`,
	} {
		writeFile(t, lintStatePath(k), bad)
		if _, err := ReadLintState(k); err == nil {
			t.Errorf("ReadLintState(%s) succeeded, want an error", bad)
		}
		r, warnings := request(k, harness.HookInput{})
		res, err := LintTick(context.Background(), r)
		if err != nil || res.State != (LintState{SessionsSinceLint: 1}) || len(*warnings) != 1 {
			t.Errorf("tick over %s: %+v %v %v, want a count of 1 and a warning", bad, res, err, *warnings)
		}
	}
}

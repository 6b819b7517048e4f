package hooks

import (
	"context"
	"fmt"
	"github.com/kk-project/kk/internal/freshness"

	"github.com/kk-project/kk/internal/checks"
	"github.com/kk-project/kk/internal/session"
)

// LintTickResult says what a lint tick did.
type LintTickResult struct {
	// Ran is true when this tick ran lint.
	Ran   bool
	State LintState
}

// LintTick counts one session in .state/lint-state.json and, every
// config.lintEveryNSessions sessions, runs lint and stores its error and
// finding counts and time there; session-start mentions stored errors.
// Two sessions ticking at the same moment may count as one: the counter
// only paces an advisory check.
// FreshnessCommits is how much history the lint tick's freshness check
// reads, as kenkeep's session-start probe.
const FreshnessCommits = 500

func LintTick(ctx context.Context, r Request) (*LintTickResult, error) {
	k := r.KB
	cfg, err := k.LoadConfig()
	if err != nil {
		return nil, err
	}
	st, err := ReadLintState(k)
	if err != nil {
		r.warn("lint-state", fmt.Errorf("%w; starting the count again", err))
		st = LintState{}
	}
	st.SessionsSinceLint++
	res := &LintTickResult{}
	if st.SessionsSinceLint >= cfg.LintEveryNSessions {
		rep, err := checks.Lint(ctx, k)
		if err != nil {
			// Keep the count: the next session tries again.
			if werr := writeJSONFile(lintStatePath(k), st); werr != nil {
				r.warn("lint-state", werr)
			}
			return nil, fmt.Errorf("lint: %w", err)
		}
		st = LintState{LastRunAt: session.FormatTime(r.Now), LastErrors: rep.Errors, LastFindings: rep.Findings}
		res.Ran = true
		// With lint, the freshness of the nodes: session start reports
		// what this records (kenkeep probes the newest 500 commits).
		freshness.CheckAndRecord(ctx, k, freshness.Options{MaxCommits: FreshnessCommits}, r.Now)
	}
	if err := writeJSONFile(lintStatePath(k), st); err != nil {
		return nil, err
	}
	res.State = st
	return res, nil
}

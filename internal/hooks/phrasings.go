package hooks

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"time"

	"github.com/kk-project/kk/internal/index"
	"github.com/kk-project/kk/internal/session"
	"github.com/kk-project/kk/internal/store"
)

// nudgeMinLeaves is the fewest leaves for which session start suggests
// the backfill: below it, a person writes phrasings as fast as an agent's
// batch would.
const nudgeMinLeaves = 20

// phrasingsNudgedKey records in .state/state.json when session start last
// suggested the kk-phrasings backfill: it does so once, not every session.
const phrasingsNudgedKey = "phrasings_nudged_at"

// phrasingsNudge returns the note asking the agent to run the
// kk-phrasings backfill, when enough leaves lack phrasings (index.Low) and
// the note was never given, for a knowledge base of nudgeMinLeaves leaves
// or more; it then records that it gave it. The counts come from the
// current branch's index as last committed (no sync, no walk of the
// tree); without an index yet, or without a branch to name one, nothing
// is said this time.
func phrasingsNudge(ctx context.Context, k *store.KB, now time.Time) (string, error) {
	state, err := readNudgeState(k)
	if err != nil {
		return "", err
	}
	if _, done := state[phrasingsNudgedKey]; done {
		return "", nil
	}
	branch, err := index.CurrentBranch(ctx, k)
	if err != nil {
		return "", nil // the other notes report what keeps kk from naming it
	}
	if _, err := os.Stat(index.Path(k, branch)); errors.Is(err, fs.ErrNotExist) {
		return "", nil
	}
	db, err := index.OpenShared(ctx, k, branch)
	if err != nil {
		return "", err
	}
	p, err := db.PhrasingCounts(ctx)
	if err != nil || !p.Low() || p.Leaves < nudgeMinLeaves {
		return "", err
	}
	state[phrasingsNudgedKey] = session.FormatTime(now)
	if err := writeJSONFile(statePath(k), state); err != nil {
		return "", err
	}
	return p.Summary() + ", so a question asked in other words than a note's own may miss it. When the user has a moment, offer to run the kk-phrasings skill (/kk-phrasings), which writes them in batches; this note is shown once.", nil
}

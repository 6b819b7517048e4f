package curate

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/kk-project/kk/internal/atomicfile"
	"github.com/kk-project/kk/internal/contracts"
	"github.com/kk-project/kk/internal/node"
	"github.com/kk-project/kk/internal/session"
	"github.com/kk-project/kk/internal/store"
	"github.com/kk-project/kk/internal/txn"
)

// Dedup merges actions that would produce the same node. A drop, or an
// action without a proposed node, is keyed by its candidate origin (a
// later one replaces an earlier one); any other action by its target node
// id, or for an add by the id derived from the proposed type and title.
// Of two actions with the same key the one with the higher confidence
// stays (high > medium > low), the earlier one on a tie. The result keeps
// the order in which each key first appeared. A modify and a contradict
// aimed at the same node share a key, so only one of them survives.
func Dedup(actions []contracts.CuratorAction) []contracts.CuratorAction {
	index := map[string]int{}
	var out []contracts.CuratorAction
	for _, a := range actions {
		var key string
		replace := false
		switch {
		case a.Action == contracts.ActionDrop || a.ProposedNode == nil:
			key, replace = "drop:"+a.CandidateOrigin, true
		case a.TargetNodeID != nil:
			key = *a.TargetNodeID
		default:
			// A title with no id (refused later by persist) is its own key.
			if id, err := node.DeriveID(a.ProposedNode.Type, a.ProposedNode.Title); err == nil {
				key = id
			} else {
				key = "title:" + a.ProposedNode.Title
			}
		}
		i, seen := index[key]
		switch {
		case !seen:
			index[key] = len(out)
			out = append(out, a)
		case replace || rank(a) > rank(out[i]):
			out[i] = a
		}
	}
	return out
}

func rank(a contracts.CuratorAction) int {
	if a.ProposedNode == nil {
		return 0
	}
	switch a.ProposedNode.Confidence {
	case "high":
		return 3
	case "medium":
		return 2
	}
	return 1
}

// DedupOptions is one curate-dedup run.
type DedupOptions struct {
	// RunID names the run; it is checked with CheckRunID.
	RunID string
	// SessionID, when set, scopes the run to that one session: only its
	// log is stamped, and an action from another session is an error.
	SessionID string
	// SessionsDir and ConflictsDir default to the knowledge base's
	// _sessions/ and conflicts/.
	SessionsDir  string
	ConflictsDir string
	// Output, when set, receives the surviving actions as JSON.
	Output  string
	Now     time.Time
	Command string // recorded in the writer lock
}

// DedupResult is what a curate-dedup run did.
type DedupResult struct {
	Kept      int    `json:"kept"`
	Conflicts int    `json:"conflicts"`
	Stamped   int    `json:"stamped"`
	RunID     string `json:"runId"`
	// Survivors are the actions left for curate-persist.
	Survivors []contracts.CuratorAction `json:"-"`
}

// sessionOrigin matches a candidate origin that names a session candidate.
var sessionOrigin = regexp.MustCompile(`^([^:]+):(practice|map):([0-9]+)$`)

// RunDedup runs curate-dedup: it merges duplicate actions, writes each
// contradiction as a conflict file conflicts/<run>-<n>.md for a human to
// resolve, writes the remaining actions to opts.Output, and stamps the
// session logs the actions came from as curated by this run.
//
// Only the sessions the input consumed are stamped: those named by a
// session candidate origin (<session_id>:<practice|map>:<index>), and the
// extracted sessions that had no candidates at all, since there was
// nothing in them to curate. (kenkeep stamped every waiting session, so a
// session whose candidates the curator never saw was lost.) With
// opts.SessionID only that session is stamped.
//
// Everything is checked before anything is written: the input, the run
// id, that each origin's session exists, was extracted and was not
// consumed by another run, and that no conflict file of another candidate
// is in the way. Running again with the same run id and input writes the
// same files: existing conflict files of this run and stamps of this run
// are kept as they are.
func RunDedup(ctx context.Context, k *store.KB, actions []contracts.CuratorAction, opts DedupOptions) (*DedupResult, error) {
	if err := CheckRunID(opts.RunID); err != nil {
		return nil, err
	}
	scoped := ""
	if opts.SessionID != "" {
		id, err := session.CheckID(opts.SessionID)
		if err != nil {
			return nil, fmt.Errorf("--session-id: %w", err)
		}
		scoped = id
	}
	if opts.SessionsDir == "" {
		opts.SessionsDir = k.SessionsDir()
	}
	if opts.ConflictsDir == "" {
		opts.ConflictsDir = k.ConflictsDir()
	}
	merged := Dedup(actions)
	res := &DedupResult{RunID: opts.RunID, Survivors: []contracts.CuratorAction{}}
	type plannedConflict struct {
		path string
		data []byte
	}
	var conflicts []plannedConflict
	at := session.FormatTime(opts.Now)
	for _, a := range merged {
		if a.Action != contracts.ActionContradict {
			res.Survivors = append(res.Survivors, a)
			continue
		}
		id := opts.RunID + "-" + strconv.Itoa(len(conflicts)+1)
		data, err := RenderConflict(Conflict{ID: id, RunID: opts.RunID, DetectedAt: at, Action: a})
		if err != nil {
			return nil, err
		}
		conflicts = append(conflicts, plannedConflict{path: filepath.Join(opts.ConflictsDir, id+".md"), data: data})
	}
	res.Kept, res.Conflicts = len(res.Survivors), len(conflicts)
	// Markdown bodies are full of <, > and &: keep them as they are.
	var survivors bytes.Buffer
	enc := json.NewEncoder(&survivors)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(res.Survivors); err != nil {
		return nil, err
	}

	_, err := txn.Update(ctx, k, txn.Meta{Source: "cli", Command: opts.Command}, func(tx *txn.Tx) error {
		stamps, err := sessionsToStamp(actions, opts.SessionsDir, scoped, opts.RunID)
		if err != nil {
			return err
		}
		res.Stamped = len(stamps)
		var outside []plannedConflict // a --conflicts-dir outside the knowledge base
		for _, c := range conflicts {
			keep, err := keepConflict(c.path, c.data)
			if err != nil {
				return err
			}
			if keep {
				continue
			}
			if rel, err := filepath.Rel(k.Dir, c.path); err == nil && filepath.IsLocal(rel) {
				tx.WriteFile(filepath.ToSlash(rel), c.data)
			} else {
				outside = append(outside, c)
			}
		}
		if opts.Output != "" {
			if fi, err := os.Stat(filepath.Dir(opts.Output)); err != nil || !fi.IsDir() {
				return fmt.Errorf("--output %s: its folder does not exist", opts.Output)
			}
		}
		// Checks are done. The conflict files are part of the changeset;
		// the survivors file and the session stamps follow its commit,
		// under the same lock. A run stopped between the two stamps nothing,
		// and running it again finds its conflict files in place.
		tx.AfterCommit(func(*txn.Result) error {
			if opts.Output != "" {
				if err := atomicfile.Write(opts.Output, survivors.Bytes(), 0o644); err != nil {
					return err
				}
			}
			for _, c := range outside {
				if err := os.MkdirAll(filepath.Dir(c.path), 0o755); err != nil {
					return err
				}
				if err := atomicfile.Write(c.path, c.data, 0o644); err != nil {
					return err
				}
			}
			for _, l := range stamps {
				if l.CuratorRunID == opts.RunID && l.CuratorProcessedAt != "" {
					continue // stamped by an earlier attempt of this run
				}
				if err := session.Stamp(l.Path, opts.RunID, opts.Now); err != nil {
					return fmt.Errorf("stamping %s: %w", l.Name, err)
				}
			}
			return nil
		})
		return nil
	})
	if err != nil {
		return nil, err
	}
	return res, nil
}

// sessionsToStamp works out which session logs the run consumed and checks
// that each may be stamped by run runID.
func sessionsToStamp(actions []contracts.CuratorAction, dir, scoped, runID string) ([]*session.Log, error) {
	logs, _, err := session.List(dir)
	if err != nil {
		return nil, err
	}
	// The log of a session is the first file, by name, ending in -<id>.md.
	byName := slices.Clone(logs)
	slices.SortFunc(byName, func(a, b *session.Log) int { return strings.Compare(a.Name, b.Name) })
	byID := map[string]*session.Log{}
	for _, l := range byName {
		if _, dup := byID[l.SessionID]; !dup {
			byID[l.SessionID] = l
		}
	}
	unknown := func(what, id string) error {
		if name, ok, _ := session.Find(dir, id); ok {
			if _, err := session.Read(filepath.Join(dir, name)); err != nil {
				return fmt.Errorf("%s names session %s, whose log cannot be read: %w", what, id, err)
			}
		}
		return fmt.Errorf("%s names session %s, which has no log in %s", what, id, dir)
	}
	want := map[string]bool{}
	if scoped != "" {
		if byID[scoped] == nil {
			return nil, unknown("--session-id", scoped)
		}
		want[scoped] = true
	}
	for i, a := range actions {
		m := sessionOrigin.FindStringSubmatch(a.CandidateOrigin)
		if m == nil {
			continue
		}
		l := byID[m[1]]
		if l == nil {
			if session.IsUUID(m[1]) {
				return nil, unknown(fmt.Sprintf("/%d/candidate_origin %q", i, a.CandidateOrigin), m[1])
			}
			continue // not a session origin (a document path with colons, say)
		}
		if scoped != "" && l.SessionID != scoped {
			return nil, fmt.Errorf("/%d/candidate_origin %q: comes from session %s, but this run is scoped to session %s with --session-id", i, a.CandidateOrigin, l.SessionID, scoped)
		}
		if n, err := strconv.Atoi(m[3]); err != nil || n >= l.Candidates(m[2]) {
			return nil, fmt.Errorf("/%d/candidate_origin %q: session %s has %d %s candidate(s), numbered from 0", i, a.CandidateOrigin, l.SessionID, l.Candidates(m[2]), m[2])
		}
		want[l.SessionID] = true
	}
	if scoped == "" {
		// Extracted sessions without candidates were consumed too: there
		// is nothing in them for any curator to see.
		for _, l := range logs {
			if l.ProposalStatus == session.StatusDone && l.Practice+l.Map == 0 &&
				(l.CuratorProcessedAt == "" || l.CuratorRunID == runID) && byID[l.SessionID] == l {
				want[l.SessionID] = true
			}
		}
	}
	var out []*session.Log
	for _, l := range logs { // sorted by captured_at
		if !want[l.SessionID] || byID[l.SessionID] != l {
			continue
		}
		switch {
		case l.ProposalStatus != session.StatusDone:
			return nil, fmt.Errorf("session %s (%s) has proposal_status %s; only extracted (done) sessions can be curated", l.SessionID, l.Name, l.ProposalStatus)
		case l.CuratorProcessedAt != "" && l.CuratorRunID != runID:
			return nil, fmt.Errorf("session %s (%s) was already curated by run %s at %s; leave its candidates out, or stage it again", l.SessionID, l.Name, l.CuratorRunID, l.CuratorProcessedAt)
		}
		out = append(out, l)
	}
	return out, nil
}

// keepConflict reports whether the conflict file at path already records
// the same contradiction (an earlier attempt of the same run), in which
// case it is left as it is. A file there about anything else is an error.
func keepConflict(path string, data []byte) (bool, error) {
	cur, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	have, err := ParseConflict(filepath.Base(path), cur)
	if err != nil {
		return false, fmt.Errorf("%s exists and is not a conflict file kk can read (%v); choose another --run-id", path, err)
	}
	want, err := ParseConflict(filepath.Base(path), data)
	if err != nil {
		return false, err
	}
	if have.RunID != want.RunID || have.CandidateOrigin != want.CandidateOrigin || !equalPtr(have.TargetNodeID, want.TargetNodeID) {
		return false, fmt.Errorf("%s already records candidate %s of run %s; choose another --run-id", path, have.CandidateOrigin, have.RunID)
	}
	return true, nil
}

func equalPtr(a, b *string) bool {
	if a == nil || b == nil {
		return a == b
	}
	return *a == *b
}

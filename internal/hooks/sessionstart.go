package hooks

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"github.com/kk-project/kk/internal/freshness"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/kk-project/kk/internal/frontmatter"
	"github.com/kk-project/kk/internal/harness"
	"github.com/kk-project/kk/internal/index"
	"github.com/kk-project/kk/internal/indexfiles"
	"github.com/kk-project/kk/internal/node"
	"github.com/kk-project/kk/internal/session"
	"github.com/kk-project/kk/internal/store"
)

// snapshotNote follows the knowledge base in the session-start context.
const snapshotNote = "These notes are snapshots in time: each one describes the project as it was when it was " +
	"written. Check a note against the current code before relying on it, and trust the code when they disagree."

// notesHeader opens the notes kk adds for the user after ENTRY.md.
const notesHeader = "kk notes for the user (mention them when relevant):"

// emptyEntry stands in for a missing ENTRY.md.
const emptyEntry = "# kenkeep\n\nThis project's knowledge base (.ai/kenkeep) has no ENTRY.md yet; `kk index rebuild` generates it from the nodes."

// SessionStart builds the session-start context and renders it for the
// harness; nil when the harness has no channel for it.
func SessionStart(ctx context.Context, r Request) ([]byte, error) {
	if err := markSessionStart(r); err != nil {
		r.warn("session-mark", err) // only the end-of-turn graph hint needs it
	}
	text, notes, err := sessionStartContext(ctx, r, func(text string) {
		// ENTRY.md and the snapshot note are the context itself; the
		// notes for the user come after. A machine too busy to finish
		// them before the deadline still gives the session its context.
		if r.Offer == nil {
			return
		}
		if out, ok := r.Adapter.HookOutput(harness.SessionStart, text); ok {
			r.Offer(out)
		}
	})
	if err != nil {
		return nil, err
	}
	if len(notes) > 0 && r.Notify != nil {
		if cfg, err := r.KB.LoadConfig(); err != nil || cfg.Notifications.On() {
			r.warn("notify", r.Notify(notification(r.KB.Root, notes)))
		}
	}
	out, ok := r.Adapter.HookOutput(harness.SessionStart, text)
	if !ok {
		if cw, can := r.Adapter.(harness.ContextWriter); can {
			return nil, cw.WriteContext(r.KB.Root, text)
		}
		return nil, nil
	}
	return out, nil
}

// SessionStartContext returns the text session-start gives the model: the
// body of ENTRY.md, the snapshot note, and notes for the user when the
// index is stale (as the branch index's last sync found the leaves),
// when enough sessions wait for curation (at most once per NudgeInterval)
// and when the last lint run found errors.
func SessionStartContext(ctx context.Context, r Request) (string, error) {
	text, _, err := sessionStartContext(ctx, r, nil)
	return text, err
}

// sessionStartContext is SessionStartContext; early, when set, gets the
// context without the notes for the user as soon as ENTRY.md is read.
func sessionStartContext(ctx context.Context, r Request, early func(text string)) (string, []string, error) {
	k := r.KB
	var notes []string
	body, entryHash, hasEntry, err := readEntry(k)
	var conflict *entryConflictError
	if errors.As(err, &conflict) {
		// The session that has to finish the merge still starts with kk.
		body, err = withDirective(conflictEntry), nil
		notes = append(notes, conflict.note())
	}
	if err != nil {
		return "", nil, err
	}
	if early != nil {
		early(entryContext(body, nil))
	}
	if hasEntry {
		// Whether ENTRY.md matches the leaves is what the branch index
		// recorded at its last sync: one row, whatever the tree's size.
		// A summary older than backgroundSyncEvery (or none) starts a
		// background sync, so that the next session reads a fresh one.
		sum, err := index.ReadSummary(ctx, k)
		switch {
		case err != nil:
			r.warn("staleness", err)
		case sum.Known && sum.Invalid > 0:
			notes = append(notes, fmt.Sprintf("The knowledge tree has %d leaf file(s) kk cannot read and skips; `kk lint` lists their problems, and `kk node adopt` fixes a note written by hand.", sum.Invalid))
		case entryHash == "":
			notes = append(notes, "ENTRY.md records no nodes_hash, so it may not match the nodes; running `kk index rebuild` regenerates it.")
		case sum.Known && entryHash != sum.Hash:
			notes = append(notes, "The knowledge index is out of date: nodes changed since ENTRY.md was generated. Running `kk index rebuild` refreshes it.")
		}
		if err == nil && r.Executable != nil && (!sum.Known || time.Since(sum.Synced) > r.opts().BackgroundSyncEvery) {
			r.warn("sync", startBackgroundSync(r))
		}
	}
	if err := ctx.Err(); err != nil {
		return "", nil, err
	}
	cfg, err := k.LoadConfig()
	if err != nil {
		notes = append(notes, fmt.Sprintf("config.yaml could not be read (%v): until it is fixed, kk's writes, searches and prompt context stop (its settings decide what they index and check); `kk doctor` names the problem.", err))
		cfg = store.DefaultConfig()
	}
	if note, err := curationNudge(k, cfg, r.Now, r.opts().NudgeInterval); err != nil {
		r.warn("nudge", err)
	} else if note != "" {
		notes = append(notes, note)
	}
	if note, err := phrasingsNudge(ctx, k, r.Now); err != nil {
		r.warn("phrasings", err)
	} else if note != "" {
		notes = append(notes, note)
	}
	if fr, err := freshness.LastRecorded(k); err != nil {
		r.warn("freshness", err)
	} else if fr != nil && fr.Available && fr.FlaggedCount > 0 {
		notes = append(notes, fmt.Sprintf("When last checked (%s), %d knowledge node(s) described code that has changed since they were written (%s); `kk freshness` lists them, and a node worth keeping is rewritten with `kk node write --update`.",
			fr.CheckedAt, fr.FlaggedCount, strings.Join(fr.Flagged, ", ")))
	}
	if st, err := ReadLintState(k); err != nil {
		r.warn("lint-state", err)
	} else if st.LastErrors > 0 {
		when := ""
		if st.LastRunAt != "" {
			when = " (" + st.LastRunAt + ")"
		}
		notes = append(notes, fmt.Sprintf("The last lint run%s found %d error(s) in the knowledge base; `kk lint` lists them.", when, st.LastErrors))
	}
	return entryContext(body, notes), notes, nil
}

// entryContext is the session-start context: ENTRY.md's body, the
// snapshot note, and the notes for the user.
func entryContext(body string, notes []string) string {
	var b strings.Builder
	b.WriteString(body)
	b.WriteString("\n\n")
	b.WriteString(snapshotNote)
	b.WriteString("\n")
	if len(notes) > 0 {
		b.WriteString("\n" + notesHeader + "\n")
		for _, n := range notes {
			b.WriteString("- " + n + "\n")
		}
	}
	return b.String()
}

// readEntry returns ENTRY.md's body (front matter stripped, trimmed) and
// its nodes_hash without the "sha256:" prefix. A missing ENTRY.md gives a
// stand-in body and ok false.
func readEntry(k *store.KB) (body, hash string, ok bool, err error) {
	file := k.EntryPath()
	src, err := os.ReadFile(file)
	if errors.Is(err, fs.ErrNotExist) {
		// A knowledge base kenkeep wrote before ENTRY.md (schema 2) has
		// its catalog in INDEX.md, which kenkeep's session start reads too.
		file = filepath.Join(filepath.Dir(file), indexfiles.LegacyCatalog)
		src, err = os.ReadFile(file)
		if errors.Is(err, fs.ErrNotExist) {
			return withDirective(emptyEntry), "", false, nil
		}
	}
	if err != nil {
		return "", "", false, err
	}
	if from, to := node.ConflictMarkers(src); from > 0 {
		return "", "", false, &entryConflictError{file: k.Rel(file), from: from, to: to}
	}
	doc, err := frontmatter.Parse(src)
	if err != nil {
		return "", "", false, fmt.Errorf("%s: %s", k.Rel(file), frontmatter.Describe(err))
	}
	if v, found := doc.Value("nodes_hash"); found {
		s, _ := v.(string)
		hash = strings.TrimPrefix(s, "sha256:")
	}
	body = strings.TrimSpace(string(doc.Body()))
	if body == "" {
		body = emptyEntry
	}
	return withDirective(body), hash, true, nil
}

// conflictEntry stands in for an ENTRY.md that holds git's conflict
// markers (a merge stopped on it).
const conflictEntry = "# kenkeep\n\nThis project's knowledge base is in the middle of a git merge: its ENTRY.md holds conflict markers. The notes are under .ai/kenkeep/nodes/ (each folder's index.md lists its notes; `kk search <words>` finds them)."

// entryConflictError is an ENTRY.md holding git's conflict markers.
type entryConflictError struct {
	file     string
	from, to int
}

func (e *entryConflictError) Error() string {
	return fmt.Sprintf("%s %s (lines %d to %d)", e.file, node.ConflictMarkersMsg, e.from, e.to)
}

// note is what session-start tells the user about it.
func (e *entryConflictError) note() string {
	return fmt.Sprintf("ENTRY.md holds git conflict markers (lines %d to %d): a merge stopped on it. It is generated from the notes: resolve the conflicts in the notes, run `kk index rebuild` to write it again, then `git add` it.", e.from, e.to)
}

// withDirective returns body with the navigation directive after it,
// unless it has one already (kk's, or kenkeep's "> kenkeep navigation:"):
// the session always starts with the directive exactly once, as kenkeep's
// does, even from a catalog written by hand or by an older tool.
func withDirective(body string) string {
	for _, line := range strings.Split(body, "\n") {
		if strings.HasPrefix(line, "> kk navigation:") || strings.HasPrefix(line, "> kenkeep navigation:") {
			return body
		}
	}
	return body + "\n\n" + indexfiles.NavigationDirective
}

// curationNudge returns the curation note when the backlog (logs pending
// extraction or extracted, and not curated) reaches the threshold and no
// nudge was given within NudgeInterval; it then records the time.
func curationNudge(k *store.KB, cfg store.Config, now time.Time, interval time.Duration) (string, error) {
	backlog, err := curationBacklog(k.SessionsDir())
	if err != nil || backlog < cfg.CurationThreshold {
		return "", err
	}
	state, err := readNudgeState(k)
	if err != nil {
		return "", err
	}
	if s, ok := state["last_nudged_at"].(string); ok {
		if last, err := time.Parse(time.RFC3339Nano, s); err == nil && now.Sub(last) < interval && !now.Before(last) {
			return "", nil
		}
	}
	state["last_nudged_at"] = session.FormatTime(now)
	if err := writeJSONFile(statePath(k), state); err != nil {
		return "", err
	}
	return fmt.Sprintf("%d captured session(s) wait for curation (the threshold is %d). Running /kk-curate turns them into reviewed knowledge.", backlog, cfg.CurationThreshold), nil
}

// curationBacklog counts the session logs waiting for curation, reading
// only the two keys it needs from their front matter.
func curationBacklog(dir string) (int, error) {
	n := 0
	err := eachLogState(dir, func(q queueState) bool {
		if (q.status == session.StatusPending || q.status == session.StatusDone) && !q.curated {
			n++
		}
		return true
	})
	return n, err
}

// queueState is where a session log is in the extraction and curation
// queues.
type queueState struct {
	status  string // proposal_status
	curated bool   // curator_processed_at is set
}

// eachLogState calls fn with the queue state of every session log in dir
// (files *.md not starting with a dot), in name order, until fn returns
// false. Files that are not session logs are skipped.
func eachLogState(dir string, fn func(queueState) bool) error {
	entries, err := os.ReadDir(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	for _, e := range entries {
		name := e.Name()
		if !e.Type().IsRegular() || strings.HasPrefix(name, ".") || !strings.HasSuffix(name, ".md") {
			continue
		}
		q, ok := readQueueState(filepath.Join(dir, name))
		if ok && !fn(q) {
			return nil
		}
	}
	return nil
}

// maxHead bounds how much of a session log readQueueState reads.
const maxHead = 1 << 20

// readQueueState reads proposal_status and curator_processed_at from the
// top-level lines of a log's front matter, without parsing the YAML or
// reading the transcript: session-start does this for every log. Values
// may be plain or quoted, as the several writers of these files leave
// them. ok is false when the file has no front matter or no valid status.
func readQueueState(path string) (q queueState, ok bool) {
	f, err := os.Open(path)
	if err != nil {
		return q, false
	}
	defer func() { _ = f.Close() }()
	r := bufio.NewReader(io.LimitReader(f, maxHead))
	for i := 0; ; i++ {
		line, err := r.ReadString('\n')
		trimmed := strings.TrimRight(line, " \t\r\n")
		if i == 0 {
			trimmed = strings.TrimPrefix(trimmed, "\uFEFF")
			if trimmed != "---" {
				return q, false
			}
		} else if trimmed == "---" {
			return q, slices.Contains(session.Statuses, q.status)
		} else if key, value, found := strings.Cut(trimmed, ":"); found && key != "" && key[0] != ' ' && key[0] != '\t' {
			switch key {
			case "proposal_status":
				q.status = scalar(value)
			case "curator_processed_at":
				q.curated = scalar(value) != ""
			}
		}
		if err != nil {
			return q, false
		}
	}
}

// scalar decodes a one-line YAML scalar as the session-log writers write
// them: plain, 'single' or "double" quoted; null and ~ are empty.
func scalar(v string) string {
	v = strings.TrimSpace(v)
	if i := strings.Index(v, " #"); i >= 0 && v[0] != '\'' && v[0] != '"' {
		v = strings.TrimSpace(v[:i])
	}
	switch {
	case len(v) >= 2 && v[0] == '\'' && v[len(v)-1] == '\'':
		return strings.ReplaceAll(v[1:len(v)-1], "''", "'")
	case len(v) >= 2 && v[0] == '"' && v[len(v)-1] == '"':
		return v[1 : len(v)-1]
	case v == "null" || v == "~" || v == "Null" || v == "NULL":
		return ""
	}
	return v
}

package hooks

import (
	"bufio"
	"bytes"
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
	"syscall"
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
		if out, ok := r.hookOutput(harness.SessionStart, text); ok {
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
	out, ok := r.hookOutput(harness.SessionStart, text)
	if !ok {
		if cw, can := r.Adapter.(harness.ContextWriter); can {
			return nil, cw.WriteContext(r.KB.Root, harness.Defang(text))
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
	var unreadable *entryUnreadableError
	switch {
	case errors.As(err, &conflict):
		// The session that has to finish the merge still starts with kk.
		body, err = withDirective(conflictEntry), nil
		notes = append(notes, conflict.note())
	case errors.As(err, &unreadable):
		body, err = withDirective(emptyEntry), nil
		notes = append(notes, unreadable.note())
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
	src, err := readCatalog(file)
	if errors.Is(err, fs.ErrNotExist) {
		// A knowledge base kenkeep wrote before ENTRY.md (schema 2) has
		// its catalog in INDEX.md, which kenkeep's session start reads too.
		file = filepath.Join(filepath.Dir(file), indexfiles.LegacyCatalog)
		src, err = readCatalog(file)
		if errors.Is(err, fs.ErrNotExist) {
			return withDirective(emptyEntry), "", false, nil
		}
	}
	var unreadable *entryUnreadableError
	if errors.As(err, &unreadable) {
		unreadable.file = k.Rel(file)
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

// maxEntryBytes bounds the catalog session-start reads.
const maxEntryBytes = 16 << 20

// readCatalog reads the catalog at path, which must be a regular file (a
// link to one counts) of at most maxEntryBytes: a named pipe would hold
// the call to its deadline and a device such as /dev/zero would never
// end. Either is an *entryUnreadableError.
func readCatalog(path string) ([]byte, error) {
	fi, err := os.Stat(path)
	if err != nil {
		return nil, err
	}
	if !fi.Mode().IsRegular() {
		return nil, &entryUnreadableError{problem: "is not a regular file (a named pipe, a device or a socket)"}
	}
	// O_NONBLOCK: should the path have become a named pipe since the
	// Stat, the open does not wait for a writer.
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, err
	}
	defer func() { _ = f.Close() }()
	if fi, err = f.Stat(); err != nil {
		return nil, err
	}
	if !fi.Mode().IsRegular() {
		return nil, &entryUnreadableError{problem: "is not a regular file (a named pipe, a device or a socket)"}
	}
	src, err := io.ReadAll(io.LimitReader(f, maxEntryBytes+1))
	if err != nil {
		return nil, err
	}
	if len(src) > maxEntryBytes {
		return nil, &entryUnreadableError{problem: fmt.Sprintf("is over %d MiB", maxEntryBytes>>20)}
	}
	return src, nil
}

// entryUnreadableError is a catalog readCatalog does not read.
type entryUnreadableError struct {
	file, problem string
}

func (e *entryUnreadableError) Error() string { return e.file + " " + e.problem }

func (e *entryUnreadableError) note() string {
	return fmt.Sprintf("%s %s, so kk did not read it: it is generated from the notes, so remove it and run `kk index rebuild` to write it again.", e.file, e.problem)
}

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
//
// It reads no more session logs than the answer needs: none when a nudge
// was given within the interval, or when the folder holds fewer logs than
// the threshold; and it stops once the logs left could no longer bring
// the backlog to the threshold. A project that has captured for long has
// thousands of curated logs, and session-start ran for every session.
func curationNudge(k *store.KB, cfg store.Config, now time.Time, interval time.Duration) (string, error) {
	if nudgedWithin(k, now, interval) {
		return "", nil
	}
	backlog, err := curationBacklog(k.SessionsDir(), cfg.CurationThreshold)
	if err != nil || backlog < cfg.CurationThreshold {
		return "", err
	}
	state, err := readNudgeState(k)
	if err != nil {
		return "", err
	}
	if recent(state, now, interval) {
		return "", nil
	}
	state["last_nudged_at"] = session.FormatTime(now)
	if err := writeJSONFile(statePath(k), state); err != nil {
		return "", err
	}
	return fmt.Sprintf("%d captured session(s) wait for curation (the threshold is %d). Running /kk-curate turns them into reviewed knowledge.", backlog, cfg.CurationThreshold), nil
}

// nudgedWithin reports whether state.json, read as it is, records a nudge
// within interval before now. A state that cannot be read says no: the
// backlog is counted, and readNudgeState deals with the state if the
// backlog calls for a nudge.
func nudgedWithin(k *store.KB, now time.Time, interval time.Duration) bool {
	state := map[string]any{}
	return readJSONFile(k, statePath(k), &state) == nil && recent(state, now, interval)
}

// recent reports whether state's last_nudged_at is within interval
// before now.
func recent(state map[string]any, now time.Time, interval time.Duration) bool {
	s, ok := state["last_nudged_at"].(string)
	if !ok {
		return false
	}
	last, err := time.Parse(time.RFC3339Nano, s)
	return err == nil && now.Sub(last) < interval && !now.Before(last)
}

// curationBacklog counts the session logs waiting for curation, reading
// only the two keys it needs from their front matter. The count is exact
// when it reaches threshold; below it, it may be any count below: no log
// is read when there are fewer than threshold, and the count stops once
// the logs not read yet could not bring it to threshold.
func curationBacklog(dir string, threshold int) (int, error) {
	names, err := logNames(dir)
	if err != nil || len(names) < threshold {
		return 0, err
	}
	n := 0
	for i, name := range names {
		if n+len(names)-i < threshold {
			break
		}
		if q, ok := readLogState(filepath.Join(dir, name)); ok && (q.status == session.StatusPending || q.status == session.StatusDone) && !q.curated {
			n++
		}
	}
	return n, nil
}

// queueState is where a session log is in the extraction and curation
// queues.
type queueState struct {
	status  string // proposal_status
	curated bool   // curator_processed_at is set
}

// logNames lists the session logs in dir: files *.md not starting with a
// dot, in name order (the order they were captured in). A missing folder
// holds none.
func logNames(dir string) ([]string, error) {
	entries, err := os.ReadDir(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	names := make([]string, 0, len(entries))
	for _, e := range entries {
		name := e.Name()
		if e.Type().IsRegular() && !strings.HasPrefix(name, ".") && strings.HasSuffix(name, ".md") {
			names = append(names, name)
		}
	}
	return names, nil
}

// readLogState is readQueueState; tests count the logs read through it.
var readLogState = readQueueState

// maxHead bounds how much of a session log readQueueState reads.
const maxHead = 1 << 20

// headChunk is how much of a session log readQueueState reads first, in
// one read: the front matter of every log kk or kenkeep writes fits.
const headChunk = 4096

// readQueueState reads proposal_status and curator_processed_at from the
// top-level lines of a log's front matter, without parsing the YAML or
// reading the transcript: session-start does this for many logs. Values
// may be plain or quoted, as the several writers of these files leave
// them. ok is false when the file has no front matter or no valid status.
//
// It reads the first headChunk bytes with one read (readHead: on Unix an
// open, a read and a close, nothing more), and streams the file only
// when the front matter goes on past them.
func readQueueState(path string) (q queueState, ok bool) {
	var buf [headChunk]byte
	n, eof, err := readHead(path, buf[:])
	if err != nil {
		return q, false
	}
	if q, ok, decided := parseQueueHead(buf[:n], eof); decided {
		return q, ok
	}
	return streamQueueState(path)
}

// parseQueueHead is readQueueState over the first bytes of a log; eof
// says they are the whole file. decided is false when the front matter
// goes on past them.
func parseQueueHead(data []byte, eof bool) (q queueState, ok, decided bool) {
	for i := 0; ; i++ {
		nl := bytes.IndexByte(data, '\n')
		if nl < 0 && !eof {
			return q, false, false
		}
		var line []byte
		if nl < 0 {
			line, data = data, nil
		} else {
			line, data = data[:nl], data[nl+1:]
		}
		if done, ok := queueLine(&q, i, string(line)); done {
			return q, ok, true
		}
		if nl < 0 {
			return q, false, true
		}
	}
}

// streamQueueState is readQueueState reading the file line by line, up to
// maxHead bytes.
func streamQueueState(path string) (q queueState, ok bool) {
	f, err := os.Open(path)
	if err != nil {
		return q, false
	}
	defer func() { _ = f.Close() }()
	r := bufio.NewReader(io.LimitReader(f, maxHead))
	for i := 0; ; i++ {
		line, err := r.ReadString('\n')
		if done, ok := queueLine(&q, i, line); done {
			return q, ok
		}
		if err != nil {
			return q, false
		}
	}
}

// queueLine takes line i (0-based) of a log's front matter into q; done
// says the answer is known, ok being readQueueState's.
func queueLine(q *queueState, i int, line string) (done, ok bool) {
	trimmed := strings.TrimRight(line, " \t\r\n")
	if i == 0 {
		trimmed = strings.TrimPrefix(trimmed, "\uFEFF")
		if trimmed != "---" {
			return true, false
		}
	} else if trimmed == "---" {
		return true, slices.Contains(session.Statuses, q.status)
	} else if key, value, found := strings.Cut(trimmed, ":"); found && key != "" && key[0] != ' ' && key[0] != '\t' {
		switch key {
		case "proposal_status":
			q.status = scalar(value)
		case "curator_processed_at":
			q.curated = scalar(value) != ""
		}
	}
	return false, false
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

// Package session reads and writes captured session logs: the markdown
// files under .ai/kenkeep/_sessions/ that hold a slice of an agent
// session's transcript and, once extracted, the knowledge candidates
// found in it. The curation primitives read them to know what is waiting
// and stamp them once curated.
//
// The format is kenkeep's: a file named YYYYMMDD-HHmm-<session_id>.md
// (UTC time of the first capture), front matter with schema_version,
// session_id, captured_by, captured_at, transcript_hash, proposal_status,
// proposal_completed_at, proposal_error, proposal_log and proposals, then
// optional curator_processed_at and curator_run_id, and a body with a
// "## Transcript" and a "## Proposal" section. Several writers produce
// these files and quote values differently, so reading is tolerant:
// only session_id, captured_at and proposal_status must be present.
package session

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/kk-project/kk/internal/contracts"
	"github.com/kk-project/kk/internal/frontmatter"
	"github.com/kk-project/kk/internal/store"
)

// Proposal statuses: where a log is in the extraction queue.
const (
	StatusPending = "pending" // waiting for extraction
	StatusDone    = "done"    // candidates extracted into the front matter
	StatusFailed  = "failed"  // extraction failed; proposal_error says why
	StatusSkipped = "skipped" // nothing worth extracting (a cursory session)
)

// Statuses lists the proposal statuses.
var Statuses = []string{StatusPending, StatusDone, StatusFailed, StatusSkipped}

// Capture triggers: what wrote the log.
const (
	CapturedByStop       = "stop"
	CapturedBySessionEnd = "session_end"
	CapturedByPreCompact = "pre_compact"
	CapturedByManual     = "manual"
)

// Front matter keys of a session log, in the order kk writes them.
const (
	keySchemaVersion       = "schema_version"
	keySessionID           = "session_id"
	keyCapturedBy          = "captured_by"
	keyCapturedAt          = "captured_at"
	keyTranscriptHash      = "transcript_hash"
	keyProposalStatus      = "proposal_status"
	keyProposalCompletedAt = "proposal_completed_at"
	keyProposalError       = "proposal_error"
	keyProposalLog         = "proposal_log"
	keyProposals           = "proposals"
	keyCuratorProcessedAt  = "curator_processed_at"
	keyCuratorRunID        = "curator_run_id"
)

// Body lines of the "## Proposal" section before and after extraction.
const (
	proposalPlaceholder = "(populated by proposal worker)"
	proposalComplete    = "_Extraction complete; see proposals in frontmatter._"
)

// TimeLayout is how session logs (and conflict files) write timestamps:
// ISO 8601 in UTC with milliseconds, as JavaScript's toISOString does.
const TimeLayout = "2006-01-02T15:04:05.000Z"

// FormatTime renders t in TimeLayout.
func FormatTime(t time.Time) string { return t.UTC().Format(TimeLayout) }

// Log is one parsed session log.
type Log struct {
	// Path is the file's path; Name its base name.
	Path string
	Name string

	SessionID      string
	CapturedBy     string
	CapturedAt     string
	TranscriptHash string
	ProposalStatus string
	// ProposalError is empty when the log has none.
	ProposalError string
	// ProposalLog is the extraction run's trace, relative to .ai/kenkeep
	// ("" when none is recorded).
	ProposalLog string
	// Proposals holds the well-formed candidates; malformed ones are left
	// out. Practice and Map count every entry of each list, well-formed
	// or not, so that candidate indexes ("<id>:practice:3") can be checked.
	Proposals contracts.ProposalOutput
	Practice  int
	Map       int
	// CuratorProcessedAt and CuratorRunID are set once a curate run has
	// consumed the log.
	CuratorProcessedAt string
	CuratorRunID       string

	doc *frontmatter.Doc
}

// AwaitingCuration reports whether the log has extracted candidates that
// no curate run has consumed yet.
func (l *Log) AwaitingCuration() bool {
	return l.ProposalStatus == StatusDone && l.CuratorProcessedAt == ""
}

// AwaitingExtraction reports whether the log still waits for extraction.
func (l *Log) AwaitingExtraction() bool { return l.ProposalStatus == StatusPending }

// Candidates returns how many candidates of the given type ("practice" or
// "map") the log lists.
func (l *Log) Candidates(typ string) int {
	switch typ {
	case "practice":
		return l.Practice
	case "map":
		return l.Map
	}
	return 0
}

// Parse reads a session log. name is the file's base name, used in errors.
func Parse(name string, src []byte) (*Log, error) {
	doc, err := frontmatter.Parse(src)
	if err != nil {
		var fe *frontmatter.FieldError
		if errors.As(err, &fe) {
			return nil, fmt.Errorf("%s: %w", name, err)
		}
		return nil, fmt.Errorf("%s: %s", name, frontmatter.Describe(err))
	}
	if !doc.HasFrontMatter() {
		return nil, fmt.Errorf("%s: no front matter; a session log starts with a --- block holding session_id", name)
	}
	l := &Log{Name: name, doc: doc}
	str := func(key string, required bool) (string, error) {
		v, ok := doc.Value(key)
		if !ok || v == nil {
			if required {
				return "", fmt.Errorf("%s: field %q: is required", name, key)
			}
			return "", nil
		}
		s, ok := v.(string)
		if !ok {
			return "", fmt.Errorf("%s: field %q: must be a string", name, key)
		}
		if required && strings.TrimSpace(s) == "" {
			return "", fmt.Errorf("%s: field %q: must not be empty", name, key)
		}
		return s, nil
	}
	for _, f := range []struct {
		key      string
		dst      *string
		required bool
	}{
		{keySessionID, &l.SessionID, true},
		{keyCapturedAt, &l.CapturedAt, true},
		{keyProposalStatus, &l.ProposalStatus, true},
		{keyCapturedBy, &l.CapturedBy, false},
		{keyTranscriptHash, &l.TranscriptHash, false},
		{keyProposalError, &l.ProposalError, false},
		{keyProposalLog, &l.ProposalLog, false},
		{keyCuratorProcessedAt, &l.CuratorProcessedAt, false},
		{keyCuratorRunID, &l.CuratorRunID, false},
	} {
		if *f.dst, err = str(f.key, f.required); err != nil {
			return nil, err
		}
	}
	if !slices.Contains(Statuses, l.ProposalStatus) {
		return nil, fmt.Errorf("%s: field %q: is %q; use one of %s", name, keyProposalStatus, l.ProposalStatus, strings.Join(Statuses, ", "))
	}
	if v, ok := doc.Value(keyProposals); ok && v != nil {
		m, ok := v.(map[string]any)
		if !ok {
			return nil, fmt.Errorf("%s: field %q: must be a mapping with practice and map lists", name, keyProposals)
		}
		l.Proposals.Practice, l.Practice = candidates(m["practice"])
		l.Proposals.Map, l.Map = candidates(m["map"])
	}
	if l.Proposals.Practice == nil {
		l.Proposals.Practice = []contracts.Candidate{}
	}
	if l.Proposals.Map == nil {
		l.Proposals.Map = []contracts.Candidate{}
	}
	return l, nil
}

// candidates decodes a list of candidates, skipping malformed entries, and
// returns the list's full length.
func candidates(v any) ([]contracts.Candidate, int) {
	items, ok := v.([]any)
	if !ok {
		return nil, 0
	}
	var out []contracts.Candidate
	for _, it := range items {
		data, err := json.Marshal(it)
		if err != nil {
			continue
		}
		var c contracts.Candidate
		dec := json.NewDecoder(strings.NewReader(string(data)))
		dec.DisallowUnknownFields()
		if dec.Decode(&c) != nil || strings.TrimSpace(c.Title) == "" ||
			(c.Type != "practice" && c.Type != "map") || !slices.Contains([]string{"low", "medium", "high"}, c.Confidence) {
			continue
		}
		if c.Tags == nil {
			c.Tags = []string{}
		}
		out = append(out, c)
	}
	return out, len(items)
}

// Read reads and parses the session log at path.
//
// A file that is not a regular file (a named pipe) is an error, returned
// at once: the open does not wait for a writer.
func Read(path string) (*Log, error) {
	f, err := store.OpenRead(path)
	if err != nil {
		return nil, err
	}
	defer func() { _ = f.Close() }()
	if fi, err := f.Stat(); err != nil {
		return nil, err
	} else if !fi.Mode().IsRegular() {
		return nil, fmt.Errorf("%s: not a regular file (a named pipe, a device or a socket)", path)
	}
	src, err := io.ReadAll(f)
	if err != nil {
		return nil, err
	}
	l, err := Parse(filepath.Base(path), src)
	if err != nil {
		return nil, err
	}
	l.Path = path
	return l, nil
}

// List reads every session log in dir (files ending in .md that do not
// start with a dot) and returns them sorted by captured_at, then by file
// name. Logs that cannot be parsed are returned as problems, not as an
// error: one bad log must not hide the others. A missing dir holds no logs.
func List(dir string) (logs []*Log, problems []error, err error) {
	names, err := logNames(dir)
	if err != nil {
		return nil, nil, err
	}
	for _, name := range names {
		l, err := Read(filepath.Join(dir, name))
		if err != nil {
			problems = append(problems, err)
			continue
		}
		logs = append(logs, l)
	}
	slices.SortStableFunc(logs, func(a, b *Log) int {
		if c := strings.Compare(a.CapturedAt, b.CapturedAt); c != 0 {
			return c
		}
		return strings.Compare(a.Name, b.Name)
	})
	return logs, problems, nil
}

// ListAwaitingCuration returns the logs with extracted candidates that no
// curate run has consumed, sorted by captured_at.
func ListAwaitingCuration(dir string) ([]*Log, []error, error) {
	return listWhere(dir, (*Log).AwaitingCuration)
}

// ListAwaitingExtraction returns the logs whose candidates have not been
// extracted yet, sorted by captured_at.
func ListAwaitingExtraction(dir string) ([]*Log, []error, error) {
	return listWhere(dir, (*Log).AwaitingExtraction)
}

func listWhere(dir string, keep func(*Log) bool) ([]*Log, []error, error) {
	logs, problems, err := List(dir)
	if err != nil {
		return nil, nil, err
	}
	return slices.DeleteFunc(logs, func(l *Log) bool { return !keep(l) }), problems, nil
}

// logNames lists the candidate log file names in dir, sorted.
func logNames(dir string) ([]string, error) {
	entries, err := os.ReadDir(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("reading session logs: %w", err)
	}
	var names []string
	for _, e := range entries {
		name := e.Name()
		if e.IsDir() || strings.HasPrefix(name, ".") || !strings.HasSuffix(name, ".md") {
			continue
		}
		names = append(names, name)
	}
	slices.Sort(names)
	return names, nil
}

// Find returns the file name of the log for sessionID in dir: the first,
// in sorted order, of the files named "*-<sessionID>.md". ok is false when
// there is none.
func Find(dir, sessionID string) (name string, ok bool, err error) {
	names, err := logNames(dir)
	if err != nil {
		return "", false, err
	}
	suffix := "-" + sessionID + ".md"
	for _, n := range names {
		if strings.HasSuffix(n, suffix) {
			return n, true, nil
		}
	}
	return "", false, nil
}

// FileName is the name of a new log for sessionID first captured at t:
// YYYYMMDD-HHmm-<sessionID>.md, in UTC.
func FileName(t time.Time, sessionID string) string {
	return t.UTC().Format("20060102-1504") + "-" + sessionID + ".md"
}

package session

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"
	"unicode"

	"github.com/kk-project/kk/internal/atomicfile"
	"github.com/kk-project/kk/internal/contracts"
	"github.com/kk-project/kk/internal/frontmatter"
	"github.com/kk-project/kk/internal/store"
	"github.com/kk-project/kk/internal/txn"
)

// CursoryError is the proposal_error of a log skipped as cursory.
const CursoryError = "cursory_session"

// Capture actions: what Capture did to the session's log.
const (
	CaptureCreated   = "created"
	CaptureUpdated   = "updated"
	CaptureUnchanged = "unchanged"
	// CaptureSuperseded: a newer capture of the session is under way
	// (CaptureOptions.Current said so); the log was left as it is.
	CaptureSuperseded = "superseded"
)

// CaptureOptions is one capture of a harness session's transcript.
type CaptureOptions struct {
	// SessionID names the session: a lowercase UUID, or another id already
	// made safe for a file name (see the capture hook).
	SessionID string
	// CapturedBy is the trigger: CapturedByStop, CapturedBySessionEnd or
	// CapturedByPreCompact.
	CapturedBy string
	// Transcript is the rendered, role-tagged text, private spans removed.
	Transcript string
	// Cursory marks a session too short to be worth extracting: its log is
	// written as skipped instead of pending.
	Cursory bool
	Now     time.Time
	Command string // recorded in the writer lock
	// LockWait bounds the wait for the knowledge base's writer lock; zero
	// is the knowledge base's own wait (store.KB.WriterWait). A lock held
	// for the whole wait is a *lock.HeldError.
	LockWait time.Duration
	// Current, when set, is asked under the writer lock, before anything
	// is written, whether this capture is still the one to write: false
	// leaves the log as it is (CaptureSuperseded), for a capture that
	// read its transcript before a newer capture of the session did.
	Current func() bool
}

// CaptureResult says what Capture did.
type CaptureResult struct {
	Path   string // relative to the repository root
	Action string // CaptureCreated, CaptureUpdated, CaptureUnchanged or CaptureSuperseded
	Status string // the log's proposal_status afterwards
}

// Capture writes the log of a harness session, one file per session id:
// the first capture names it after its time (YYYYMMDD-HHmm-<id>.md), and
// later captures of the same session (a stop hook fires every turn, and
// the transcript only grows) rewrite that file in place, atomically.
//
// A capture whose transcript hashes the same as the log's transcript_hash
// changes nothing, so firing again never resets an extracted log to
// pending. When the transcript did change:
//   - a log a curate run already consumed (curator_processed_at set) keeps
//     its curator stamps, proposal status, error, completion time,
//     candidates and every other key; only captured_by, captured_at,
//     transcript_hash and the transcript are replaced;
//   - any other log is written afresh as pending (or skipped, for a
//     cursory session), dropping an earlier extraction of the shorter
//     transcript.
func Capture(ctx context.Context, k *store.KB, o CaptureOptions) (*CaptureResult, error) {
	if strings.TrimSpace(o.SessionID) == "" || strings.ContainsAny(o.SessionID, `/\`) || strings.HasPrefix(o.SessionID, ".") {
		return nil, fmt.Errorf("session id %q cannot name a log file", o.SessionID)
	}
	switch o.CapturedBy {
	case CapturedByStop, CapturedBySessionEnd, CapturedByPreCompact:
	default:
		return nil, fmt.Errorf("captured_by %q: use %s, %s or %s", o.CapturedBy, CapturedByStop, CapturedBySessionEnd, CapturedByPreCompact)
	}
	if strings.TrimSpace(o.Transcript) == "" {
		return nil, errors.New("the transcript is empty; there is nothing to capture")
	}
	sum := sha256.Sum256([]byte(o.Transcript))
	hash := "sha256:" + hex.EncodeToString(sum[:])
	dir := k.SessionsDir()
	res := &CaptureResult{}
	err := txn.Locked(ctx, k, o.Command, o.LockWait, func() error {
		if o.Current != nil && !o.Current() {
			res.Action = CaptureSuperseded
			return nil
		}
		name, ok, err := Find(dir, o.SessionID)
		if err != nil {
			return err
		}
		if !ok {
			name = FileName(o.Now, o.SessionID)
		}
		path := filepath.Join(dir, name)
		res.Path = k.Rel(path)
		var data []byte
		cur, readErr := Read(path)
		switch {
		case ok && readErr == nil && cur.TranscriptHash == hash:
			res.Action, res.Status = CaptureUnchanged, cur.ProposalStatus
			return nil
		case ok && readErr == nil && cur.CuratorProcessedAt != "":
			data, err = recapture(cur, o, hash)
			res.Status = cur.ProposalStatus
		default:
			// New, or a log of this session that cannot be read: written
			// afresh (the folder is kk's own, gitignored, operational).
			data, err = freshCapture(o, hash)
			res.Status = StatusPending
			if o.Cursory {
				res.Status = StatusSkipped
			}
		}
		if err != nil {
			return fmt.Errorf("%s: %w", res.Path, err)
		}
		if err := ctx.Err(); err != nil {
			return err
		}
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return err
		}
		if err := atomicfile.Write(path, data, 0o644); err != nil {
			return err
		}
		res.Action = CaptureCreated
		if ok {
			res.Action = CaptureUpdated
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return res, nil
}

// freshCapture renders a new log: pending, or skipped when cursory.
func freshCapture(o CaptureOptions, hash string) ([]byte, error) {
	at := FormatTime(o.Now)
	n := newLog{
		SessionID: o.SessionID, CapturedBy: o.CapturedBy, CapturedAt: at, TranscriptHash: hash,
		Status:     StatusPending,
		Proposals:  contracts.ProposalOutput{Practice: []contracts.Candidate{}, Map: []contracts.Candidate{}},
		Transcript: o.Transcript,
	}
	if o.Cursory {
		n.Status, n.CompletedAt = StatusSkipped, at
	}
	data, err := n.render()
	if err != nil || !o.Cursory {
		return data, err
	}
	doc, err := frontmatter.Parse(data)
	if err != nil {
		return nil, err
	}
	return doc.Render(patch(doc, []frontmatter.Item{{Key: keyProposalError, Value: CursoryError}}), doc.Body(), frontmatter.Emit)
}

// recapture renders a curated log with a new transcript, keeping every
// other key and the "## Proposal" section.
func recapture(cur *Log, o CaptureOptions, hash string) ([]byte, error) {
	proposal := "## Proposal\n\n" + proposalPlaceholder + "\n"
	if cur.ProposalStatus == StatusDone {
		proposal = "## Proposal\n\n" + proposalComplete + "\n"
	}
	body := string(cur.doc.Body())
	if i := proposalStart(body); i >= 0 {
		proposal = body[i+1:]
	}
	newBody := "## Transcript\n\n" + strings.TrimRightFunc(o.Transcript, unicode.IsSpace) + "\n\n" + proposal
	return cur.doc.Render(patch(cur.doc, []frontmatter.Item{
		{Key: keyCapturedBy, Value: o.CapturedBy},
		{Key: keyCapturedAt, Value: FormatTime(o.Now)},
		{Key: keyTranscriptHash, Value: hash},
	}), []byte(newBody), frontmatter.Emit)
}

// Transcript returns the transcript section of a log: the text between
// "## Transcript" and the last "## Proposal" heading.
func (l *Log) Transcript() string {
	body := string(l.doc.Body())
	start := strings.Index(body, "## Transcript")
	if start < 0 {
		return ""
	}
	body = body[start+len("## Transcript"):]
	if end := proposalStart(body); end >= 0 {
		body = body[:end]
	}
	return strings.TrimSpace(body)
}

// proposalStart returns where the "## Proposal" section of a log's body
// begins (the newline before its heading), or -1. It is the last such
// heading: the section ends the log, and the transcript before it may
// hold the same line (a user's pasted document with a "## Proposal"
// heading).
func proposalStart(body string) int {
	return strings.LastIndex(body, "\n## Proposal")
}

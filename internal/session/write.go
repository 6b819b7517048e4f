package session

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"time"
	"unicode"

	"github.com/kk-project/kk/internal/atomicfile"
	"github.com/kk-project/kk/internal/contracts"
	"github.com/kk-project/kk/internal/frontmatter"
	"github.com/kk-project/kk/internal/schema"
	"github.com/kk-project/kk/internal/store"
	"github.com/kk-project/kk/internal/txn"
	"github.com/kk-project/kk/internal/yamlstyle"
)

// DefaultExcerpt is the transcript of a staged log when the caller gives
// none.
const DefaultExcerpt = "Live context processed by `/kk-session-extract`."

// Idempotency of a stage-live call: "normal" when the caller named the
// session (staging it again replaces the same log), "degraded" when kk
// generated the id (every call makes a new log).
const (
	IdempotencyNormal   = "normal"
	IdempotencyDegraded = "degraded"
)

// DecodeProposals parses data as a proposal-output document and checks it
// against the schema. name names the input in errors.
func DecodeProposals(name string, data []byte) (contracts.ProposalOutput, error) {
	var out contracts.ProposalOutput
	doc, err := ParseJSON(name, data)
	if err != nil {
		return out, err
	}
	if err := schema.Validate("proposal-output", doc); err != nil {
		return out, fmt.Errorf("%s: %w", name, err)
	}
	if err := json.Unmarshal(data, &out); err != nil {
		return out, fmt.Errorf("%s: %w", name, err)
	}
	for _, l := range []*[]contracts.Candidate{&out.Practice, &out.Map} {
		for i := range *l {
			if (*l)[i].Tags == nil {
				(*l)[i].Tags = []string{}
			}
		}
	}
	return out, nil
}

// ResolveExcerpt turns the --transcript-excerpt argument into the text of
// a staged log: the content of the file it names if it is a readable file,
// otherwise the argument itself, with private spans removed. An empty
// argument gives DefaultExcerpt.
func ResolveExcerpt(arg string) string {
	if strings.TrimSpace(arg) == "" {
		return DefaultExcerpt
	}
	if fi, err := os.Stat(arg); err == nil && fi.Mode().IsRegular() {
		if data, err := os.ReadFile(arg); err == nil {
			return StripPrivate(string(data))
		}
	}
	return StripPrivate(arg)
}

// StageOptions is one stage-live call.
type StageOptions struct {
	// SessionID names the session (a UUID v4); empty when Generate.
	SessionID string
	Generate  bool
	// Excerpt is the transcript text to store, already resolved.
	Excerpt   string
	Proposals contracts.ProposalOutput
	Now       time.Time
	Command   string // recorded in the writer lock
}

// StageResult says where StageLive wrote the log.
type StageResult struct {
	Path        string `json:"path"` // relative to the repository root
	SessionID   string `json:"session_id"`
	Idempotency string `json:"idempotency"`
	// Unchanged is true when the log already held this excerpt and these
	// candidates, and was left alone.
	Unchanged bool `json:"unchanged"`
}

// StageLive writes the log of a live session whose candidates were
// extracted in the host agent session: status done, captured_by manual.
// An existing log of the same session is replaced whole, curator stamps
// included, so the new candidates wait for curation again; unless it
// already holds the same excerpt and candidates, in which case there is
// nothing to do and it is left as it is.
func StageLive(ctx context.Context, k *store.KB, o StageOptions) (*StageResult, error) {
	if o.SessionID != "" && o.Generate {
		return nil, errors.New("give a session id or ask for a generated one, not both")
	}
	res := &StageResult{Idempotency: IdempotencyNormal}
	if o.Generate {
		res.SessionID, res.Idempotency = NewID(), IdempotencyDegraded
	} else {
		id, err := CheckID(o.SessionID)
		if err != nil {
			return nil, err
		}
		res.SessionID = id
	}
	at := FormatTime(o.Now)
	excerpt := o.Excerpt
	if strings.TrimSpace(excerpt) == "" {
		excerpt = DefaultExcerpt
	}
	sum := sha256.Sum256([]byte(excerpt))
	fields := newLog{
		SessionID:      res.SessionID,
		CapturedBy:     CapturedByManual,
		CapturedAt:     at,
		TranscriptHash: "sha256:" + hex.EncodeToString(sum[:]),
		Status:         StatusDone,
		CompletedAt:    at,
		Proposals:      o.Proposals,
		Transcript:     excerpt,
	}
	data, err := fields.render()
	if err != nil {
		return nil, err
	}
	dir := k.SessionsDir()
	err = txn.Locked(ctx, k, o.Command, 0, func() error {
		name, ok, err := Find(dir, res.SessionID)
		if err != nil {
			return err
		}
		if !ok {
			name = FileName(o.Now, res.SessionID)
		}
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return err
		}
		path := filepath.Join(dir, name)
		res.Path = k.Rel(path)
		if ok {
			if cur, err := Read(path); err == nil && cur.CapturedBy == CapturedByManual && cur.ProposalStatus == StatusDone &&
				cur.TranscriptHash == fields.TranscriptHash && sameProposals(cur, o.Proposals) {
				// Staged before with the same excerpt and candidates: the
				// log (and any curator stamp on it) stays as it is.
				res.Unchanged = true
				return nil
			}
		}
		return atomicfile.Write(path, data, 0o644)
	})
	if err != nil {
		return nil, err
	}
	return res, nil
}

// UpdateOptions is one update-proposals call.
type UpdateOptions struct {
	// Status is StatusDone (with Proposals) or StatusFailed (with Error).
	Status    string
	Error     string
	Proposals *contracts.ProposalOutput
	Now       time.Time
	Command   string
	// Log is the trace of the run that extracted the candidates (the
	// headless harness's output), relative to .ai/kenkeep: the log's
	// proposal_log. "" leaves it null.
	Log string
	// LockWait bounds the wait for the writer lock; zero is the
	// knowledge base's own wait (store.KB.WriterWait).
	LockWait time.Duration
}

// UpdateProposals records the outcome of an extraction in the log at
// path: the candidates and status done, or status failed and the error.
// Other keys and the transcript are kept. It returns the updated log. The
// write runs under k's writer lock; k is nil for a log kept outside any
// knowledge base, which has no tree to guard.
func UpdateProposals(ctx context.Context, k *store.KB, path string, o UpdateOptions) (*Log, error) {
	switch o.Status {
	case StatusDone:
		if o.Proposals == nil {
			return nil, errors.New("status done needs the extracted candidates")
		}
	case StatusFailed:
		if strings.TrimSpace(o.Error) == "" {
			o.Error = "unknown error"
		}
	default:
		return nil, fmt.Errorf("status %q: use done or failed", o.Status)
	}
	var out *Log
	update := func() error {
		l, err := Read(path)
		if err != nil {
			return err
		}
		if l.ProposalStatus == o.Status && l.ProposalLog == o.Log && (o.Status == StatusDone && l.ProposalError == "" && sameProposals(l, *o.Proposals) ||
			o.Status == StatusFailed && l.ProposalError == o.Error) {
			out = l // already recorded: nothing to do
			return nil
		}
		at := FormatTime(o.Now)
		updates := []frontmatter.Item{
			{Key: keyProposalStatus, Value: o.Status},
			{Key: keyProposalCompletedAt, Value: at},
			{Key: keyProposalError, Value: nil},
			{Key: keyProposalLog, Value: nil},
		}
		if o.Log != "" {
			updates[3].Value = o.Log
		}
		body := l.doc.Body()
		if o.Status == StatusDone {
			updates = append(updates, frontmatter.Item{Key: keyProposals, Value: proposalsValue(*o.Proposals)})
			body = []byte(completeProposal(string(body)))
		} else {
			updates[2].Value = o.Error
		}
		data, err := l.doc.Render(patch(l.doc, updates), body, frontmatter.Emit)
		if err != nil {
			return fmt.Errorf("%s: %w", path, err)
		}
		if err := atomicfile.Write(path, data, 0o644); err != nil {
			return err
		}
		out, err = Parse(l.Name, data)
		if err != nil {
			return err
		}
		out.Path = path
		return nil
	}
	if k == nil {
		err := update() // before out is read: update sets it
		return out, err
	}
	err := txn.Locked(ctx, k, o.Command, o.LockWait, update)
	return out, err
}

// sameProposals reports whether l holds exactly the candidates p.
func sameProposals(l *Log, p contracts.ProposalOutput) bool {
	return l.Practice == len(p.Practice) && l.Map == len(p.Map) && reflect.DeepEqual(l.Proposals, normalized(p))
}

func normalized(p contracts.ProposalOutput) contracts.ProposalOutput {
	out := contracts.ProposalOutput{Practice: []contracts.Candidate{}, Map: []contracts.Candidate{}}
	for _, c := range p.Practice {
		out.Practice = append(out.Practice, normalCandidate(c))
	}
	for _, c := range p.Map {
		out.Map = append(out.Map, normalCandidate(c))
	}
	return out
}

func normalCandidate(c contracts.Candidate) contracts.Candidate {
	if c.Tags == nil {
		c.Tags = []string{}
	}
	return c
}

// Stamp marks the log at path as consumed by curate run runID at time at.
// The caller holds the writer lock.
func Stamp(path, runID string, at time.Time) error {
	l, err := Read(path)
	if err != nil {
		return err
	}
	data, err := l.doc.Render(patch(l.doc, []frontmatter.Item{
		{Key: keyCuratorProcessedAt, Value: FormatTime(at)},
		{Key: keyCuratorRunID, Value: runID},
	}), l.doc.Body(), frontmatter.Emit)
	if err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	return atomicfile.Write(path, data, 0o644)
}

// patch returns doc's items with updates applied: a key that exists keeps
// its place, a new key goes at the end.
func patch(doc *frontmatter.Doc, updates []frontmatter.Item) []frontmatter.Item {
	var items []frontmatter.Item
	for _, key := range doc.Keys() {
		v, _ := doc.Value(key)
		items = append(items, frontmatter.Item{Key: key, Value: v})
	}
	for _, u := range updates {
		if i := slices.IndexFunc(items, func(it frontmatter.Item) bool { return it.Key == u.Key }); i >= 0 {
			items[i].Value = u.Value
		} else {
			items = append(items, u)
		}
	}
	return items
}

// newLog is the content of a log written from scratch.
type newLog struct {
	SessionID, CapturedBy, CapturedAt, TranscriptHash string
	Status, CompletedAt                               string
	Proposals                                         contracts.ProposalOutput
	Transcript                                        string
}

func (n newLog) render() ([]byte, error) {
	completed := any(nil)
	if n.CompletedAt != "" {
		completed = n.CompletedAt
	}
	fm, err := yamlstyle.Marshal(yamlstyle.Map{
		{Key: keySchemaVersion, Value: 1},
		{Key: keySessionID, Value: n.SessionID},
		{Key: keyCapturedBy, Value: n.CapturedBy},
		{Key: keyCapturedAt, Value: n.CapturedAt},
		{Key: keyTranscriptHash, Value: n.TranscriptHash},
		{Key: keyProposalStatus, Value: n.Status},
		{Key: keyProposalCompletedAt, Value: completed},
		{Key: keyProposalError, Value: nil},
		{Key: keyProposalLog, Value: nil},
		{Key: keyProposals, Value: proposalsValue(n.Proposals)},
	})
	if err != nil {
		return nil, err
	}
	line := proposalPlaceholder
	if n.Status == StatusDone {
		line = proposalComplete
	}
	var b bytes.Buffer
	b.WriteString("---\n")
	b.Write(fm)
	b.WriteString("---\n## Transcript\n\n")
	b.WriteString(strings.TrimRightFunc(n.Transcript, unicode.IsSpace))
	b.WriteString("\n\n## Proposal\n\n")
	b.WriteString(line)
	b.WriteString("\n")
	return b.Bytes(), nil
}

// proposalsValue is the front matter value of a set of candidates, with
// keys in the contract's order.
func proposalsValue(p contracts.ProposalOutput) yamlstyle.Map {
	list := func(cs []contracts.Candidate) []any {
		out := make([]any, 0, len(cs))
		for _, c := range cs {
			tags := c.Tags
			if tags == nil {
				tags = []string{}
			}
			out = append(out, yamlstyle.Map{
				{Key: "type", Value: c.Type},
				{Key: "tags", Value: tags},
				{Key: "title", Value: c.Title},
				{Key: "description", Value: c.Description},
				{Key: "body", Value: c.Body},
				{Key: "kk_confidence", Value: c.Confidence},
			})
		}
		return out
	}
	return yamlstyle.Map{{Key: "practice", Value: list(p.Practice)}, {Key: "map", Value: list(p.Map)}}
}

// completeProposal turns the placeholder line of a log body's proposal
// section into the "complete" line. Only the section is looked at: the
// transcript before it may quote the placeholder.
func completeProposal(body string) string {
	i := proposalStart(body)
	if i < 0 {
		return body
	}
	return body[:i] + strings.Replace(body[i:], proposalPlaceholder, proposalComplete, 1)
}

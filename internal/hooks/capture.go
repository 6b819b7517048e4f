package hooks

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/kk-project/kk/internal/harness"
	"github.com/kk-project/kk/internal/session"
	"github.com/kk-project/kk/internal/store"
	"github.com/kk-project/kk/internal/usage"
)

// ErrNoTranscript is reported when a capture payload names no transcript
// (Cursor's CLI sends none).
var ErrNoTranscript = errors.New("the payload names no transcript_path; nothing to capture")

// A session is cursory, and its log is written as skipped rather than
// queued for extraction, when it has at most cursoryUserTurns user turns,
// at most cursoryUserChars characters from the user and at most
// cursoryAgentChars from the agent.
const (
	cursoryUserTurns  = 1
	cursoryUserChars  = 200
	cursoryAgentChars = 500
)

// CaptureResult says what a capture did.
type CaptureResult struct {
	// Path of the session log relative to the repository root; empty when
	// the transcript had nothing to keep.
	Path string
	// Action is session.CaptureCreated, CaptureUpdated, CaptureUnchanged,
	// "empty", or "ephemeral" (the harness keeps no transcript of the
	// session: HookInput.Ephemeral).
	Action    string
	Status    string // the log's proposal_status
	SessionID string
	// Reads is how many usage-ledger entries were appended.
	Reads int
}

// Capture turns the session's transcript into its session log (see
// session.Capture) and records which knowledge files the session read in
// the usage ledger. No transcript path is ErrNoTranscript; a transcript
// with no text writes nothing.
//
// A capture in the hook itself waits Options.CaptureLockWait for the
// knowledge base's writer lock and then fails with *lock.HeldError, which
// Run answers by handing the capture to a detached process. Under the
// lock it retires a detached capture of the session started before it
// read the transcript (see supersedeDetached): that one would write an
// older transcript over this one's.
func Capture(ctx context.Context, r Request) (*CaptureResult, error) {
	started := time.Now()
	return captureWith(ctx, r, r.opts().CaptureLockWait, func(id string) func() bool {
		return func() bool {
			supersedeDetached(r.KB, id, started)
			return true
		}
	})
}

// captureWith is Capture waiting lockWait for the writer lock; current, when
// not nil, gives the session.CaptureOptions.Current of the session id.
func captureWith(ctx context.Context, r Request, lockWait time.Duration, current func(id string) func() bool) (*CaptureResult, error) {
	in := r.Input
	id, err := NormalizeSessionID(r.Adapter.ID(), in.SessionID)
	if err != nil {
		return nil, err
	}
	if strings.TrimSpace(in.TranscriptPath) == "" && in.Ephemeral {
		// Nothing to capture, and nothing wrong: the user asked the
		// harness to keep no record of the session.
		return &CaptureResult{SessionID: id, Action: "ephemeral"}, nil
	}
	if strings.TrimSpace(in.TranscriptPath) == "" {
		ex, can := r.Adapter.(harness.TranscriptExporter)
		if !can {
			return nil, noTranscript(in)
		}
		// The harness writes the transcript itself (piping its export
		// can truncate it); the file lives only as long as this capture.
		tmp := filepath.Join(r.KB.StateDir(), "transcript-"+id+".export")
		defer func() { _ = os.Remove(tmp) }()
		if err := ex.ExportTranscript(ctx, in, tmp); err != nil {
			return nil, fmt.Errorf("exporting the transcript: %w", err)
		}
		in.TranscriptPath = tmp
	}
	path := in.TranscriptPath
	if !filepath.IsAbs(path) && in.CWD != "" {
		path = filepath.Join(in.CWD, path) // relative to the session, not to the hook
	}
	if err := waitExists(ctx, path, r.opts().TranscriptAppear); err != nil {
		return nil, fmt.Errorf("reading the transcript: %w", err)
	}
	t, skipped, err := readTranscript(r.Adapter, path)
	if err != nil {
		return nil, err
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	turns := withLastMessage(t.Turns, in.LastMessage)
	turns = withoutKKContext(r.KB, turns)
	turns, dropped := newestTurns(turns, MaxLogTranscript)
	text, cursory := Render(turns)
	if skipped > 0 && len(turns) == 0 {
		return nil, fmt.Errorf("%s: the transcript is larger than %d MiB and its last %d MiB hold no turn kk can read", path, harness.TranscriptWindow>>20, harness.TranscriptWindow>>20)
	}
	if skipped > 0 || dropped > 0 {
		// Only the newest turns were kept; the session was long, whatever
		// its last turns look like.
		text, cursory = fmt.Sprintf("[kk: the start of this session was not captured: its transcript is longer than kk reads (%d MiB of the file skipped, %d earlier turn(s) left out)]\n\n", skipped>>20, dropped)+text, false
	}
	res := &CaptureResult{SessionID: id, Action: "empty"}
	if text == "" && CapturedBy(in.HarnessEvent) == session.CapturedByStop {
		// The harness said a turn ended, yet nothing in its transcript is
		// a turn: a format kk does not read, or a transcript not written
		// yet. Not an error of the hook, but never silent. (An empty
		// session may end, and Gemini CLI fires PreCompress before the
		// first prompt is recorded: those are not worth a line.)
		r.warn("capture", fmt.Errorf("%s holds no turn kk can read at %s; nothing was captured", path, orUnnamed(in.HarnessEvent)))
	}
	if text != "" {
		o := session.CaptureOptions{
			SessionID: id, CapturedBy: CapturedBy(in.HarnessEvent), Transcript: text, Cursory: cursory,
			Now: r.Now, Command: "kk hook capture --harness " + r.Adapter.ID(), LockWait: lockWait,
		}
		if current != nil {
			o.Current = current(id)
		}
		cr, err := session.Capture(ctx, r.KB, o)
		if err != nil {
			return nil, err
		}
		res.Path, res.Action, res.Status = cr.Path, cr.Action, cr.Status
	}
	n, err := recordReads(r.KB, in.CWD, t.Reads, id, session.FormatTime(r.Now))
	res.Reads = n
	r.warn("usage", err)
	return res, nil
}

// orUnnamed names a harness event for a message.
func orUnnamed(ev string) string {
	if ev == "" {
		return "an unnamed event"
	}
	return ev
}

// MaxLogTranscript bounds the transcript text of a session log: when the
// turns read from a transcript render to more, the oldest are left out.
const MaxLogTranscript = 8 << 20

// noTranscript is the error of a capture without a transcript path: the
// adapter's reason when it has one, else ErrNoTranscript.
func noTranscript(in harness.HookInput) error {
	if in.NoTranscript != "" {
		return fmt.Errorf("%s; nothing was captured", in.NoTranscript)
	}
	return ErrNoTranscript
}

// waitExists waits up to appear (Options.TranscriptAppear) for path to
// exist, and returns Stat's error when it does not.
func waitExists(ctx context.Context, path string, appear time.Duration) error {
	deadline := time.Now().Add(appear)
	for {
		_, err := os.Stat(path)
		if !errors.Is(err, fs.ErrNotExist) || time.Now().After(deadline) {
			return err
		}
		select {
		case <-ctx.Done():
			return err
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// readTranscript parses the transcript at path with the adapter, reading
// only its end when it is long (see harness.OpenTranscript); skipped is
// how many bytes at its start were not read.
func readTranscript(a harness.Adapter, path string) (t harness.Transcript, skipped int64, err error) {
	f, err := harness.OpenTranscript(path)
	if err != nil {
		return t, 0, fmt.Errorf("reading the transcript: %w", err)
	}
	defer func() { _ = f.Close() }()
	t, err = a.ParseTranscript(f)
	if err != nil {
		return t, 0, fmt.Errorf("%s: %w", path, err)
	}
	return t, f.Skipped, nil
}

// newestTurns keeps the newest turns whose text fits in max bytes (the
// newest one always), and says how many older ones it left out.
func newestTurns(turns []harness.Turn, max int) (kept []harness.Turn, dropped int) {
	size := 0
	for i := len(turns) - 1; i >= 0; i-- {
		size += len(turns[i].Text)
		if size > max && i < len(turns)-1 {
			return turns[i+1:], i + 1
		}
	}
	return turns, 0
}

// minContextMatch is the shortest kk text withoutKKContext removes: a
// shorter one could be words the user typed.
const minContextMatch = 40

// withoutKKContext takes kk's own session-start context out of the user
// turns, for a harness that records the context it was handed as words of
// the user without marking it (the adapters strip the blocks their
// harness marks): ENTRY.md's body as it is now, and the notes kk adds
// after it. User turns left empty are dropped.
func withoutKKContext(k *store.KB, turns []harness.Turn) []harness.Turn {
	body, _, ok, err := readEntry(k)
	if err != nil || !ok {
		body = ""
	}
	var out []harness.Turn
	for _, t := range turns {
		if t.Role == harness.User {
			text := t.Text
			for _, s := range []string{body, snapshotNote, notesHeader} {
				if len(s) >= minContextMatch && len(s) <= len(text) {
					text = strings.ReplaceAll(text, s, "")
				}
			}
			if text = strings.TrimSpace(text); text == "" {
				continue
			}
			if text != t.Text {
				t.Text = text
			}
		}
		out = append(out, t)
	}
	return out
}

// withLastMessage appends the payload's final assistant message when the
// transcript does not end with it yet (the harness writes its transcript
// asynchronously, and it can lag the turn that just ended).
func withLastMessage(turns []harness.Turn, last string) []harness.Turn {
	last = strings.TrimSpace(last)
	if last == "" {
		return turns
	}
	for i := len(turns) - 1; i >= 0; i-- {
		if strings.TrimSpace(turns[i].Text) == "" {
			continue
		}
		if turns[i].Role == harness.Agent && strings.HasSuffix(strings.TrimSpace(turns[i].Text), last) {
			return turns
		}
		break
	}
	return append(turns[:len(turns):len(turns)], harness.Turn{Role: harness.Agent, Text: last})
}

// selfReviewApply matches a user turn that is only the /self-review-apply
// command with its review file.
var selfReviewApply = regexp.MustCompile(`^/self-review-apply\s+(\S+\.xml)$`)

// Render renders turns as role-tagged text, "[USER]: …" and "[AGENT]: …"
// joined by blank lines, with <kk-private> spans removed, control
// characters (NUL, ESC, …; harness.ReplaceControls) written as U+FFFD,
// and empty turns left out. cursory reports a session too short to be worth extracting.
// As kenkeep's session logs do, a user turn that is only
// `/self-review-apply <file>.xml` is tagged "[USER /self-review-apply
// <file>.xml]: " and the agent turn right after it "[AGENT NARRATION OF
// SELF-REVIEW <file>.xml]: ", markers kenkeep's extraction prompt reads.
func Render(turns []harness.Turn) (text string, cursory bool) {
	size := 0
	for _, t := range turns {
		size += len(t.Text) + len("[AGENT]: \n\n")
	}
	var b strings.Builder
	b.Grow(size)
	userTurns, userChars, agentChars := 0, 0, 0
	narration := "" // the review file of a /self-review-apply turn just rendered
	for _, t := range turns {
		s := t.Text
		if mayHavePrivate(s) {
			s = session.StripPrivate(s)
		}
		s = strings.TrimSpace(s)
		if s == "" {
			continue
		}
		// A session log is text, which holds no NUL (a turn may: binary
		// pasted into the chat; one NUL would cost the whole log) nor
		// any other control character: a terminal escape quoted from a
		// tool's output would drive the terminal the log is read in.
		s = harness.ReplaceControls(s)
		tag := "[AGENT]: "
		if t.Role == harness.User {
			tag = "[USER]: "
			narration = ""
			if m := selfReviewApply.FindStringSubmatch(s); m != nil {
				tag, narration = "[USER /self-review-apply "+m[1]+"]: ", m[1]
			}
			userTurns++
			userChars += boundedRuneCount(s, cursoryUserChars)
		} else {
			if narration != "" {
				tag, narration = "[AGENT NARRATION OF SELF-REVIEW "+narration+"]: ", ""
			}
			agentChars += boundedRuneCount(s, cursoryAgentChars)
		}
		if b.Len() > 0 {
			b.WriteString("\n\n")
		}
		b.WriteString(tag)
		b.WriteString(s)
	}
	cursory = userTurns <= cursoryUserTurns && userChars <= cursoryUserChars && agentChars <= cursoryAgentChars
	return b.String(), cursory
}

// mayHavePrivate reports whether s may hold a <kk-private> tag (in any
// letter case), so that the common text without one is not copied.
func mayHavePrivate(s string) bool {
	const tag = "<kk-private>"
	for i := strings.IndexByte(s, '<'); i >= 0; {
		if len(s)-i >= len(tag) && strings.EqualFold(s[i:i+len(tag)], tag) {
			return true
		}
		j := strings.IndexByte(s[i+1:], '<')
		if j < 0 {
			return false
		}
		i += 1 + j
	}
	return false
}

// boundedRuneCount counts the characters of s, or returns limit+1 as soon
// as s certainly has more than limit (the cursory test needs no more).
func boundedRuneCount(s string, limit int) int {
	if len(s) > 4*limit+4 {
		return limit + 1
	}
	return utf8.RuneCountInString(s)
}

// CapturedBy maps a harness's own event name to the captured_by value of
// the session log: pre_compact for compaction events (PreCompact,
// preCompact, PreCompress), session_end for session-end events
// (SessionEnd, sessionEnd), stop for everything else (Stop, agentStop, …).
func CapturedBy(harnessEvent string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(harnessEvent) {
		if unicode.IsLetter(r) {
			b.WriteRune(r)
		}
	}
	e := b.String()
	switch {
	case strings.Contains(e, "compact") || strings.Contains(e, "compress"):
		return session.CapturedByPreCompact
	case strings.Contains(e, "sessionend"):
		return session.CapturedBySessionEnd
	}
	return session.CapturedByStop
}

// NormalizeSessionID turns the session id a harness gives into the id of
// its log, as kenkeep derives it, so that both tools name one session's
// log and usage alike. A UUID is kept, lowercased: of any version (Codex
// uses v7), except for Cursor and OpenCode, whose ids kenkeep keeps only
// as UUID v4. Any other id (OpenCode's "ses_…", a Cursor conversation id)
// becomes sha256("<harness>:<id>") in hex, laid out as a UUID v4 (hex
// digits 0-8, 8-12, "4" and 13-16, "8" and 17-20, 20-32): the same id
// always gives the same UUID, safe in a file name.
func NormalizeSessionID(harnessID, id string) (string, error) {
	id = strings.TrimSpace(id)
	if id == "" {
		return "", errors.New("the payload names no session id")
	}
	if session.IsUUID(id) {
		if _, err := session.CheckID(id); err == nil || (harnessID != "cursor" && harnessID != "opencode") {
			return strings.ToLower(id), nil
		}
	}
	sum := sha256.Sum256([]byte(harnessID + ":" + id))
	h := hex.EncodeToString(sum[:])
	return h[0:8] + "-" + h[8:12] + "-4" + h[13:16] + "-8" + h[17:20] + "-" + h[20:32], nil
}

// recordReads appends to the usage ledger the knowledge files the session
// read that the ledger does not have yet for this session: for each
// document, as many entries as the transcript shows reads beyond those
// already recorded (captures repeat, the transcript only grows).
func recordReads(k *store.KB, cwd string, reads []harness.Read, sessionID, at string) (int, error) {
	if len(reads) == 0 {
		return 0, nil
	}
	nodes, err := filepath.EvalSymlinks(k.NodesDir())
	if err != nil {
		return 0, nil // no nodes folder: nothing can have been read from it
	}
	observed := map[string]int{}
	var order []usage.Entry
	for _, rd := range reads {
		e, ok := ledgerEntry(k, nodes, cwd, rd.Path)
		if !ok {
			continue
		}
		key := e.Type + "\x00" + e.Document
		if observed[key] == 0 {
			order = append(order, e)
		}
		observed[key]++
	}
	if len(order) == 0 {
		return 0, nil
	}
	recorded := map[string]int{}
	entries, _, err := usage.Read(k)
	if err != nil {
		return 0, err
	}
	for _, e := range entries {
		if e.SessionID == sessionID {
			recorded[e.Type+"\x00"+e.Document]++
		}
	}
	var add []usage.Entry
	for _, e := range order {
		key := e.Type + "\x00" + e.Document
		for range observed[key] - recorded[key] {
			add = append(add, usage.Entry{Document: e.Document, Type: e.Type, SessionID: sessionID, UsedAt: at})
		}
	}
	return len(add), usage.Record(k, add...)
}

// ledgerEntry resolves a path the session read to a ledger entry: a leaf
// (document = its id, the file name without .md) or a folder index
// (document = its path relative to .ai/kenkeep). Absolute paths are taken
// as they are; "nodes/…" is relative to .ai/kenkeep, ".ai/kenkeep/…" to the
// repository root, anything else to the session's cwd; the file must
// exist (symlinks are resolved) under nodes/.
func ledgerEntry(k *store.KB, nodes, cwd, p string) (usage.Entry, bool) {
	p = strings.TrimSpace(p)
	if p == "" || !strings.HasSuffix(p, ".md") {
		return usage.Entry{}, false
	}
	slash := filepath.ToSlash(p)
	switch {
	case filepath.IsAbs(p):
	case strings.HasPrefix(slash, "nodes/"):
		p = filepath.Join(k.Dir, p)
	case strings.HasPrefix(slash, store.DirName+"/"):
		p = filepath.Join(k.Root, p)
	default:
		if cwd == "" {
			cwd = k.Root
		}
		p = filepath.Join(cwd, p)
	}
	real, err := filepath.EvalSymlinks(p)
	if err != nil {
		return usage.Entry{}, false // gone, or never there: nothing was used
	}
	rel, err := filepath.Rel(nodes, real)
	if err != nil || rel == "." || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
		return usage.Entry{}, false
	}
	rel = filepath.ToSlash(rel)
	base := rel[strings.LastIndexByte(rel, '/')+1:]
	for _, part := range strings.Split(rel, "/") {
		if strings.HasPrefix(part, ".") {
			return usage.Entry{}, false
		}
	}
	switch base {
	case "index.md":
		return usage.Entry{Document: "nodes/" + rel, Type: usage.TypeIndex}, true
	case "log.md":
		return usage.Entry{}, false
	}
	return usage.Entry{Document: strings.TrimSuffix(base, ".md"), Type: usage.TypeLeaf}, true
}

package hooks

import (
	"maps"
	"time"

	"github.com/kk-project/kk/internal/harness"
)

// Options are the timeouts and limits of the hook runtime. A call carries
// them (Invocation.Options, Request.Options), so a test shortens a wait
// for its own calls without changing anyone else's. A field left zero
// takes its default (Defaults), and Deadlines needs only the events it
// changes.
type Options struct {
	// Deadlines bound each event, stdin included. Past it the hook gives
	// up, prints nothing (or the answer offered, see Request.Offer) and
	// logs a "deadline" diagnostic. The context hooks are short because
	// the harness waits for them before the model sees anything; capture
	// writes one file; proposal-drain only starts the background worker.
	Deadlines map[harness.Event]time.Duration
	// DrainDeadline bounds a background drain (proposal-drain
	// --foreground). It is also how long a hung drain can hold the drain
	// lock.
	DrainDeadline time.Duration
	// CaptureDeadline bounds a detached capture (capture --foreground),
	// its wait for the lock and for the transcript to settle included.
	CaptureDeadline time.Duration

	// StdinIdle and StdinTotal bound the payload read. Some hosts never
	// close a hook's stdin, so the read stops StdinIdle after the last
	// byte (or after the start when no byte comes: hosts write the
	// payload before the hook even runs), and StdinTotal after it
	// started, whichever is first.
	StdinIdle  time.Duration
	StdinTotal time.Duration
	// MaxPayload caps the payload's size in bytes: hook payloads are
	// small JSON documents (a Stop payload with the last message is the
	// largest).
	MaxPayload int

	// CaptureLockWait is how long a capture in the hook itself waits for
	// the knowledge base's writer lock (another kk process writing: an
	// index rebuild, an import, a node write). Past it, the capture is
	// handed to a detached `kk hook capture --foreground`, which waits for
	// the lock as long as its own deadline allows, so that a long writer
	// costs neither the session's time nor its log.
	CaptureLockWait time.Duration

	// TranscriptAppear is how long capture waits for a transcript file
	// that does not exist yet: harnesses write their transcripts
	// asynchronously, and Claude Code 2.1.197 can fire the first Stop of
	// a session before the file is created.
	TranscriptAppear time.Duration
	// SettleMax is the longest a detached capture waits for a harness to
	// finish writing its transcript; past it, what the file holds is
	// captured and the wait is logged. SettleQuiet is how long a settled
	// transcript must stay unchanged; SettlePoll how often it is looked
	// at while waiting.
	SettleMax   time.Duration
	SettleQuiet time.Duration
	SettlePoll  time.Duration

	// DrainLockWait is how long a drain waits for another drain's lock
	// before leaving the work to it. HeadlessTimeout bounds one headless
	// extraction.
	DrainLockWait   time.Duration
	HeadlessTimeout time.Duration

	// SessionMarkRetention is how long a session's mark (graph-hint) is
	// kept. NudgeInterval is the least time between two curation nudges.
	SessionMarkRetention time.Duration
	NudgeInterval        time.Duration

	// PromptLimit is how many nodes prompt-context lists at most.
	PromptLimit int
	// PromptMaxChars bounds the rendered context; the first node is
	// always listed, shortened if it must be.
	PromptMaxChars int
	// PromptSyncBudget bounds how long prompt-context waits for the index
	// to catch up with the tree (a stat per leaf when nothing changed,
	// about 40 ms at 10k leaves). When the index's last recorded walk
	// says a sync takes longer (index.DB.ExpectedSync: a large tree, a
	// slow disk), the hook does not start one; past the budget it stops
	// the one it started. Either way it answers from the index as last
	// committed and starts `kk sync` in the background to finish the
	// work, so a large or cold tree never costs the deadline.
	PromptSyncBudget time.Duration
	// BackgroundSyncEvery is the least time between two background syncs
	// the hooks start.
	BackgroundSyncEvery time.Duration
}

// Defaults are the hook runtime's timeouts and limits, the one place they
// are set.
func Defaults() Options {
	return Options{
		Deadlines: map[harness.Event]time.Duration{
			harness.SessionStart:  time.Second,
			harness.PromptContext: time.Second,
			harness.Capture:       5 * time.Second,
			harness.ProposalDrain: 2 * time.Second,
			harness.LintTick:      10 * time.Second,
			harness.GraphHint:     5 * time.Second,
		},
		DrainDeadline:        15 * time.Minute,
		CaptureDeadline:      3 * time.Minute,
		StdinIdle:            250 * time.Millisecond,
		StdinTotal:           2 * time.Second,
		MaxPayload:           8 << 20,
		CaptureLockWait:      time.Second,
		TranscriptAppear:     2 * time.Second,
		SettleMax:            30 * time.Second,
		SettleQuiet:          300 * time.Millisecond,
		SettlePoll:           100 * time.Millisecond,
		DrainLockWait:        100 * time.Millisecond,
		HeadlessTimeout:      60 * time.Second,
		SessionMarkRetention: 30 * 24 * time.Hour,
		NudgeInterval:        time.Hour,
		PromptLimit:          5,
		PromptMaxChars:       2000,
		PromptSyncBudget:     200 * time.Millisecond,
		BackgroundSyncEvery:  time.Minute,
	}
}

// withDefaults returns o with every zero field set to its default, and
// Deadlines holding every event (o's own value where it names one).
func (o Options) withDefaults() Options {
	d := Defaults()
	deadlines := d.Deadlines
	maps.Copy(deadlines, o.Deadlines)
	o.Deadlines = deadlines
	set := func(v *time.Duration, def time.Duration) {
		if *v == 0 {
			*v = def
		}
	}
	set(&o.DrainDeadline, d.DrainDeadline)
	set(&o.CaptureDeadline, d.CaptureDeadline)
	set(&o.StdinIdle, d.StdinIdle)
	set(&o.StdinTotal, d.StdinTotal)
	set(&o.CaptureLockWait, d.CaptureLockWait)
	set(&o.TranscriptAppear, d.TranscriptAppear)
	set(&o.SettleMax, d.SettleMax)
	set(&o.SettleQuiet, d.SettleQuiet)
	set(&o.SettlePoll, d.SettlePoll)
	set(&o.DrainLockWait, d.DrainLockWait)
	set(&o.HeadlessTimeout, d.HeadlessTimeout)
	set(&o.SessionMarkRetention, d.SessionMarkRetention)
	set(&o.NudgeInterval, d.NudgeInterval)
	set(&o.PromptSyncBudget, d.PromptSyncBudget)
	set(&o.BackgroundSyncEvery, d.BackgroundSyncEvery)
	if o.MaxPayload == 0 {
		o.MaxPayload = d.MaxPayload
	}
	if o.PromptLimit == 0 {
		o.PromptLimit = d.PromptLimit
	}
	if o.PromptMaxChars == 0 {
		o.PromptMaxChars = d.PromptMaxChars
	}
	return o
}

// opts returns the request's options with their defaults filled in.
func (r Request) opts() Options { return r.Options.withDefaults() }

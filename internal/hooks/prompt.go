package hooks

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/kk-project/kk/internal/harness"
	"github.com/kk-project/kk/internal/index"
	"github.com/kk-project/kk/internal/store"
)

// Prompt-time retrieval: the nodes most relevant to the user's prompt,
// as a short list the harness shows the model next to the prompt. The
// ranking is the branch index's search (the one behind kk search), so the
// hook injects what kk search would list first, and nothing when the
// knowledge base has nothing that answers the prompt.

// promptHeader opens the prompt-time context.
const promptHeader = "Project knowledge that may bear on this prompt (notes from .ai/kenkeep, snapshots in time; check them against the code):"

// PromptContext renders the nodes most relevant to the payload's prompt
// for the harness; nil when the prompt is empty, nothing answers it, or
// the harness has no channel for it. The prompt itself is never logged.
//
// The index is searched as it was last committed first, and that answer
// is offered to the call (Request.Offer), so that a machine too busy for
// the rest still gets it at the deadline; then the index is synced within
// Options.PromptSyncBudget and searched again when the sync changed it.
// When the walk the index last recorded says a sync takes longer than
// the budget (index.DB.ExpectedSync), no sync is started: the first answer
// stands and `kk sync` is started in the background.
func PromptContext(ctx context.Context, r Request) ([]byte, error) {
	render := func(text string) []byte {
		if text == "" {
			return nil
		}
		out, ok := r.hookOutput(harness.PromptContext, text)
		if !ok {
			return nil
		}
		return out
	}
	p := promptRun{
		opts:   r.Options,
		budget: r.opts().PromptSyncBudget,
		slow: func() {
			if err := startBackgroundSync(r); err != nil {
				r.warn("sync", err)
			}
		},
		warn: r.warn,
	}
	if r.Offer != nil {
		p.offer = func(text string) {
			if out := render(text); out != nil {
				r.Offer(out)
			}
		}
	}
	text, err := p.text(ctx, r.KB, r.Input.Prompt)
	if err != nil {
		return nil, err
	}
	return render(text), nil
}

// PromptContextText returns the prompt-time context for prompt: a header
// and one line "- <title> (<path>): <description>" per node, at most
// o.PromptLimit nodes and o.PromptMaxChars characters (zero: the
// defaults); "" when nothing answers the prompt. It searches the current
// branch's index, synced first (a stat per leaf when nothing changed).
func PromptContextText(ctx context.Context, k *store.KB, prompt string, o Options) (string, error) {
	return promptRun{opts: o}.text(ctx, k, prompt)
}

// promptRun is how one prompt-context call waits for the index.
type promptRun struct {
	// opts holds the limits of the answer (PromptLimit, PromptMaxChars).
	opts Options
	// budget bounds the wait for the sync (0: no bound; the index is
	// synced before the one search).
	budget time.Duration
	// slow is called when the sync takes longer than budget.
	slow func()
	// offer, when set, receives the answer from the index as last
	// committed, before the sync.
	offer func(text string)
	// warn records a sync that failed; the answer then comes from the
	// index as last committed.
	warn func(phase string, err error)
}

// text returns the prompt-time context. With a budget, the index as last
// committed is searched first (readers never wait for the writer), then
// synced for at most budget: a sync that takes longer is stopped (it
// leaves the index as it was) and slow is called; a sync that changed the
// index is followed by a second search, whose answer is returned. A sync
// expected to take longer than budget is not started at all: slow is
// called and the first answer returned.
func (p promptRun) text(ctx context.Context, k *store.KB, prompt string) (string, error) {
	o := p.opts.withDefaults()
	if !index.Searchable(prompt) {
		return "", nil
	}
	branch, err := index.CurrentBranch(ctx, k)
	if err != nil {
		return "", err
	}
	db, err := index.OpenShared(ctx, k, branch)
	if err != nil {
		return "", err
	}
	ex, err := index.ExtractionFor(k)
	if err != nil {
		return "", err
	}
	req := index.Request{Text: prompt, Limit: o.PromptLimit, Quick: p.budget > 0, Gate: true, NoSnippets: true}
	search := func() (string, error) {
		hits, err := db.Search(ctx, req)
		if err != nil || len(hits) == 0 {
			return "", err
		}
		return renderHits(hits, o.PromptMaxChars), nil
	}
	if p.budget <= 0 {
		if _, err := db.SyncWith(ctx, k.NodesDir(), ex); err != nil {
			return "", err
		}
		return search()
	}
	if p.offer != nil {
		// The text's own ranking, before feedback and graph neighbours:
		// what a machine too busy for the whole search still gets.
		req.Early = func(hits []index.Hit) {
			if len(hits) > 0 {
				p.offer(renderHits(hits, o.PromptMaxChars))
			}
		}
	}
	first, err := search()
	if err != nil {
		return "", err
	}
	req.Early = nil
	if p.offer != nil {
		p.offer(first)
	}
	if cost, ok := db.ExpectedSync(ctx); ok && cost > p.budget {
		// The index's last walk says a sync cannot finish within the
		// budget (a large tree, a slow disk): the walk is not started,
		// the answer is the index as last committed (which writes
		// through kk keep current), and a sync in the background
		// catches up with edits made by hand.
		if p.slow != nil {
			p.slow()
		}
		return first, nil
	}
	st, done, err := syncWithin(ctx, db, k.NodesDir(), ex, p.budget)
	switch {
	case err != nil:
		if ctx.Err() != nil {
			return "", ctx.Err()
		}
		if p.warn != nil {
			p.warn("sync", err)
		}
		return first, nil
	case !done:
		if p.slow != nil {
			p.slow()
		}
		return first, nil
	case st.Changed() || first == "":
		// Searched again when the sync changed the index, and when the
		// first search found nothing: another process (the background
		// sync session-start started in a fresh clone) may have filled
		// the index since, leaving this sync nothing to change.
		return search()
	}
	return first, nil
}

// syncWithin syncs db, waiting at most budget; done is false when the
// sync took longer and was stopped (it leaves the index as it was, and
// readers see what it last committed).
func syncWithin(ctx context.Context, db *index.DB, nodesDir string, ex *index.Extraction, budget time.Duration) (st index.Stats, done bool, err error) {
	syncCtx, cancel := context.WithCancel(ctx)
	defer cancel()
	type result struct {
		st  index.Stats
		err error
	}
	ch := make(chan result, 1)
	go func() {
		st, err := db.SyncWith(syncCtx, nodesDir, ex)
		ch <- result{st, err}
	}()
	timer := time.NewTimer(budget)
	defer timer.Stop()
	select {
	case r := <-ch:
		return r.st, true, r.err
	case <-timer.C:
		// The sync stops (between folders, or by rolling back) and leaves
		// the two cores to the search.
		return index.Stats{}, false, nil
	}
}

// startBackgroundSync starts `kk sync` detached, unless the hook started
// one less than Options.BackgroundSyncEvery ago (.state/prompt-sync records when).
func startBackgroundSync(r Request) error {
	if r.Executable == nil {
		return errors.New("cannot start a background sync: kk's own path is unknown")
	}
	mark := filepath.Join(r.KB.StateDir(), "prompt-sync")
	if fi, err := os.Stat(mark); err == nil && time.Since(fi.ModTime()) < r.opts().BackgroundSyncEvery {
		return nil
	}
	if err := os.MkdirAll(filepath.Dir(mark), 0o755); err != nil {
		return err
	}
	if err := os.WriteFile(mark, nil, 0o644); err != nil {
		return err
	}
	exe, err := r.Executable()
	if err != nil {
		return fmt.Errorf("cannot start a background sync: %w", err)
	}
	cmd := exec.Command(exe, "sync", "--root", r.KB.Root)
	cmd.Dir = r.KB.Root
	cmd.Env = harness.ChildEnv(os.Environ())
	detach(cmd)
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("starting a background sync: %w", err)
	}
	return cmd.Process.Release()
}

func renderHits(hits []index.Hit, maxChars int) string {
	var b strings.Builder
	b.WriteString(promptHeader + "\n")
	for i, h := range hits {
		line := "- " + oneLine(h.Title) + " (" + hitPath(h) + ")"
		if d := oneLine(h.Description); d != "" {
			line += ": " + d
		}
		line += "\n"
		room := maxChars - utf8.RuneCountInString(b.String())
		if utf8.RuneCountInString(line) > room {
			if i > 0 {
				break
			}
			line = cutRunes(line, room-2) + "…\n"
		}
		b.WriteString(line)
	}
	return b.String()
}

// hitPath is where the model can read a hit: the leaf's file, or the
// repository file an extracted entity was read from ("@<file>#<id>" in
// the index).
//
// The id follows the last '#' (ids hold none; a file name may). A path
// holding a character that does not print (a line break in a file name,
// U+2028, a tab) is shown
// Go-quoted, so that the list stays one hit a line and a file name cannot
// add lines of its own to what the model reads.
func hitPath(h index.Hit) string {
	p := store.DirName + "/nodes/" + h.Path
	if rest, ok := strings.CutPrefix(h.Path, "@"); ok {
		p = rest
		if i := strings.LastIndexByte(rest, '#'); i >= 0 {
			p = rest[:i]
		}
	}
	return shownPath(p)
}

// shownPath is a repository path as a hook shows it to the model: as it
// is, or Go-quoted when it holds a character that does not print (a line
// break in a file name), which would otherwise add lines of its own to
// the context.
func shownPath(p string) string {
	if strings.IndexFunc(p, func(r rune) bool { return !unicode.IsPrint(r) }) >= 0 {
		return strconv.Quote(p)
	}
	return p
}

func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }

// cutRunes returns the first n runes of s.
func cutRunes(s string, n int) string {
	if n <= 0 {
		return ""
	}
	i := 0
	for j := range s {
		if i == n {
			return s[:j]
		}
		i++
	}
	return s
}

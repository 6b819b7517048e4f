package hooks

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"
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

// Retrieval settings.
var (
	// PromptLimit is how many nodes prompt-context lists at most.
	PromptLimit = 5
	// PromptMaxChars bounds the rendered context; the first node is
	// always listed, shortened if it must be.
	PromptMaxChars = 2000
	// PromptSyncBudget bounds how long prompt-context waits for the index
	// to catch up with the tree (a stat per leaf when nothing changed,
	// about 40 ms at 10k leaves). Past it the hook stops its sync,
	// searches the index as the last sync left it and starts `kk sync` in
	// the background to finish the work, so a large or cold tree never
	// costs the deadline.
	PromptSyncBudget = 200 * time.Millisecond
	// backgroundSyncEvery is the least time between two background syncs
	// the hook starts.
	backgroundSyncEvery = time.Minute
)

// promptHeader opens the prompt-time context.
const promptHeader = "Project knowledge that may bear on this prompt (notes from .ai/kenkeep, snapshots in time; check them against the code):"

// PromptContext renders the nodes most relevant to the payload's prompt
// for the harness; nil when the prompt is empty, nothing answers it, or
// the harness has no channel for it. The prompt itself is never logged.
func PromptContext(ctx context.Context, r Request) ([]byte, error) {
	slow := func() {
		if err := startBackgroundSync(r); err != nil && r.Warn != nil {
			r.Warn("sync", err)
		}
	}
	text, err := promptContextText(ctx, r.KB, r.Input.Prompt, PromptSyncBudget, slow)
	if err != nil || text == "" {
		return nil, err
	}
	out, ok := r.Adapter.HookOutput(harness.PromptContext, text)
	if !ok {
		return nil, nil
	}
	return out, nil
}

// PromptContextText returns the prompt-time context for prompt: a header
// and one line "- <title> (<path>): <description>" per node, at most
// PromptLimit nodes and PromptMaxChars characters; "" when nothing
// answers the prompt. It searches the current branch's index, synced
// first (a stat per leaf when nothing changed).
func PromptContextText(ctx context.Context, k *store.KB, prompt string) (string, error) {
	return promptContextText(ctx, k, prompt, 0, nil)
}

// promptContextText is PromptContextText waiting at most budget for the
// sync (0: as long as it takes); when the sync takes longer, slow is
// called and the index is searched as it stands.
func promptContextText(ctx context.Context, k *store.KB, prompt string, budget time.Duration, slow func()) (string, error) {
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
	if err := syncWithin(ctx, k, db, budget, slow); err != nil {
		return "", err
	}
	hits, err := db.Search(ctx, index.Request{Text: prompt, Limit: PromptLimit, Quick: budget > 0, Gate: true})
	if err != nil || len(hits) == 0 {
		return "", err
	}
	return renderHits(hits), nil
}

// syncWithin syncs db, waiting at most budget (0: no limit). A sync that
// takes longer is stopped and slow is called; the caller reads what the
// index last committed (readers never wait for the writer). A stopped or
// abandoned sync leaves the index as it was.
func syncWithin(ctx context.Context, k *store.KB, db *index.DB, budget time.Duration, slow func()) error {
	ex, err := index.ExtractionFor(k)
	if err != nil {
		return err
	}
	if budget <= 0 {
		_, err := db.SyncWith(ctx, k.NodesDir(), ex)
		return err
	}
	syncCtx, cancel := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() {
		_, err := db.SyncWith(syncCtx, k.NodesDir(), ex)
		done <- err
	}()
	timer := time.NewTimer(budget)
	defer timer.Stop()
	select {
	case err := <-done:
		cancel()
		return err
	case <-timer.C:
		// The sync stops (between folders, or by rolling back) and leaves
		// the two cores to the search.
		cancel()
		if slow != nil {
			slow()
		}
		return nil
	}
}

// startBackgroundSync starts `kk sync` detached, unless the hook started
// one less than backgroundSyncEvery ago (.state/prompt-sync records when).
func startBackgroundSync(r Request) error {
	if r.Executable == nil {
		return errors.New("cannot start a background sync: kk's own path is unknown")
	}
	mark := filepath.Join(r.KB.StateDir(), "prompt-sync")
	if fi, err := os.Stat(mark); err == nil && time.Since(fi.ModTime()) < backgroundSyncEvery {
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

func renderHits(hits []index.Hit) string {
	var b strings.Builder
	b.WriteString(promptHeader + "\n")
	for i, h := range hits {
		line := "- " + oneLine(h.Title) + " (" + hitPath(h) + ")"
		if d := oneLine(h.Description); d != "" {
			line += ": " + d
		}
		line += "\n"
		room := PromptMaxChars - utf8.RuneCountInString(b.String())
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
func hitPath(h index.Hit) string {
	if rest, ok := strings.CutPrefix(h.Path, "@"); ok {
		file, _, _ := strings.Cut(rest, "#")
		return file
	}
	return store.DirName + "/nodes/" + h.Path
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

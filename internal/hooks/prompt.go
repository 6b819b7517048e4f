package hooks

import (
	"context"
	"strings"
	"unicode/utf8"

	"github.com/kk-project/kk/internal/harness"
	"github.com/kk-project/kk/internal/index"
	"github.com/kk-project/kk/internal/kb"
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
)

// promptHeader opens the prompt-time context.
const promptHeader = "Project knowledge that may bear on this prompt (notes from .ai/kenkeep, snapshots in time; check them against the code):"

// PromptContext renders the nodes most relevant to the payload's prompt
// for the harness; nil when the prompt is empty, nothing answers it, or
// the harness has no channel for it. The prompt itself is never logged.
func PromptContext(ctx context.Context, r Request) ([]byte, error) {
	text, err := PromptContextText(ctx, r.KB, r.Input.Prompt)
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
func PromptContextText(ctx context.Context, k *kb.KB, prompt string) (string, error) {
	if !index.Searchable(prompt) {
		return "", nil
	}
	branch, err := index.CurrentBranch(ctx, k)
	if err != nil {
		return "", err
	}
	db, _, err := index.Open(ctx, k, branch)
	if err != nil {
		return "", err
	}
	defer db.Close()
	hits, err := db.Search(ctx, index.Request{Text: prompt, Limit: PromptLimit})
	if err != nil || len(hits) == 0 {
		return "", err
	}
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
	return b.String(), nil
}

// hitPath is where the model can read a hit: the leaf's file, or the
// repository file an extracted entity was read from ("@<file>#<id>" in
// the index).
func hitPath(h index.Hit) string {
	if rest, ok := strings.CutPrefix(h.Path, "@"); ok {
		file, _, _ := strings.Cut(rest, "#")
		return file
	}
	return kb.DirName + "/nodes/" + h.Path
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

package searcheval

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"

	"github.com/kk-project/kk/internal/hooks"
	"github.com/kk-project/kk/internal/index"
	"github.com/kk-project/kk/internal/node"
	"github.com/kk-project/kk/internal/store"
)

// Rankers of InProcess.
const (
	RankSearch = "search" // the search engine (kk search, kk_search)
	RankHook   = "hook"   // the prompt-context hook's injected block
)

// InProcess returns a ranker over the knowledge base k: "search" ranks
// with the index's search (at most limit ids), "hook" with the block the
// prompt-context hook injects, read back into ids (its own limit and
// character budget apply). The returned function releases what the
// ranker holds.
func InProcess(ctx context.Context, k *store.KB, name string, limit int) (Ranker, func(), error) {
	switch name {
	case RankSearch:
		db, _, err := index.Open(ctx, k, "main")
		if err != nil {
			return nil, nil, err
		}
		return func(ctx context.Context, prompt string) ([]string, error) {
			hits, err := db.Search(ctx, index.Request{Text: prompt, Limit: limit})
			ids := make([]string, len(hits))
			for i, h := range hits {
				ids[i] = h.ID
			}
			return ids, err
		}, func() { _ = db.Close() }, nil
	case RankHook:
		ids, err := pathIDs(k)
		if err != nil {
			return nil, nil, err
		}
		return func(ctx context.Context, prompt string) ([]string, error) {
			text, err := hooks.PromptContextText(ctx, k, prompt, hooks.Options{})
			if err != nil {
				return nil, err
			}
			return BlockIDs(text, ids), nil
		}, func() {}, nil
	}
	return nil, nil, fmt.Errorf("unknown ranker %q; use %s or %s", name, RankSearch, RankHook)
}

// blockPath finds the leaf paths in the hook's block: each listed node is
// a line "- <title> (.ai/kenkeep/nodes/<path>)…".
var blockPath = regexp.MustCompile(`(?m)^- .*?\(` + regexp.QuoteMeta(store.DirName) + `/nodes/([^()\s]+\.md)\)`)

// BlockIDs reads the ids of the nodes a prompt-context block lists, in
// order, through ids (leaf path relative to nodes/ → id).
func BlockIDs(text string, ids map[string]string) []string {
	var out []string
	for _, m := range blockPath.FindAllStringSubmatch(text, -1) {
		if id, ok := ids[m[1]]; ok {
			out = append(out, id)
		}
	}
	return out
}

// pathIDs maps each leaf's path (relative to nodes/) to its id.
func pathIDs(k *store.KB) (map[string]string, error) {
	files, err := leafFiles(k.NodesDir())
	if err != nil {
		return nil, err
	}
	out := map[string]string{}
	for _, f := range files {
		src, err := os.ReadFile(f)
		if err != nil {
			return nil, err
		}
		rel, _ := filepath.Rel(k.NodesDir(), f)
		n, err := node.Parse(filepath.ToSlash(rel), src)
		if err != nil {
			return nil, err
		}
		out[n.Path] = n.ID
	}
	return out, nil
}

package searcheval_test

import (
	"context"
	"math/rand"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/kk-project/kk/internal/hooks"
	"github.com/kk-project/kk/internal/searcheval"
)

// The prompt-context hook's gate in a young knowledge base: every case of
// both corpora, asked of a knowledge base holding only the leaves it
// expects and a few others drawn at random (none for a refusal case), as
// a project's first notes would be. The gate's known-share rule weighs
// words no note holds as signs of another subject; a young knowledge base
// holds few words, so the rule is measured against its own notes
// (index.ownKnownShare). Before, the hook refused 59 of drupal's 101
// answerable prompts and 44 of kenkeep's 74 with the expected leaves
// alone, 41 and 24 with two more, 10 and 4 with ten more; now 8 and 4, 7
// and 5, 8 and 4. The ceilings and floors are the figures measured when
// the rule was set (docs/search.md), with the second held-out sets
// (*-heldout-blind2.yaml) added since: of their answerable prompts the
// hook refuses none of drupal's and one or none of kenkeep's, and of their
// off-topic ones two or three of drupal's and two or three of kenkeep's.
func TestHookGateYoungKnowledgeBases(t *testing.T) {
	ctx := context.Background()
	type limits struct{ answerableRefused, offTopicRefused int }
	want := map[string]map[int]limits{
		"drupal":  {0: {8, 10}, 2: {7, 12}, 10: {8, 10}},
		"kenkeep": {0: {5, 8}, 2: {6, 8}, 10: {4, 8}},
	}
	for _, c := range []corpus{buildDrupal(t, ""), buildKenkeep(t, "")} {
		leaves := map[string]string{} // id → file
		err := filepath.WalkDir(c.k.NodesDir(), func(p string, d os.DirEntry, err error) error {
			if err == nil && !d.IsDir() && strings.HasSuffix(p, ".md") && d.Name() != "index.md" {
				leaves[strings.TrimSuffix(d.Name(), ".md")] = p
			}
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
		ids := make([]string, 0, len(leaves))
		for id := range leaves {
			ids = append(ids, id)
		}
		slices.Sort(ids)
		for _, others := range []int{0, 2, 10} {
			rng := rand.New(rand.NewSource(int64(others)))
			var got limits
			answerable, offTopic := 0, 0
			for _, set := range c.sets {
				for _, cs := range set.Cases {
					keep := map[string]bool{}
					for _, id := range cs.Expect {
						keep[id] = true
					}
					for len(keep) < len(cs.Expect)+others {
						keep[ids[rng.Intn(len(ids))]] = true
					}
					if len(keep) == 0 {
						keep[ids[rng.Intn(len(ids))]] = true
					}
					src := t.TempDir()
					for id := range keep {
						b, err := os.ReadFile(leaves[id])
						if err != nil {
							t.Fatal(err)
						}
						if err := os.WriteFile(filepath.Join(src, id+".md"), b, 0o644); err != nil {
							t.Fatal(err)
						}
					}
					k, err := searcheval.BuildNodes(ctx, t.TempDir(), src, nil)
					if err != nil {
						t.Fatal(err)
					}
					text, err := hooks.PromptContextText(ctx, k, cs.Prompt, hooks.Options{})
					if err != nil {
						t.Fatal(err)
					}
					if cs.Expect == nil {
						offTopic++
						if text == "" {
							got.offTopicRefused++
						}
						continue
					}
					answerable++
					if text == "" {
						got.answerableRefused++
						t.Logf("%s, %d other leaves: refused %s", c.name, others, cs.ID)
					}
				}
			}
			t.Logf("%s, the expected leaves and %d others: the hook refused %d of %d answerable prompts and %d of %d off-topic ones",
				c.name, others, got.answerableRefused, answerable, got.offTopicRefused, offTopic)
			w := want[c.name][others]
			if got.answerableRefused > w.answerableRefused || got.offTopicRefused < w.offTopicRefused {
				t.Errorf("%s, %d other leaves: refused %d answerable prompts (ceiling %d) and %d off-topic ones (floor %d)",
					c.name, others, got.answerableRefused, w.answerableRefused, got.offTopicRefused, w.offTopicRefused)
			}
		}
	}
}

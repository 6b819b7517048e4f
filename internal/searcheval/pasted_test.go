package searcheval_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kk-project/kk/internal/searcheval"
)

// pastedDir holds material people paste into a prompt beside their
// question: a goroutine dump in a fence, a PHP fatal error and a Python
// traceback as they come, a fenced Go function.
const pastedDir = "../../testdata/retrieval/pasted"

// pasted is one way of pasting a file of pastedDir: after the question or
// before it, joined to it by join (a blank line, or none: the material
// right under the sentence that introduces it).
var pasted = []struct {
	file   string
	before bool
	join   string
}{
	{"goroutines.txt", false, "\n\n"},
	{"php-fatal.txt", false, "\n\n"},
	{"php-fatal.txt", false, "\n"},
	{"python-traceback.txt", true, "\n"},
	{"python-traceback.txt", true, ""},
	{"go-handler.md", false, "\n\n"},
}

// withPasted returns set with the material pasted into every prompt.
func withPasted(set *searcheval.Set, material string, before bool, join string) *searcheval.Set {
	out := &searcheval.Set{Name: set.Name, Cases: make([]searcheval.Case, len(set.Cases))}
	for i, c := range set.Cases {
		q := strings.TrimSpace(c.Prompt)
		if before {
			c.Prompt = material + join + q
		} else {
			c.Prompt = q + join + material
		}
		out.Cases[i] = c
	}
	return out
}

// A log, a stack trace or code pasted beside the question is what the
// question is about, not the question: the hook answers the prompts it
// answers without it and refuses those it refuses without it (the gate
// judges the question), and search still ranks the answer as well as the
// BM25 script does with the same material (MRR). Before, a fenced
// goroutine dump made the hook refuse every prompt of both corpora (its
// names, which no note holds, outweighed the question's), and the dump's
// common words (http, server, handler) put search below the script.
func TestPastedMaterial(t *testing.T) {
	ctx := context.Background()
	for _, c := range []corpus{buildDrupal(t, ""), buildKenkeep(t, "")} {
		hook := ranker(t, c.k, searcheval.RankHook, 0)
		search := ranker(t, c.k, searcheval.RankSearch, 20)
		for _, set := range c.sets {
			clean, err := searcheval.Run(ctx, set, hook)
			if err != nil {
				t.Fatal(err)
			}
			for _, p := range pasted {
				material, err := os.ReadFile(filepath.Join(pastedDir, p.file))
				if err != nil {
					t.Fatal(err)
				}
				noisy := withPasted(set, string(material), p.before, p.join)
				layout := fmt.Sprintf("%s (%q)", p.file, p.join)
				hrep, err := searcheval.Run(ctx, noisy, hook)
				if err != nil {
					t.Fatal(err)
				}
				for i, r := range hrep.Results {
					refused, was := len(r.Ranked) == 0, len(clean.Results[i].Ranked) == 0
					if refused != was {
						t.Errorf("%s %s, %s pasted: the hook refused it: %v; without it: %v", set.Name, r.Case.ID, layout, refused, was)
					}
				}
				srep, err := searcheval.Run(ctx, noisy, search)
				if err != nil {
					t.Fatal(err)
				}
				base, err := searcheval.Run(ctx, noisy, c.baseline.Rank)
				if err != nil {
					t.Fatal(err)
				}
				t.Logf("%s %s, %s pasted: kk %.3f / %.3f, BM25 script %.3f / %.3f (recall@5 / MRR)",
					c.name, set.Name, layout, srep.All.Recall5, srep.All.MRR, base.All.Recall5, base.All.MRR)
				if srep.All.MRR < base.All.MRR-1e-9 {
					t.Errorf("%s %s, %s pasted: MRR %.3f, below the BM25 script's %.3f", c.name, set.Name, layout, srep.All.MRR, base.All.MRR)
				}
			}
		}
	}
}

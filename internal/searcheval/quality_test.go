package searcheval_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kk-project/kk/internal/searcheval"
	"github.com/kk-project/kk/internal/store"
)

// The retrieval quality floors, on the two public corpora beside the
// repository (shared/fixtures):
//
//   - the drupal pack (141 leaves) with its development set (48 cases)
//     and kenkeep's golden set over it (22 cases);
//   - kenkeep's own knowledge base (84 leaves) with its development set
//     (40 cases);
//   - on each, two held-out sets of 40 questions written blind from the
//     notes by two writers over two draws (testdata/retrieval/*-heldout-blind.yaml
//     and *-heldout-blind2.yaml), which nothing was tuned on.
//
// Each is scored without phrasings (the headline figures) and with
// phrasings written blind, from the notes alone, by a writer who never saw
// a query set (testdata/retrieval/*-phrasings-blind.yaml), beside the BM25
// reference script's figures (its Go port, LoadBaseline). The ranking's
// values were not chosen on either corpus alone (docs/search.md). The
// floors are the figures measured when they were set (docs/benchmarks.md);
// a change to ranking that lowers any of them fails. On the two
// development sets, without phrasings, every style must also score at or
// above the BM25 script (againstBaseline). On the held-out sets kk is not
// above it everywhere (kenkeep's MRR, drupal's related MRR: docs/search.md
// gives the figures), so they hold floors only.

const (
	drupalPack = "../../../shared/fixtures/kenkeep-pack-drupal"
	devSet     = "../../../shared/fixtures/retrieval-dev-queries.yaml"
	goldenSet  = "../../testdata/retrieval/kenkeep-golden-queries.yaml"
	phrasings  = "../../testdata/retrieval/drupal-phrasings.yaml"

	drupalBlind  = "../../testdata/retrieval/drupal-phrasings-blind.yaml"
	kenkeepBlind = "../../testdata/retrieval/kenkeep-kb-phrasings-blind.yaml"

	// The held-out sets: questions written blind from the notes alone, by
	// a writer who never saw the development sets, any phrasings or any
	// ranking, over leaves drawn at random (each file's header says how).
	// No value of the ranking was chosen with them.
	drupalHeldout  = "../../testdata/retrieval/drupal-heldout-blind.yaml"
	kenkeepHeldout = "../../testdata/retrieval/kenkeep-kb-heldout-blind.yaml"
	// A second held-out set per corpus, written the same way by another
	// writer, over another draw, after the ranking's values were set.
	drupalHeldout2  = "../../testdata/retrieval/drupal-heldout-blind2.yaml"
	kenkeepHeldout2 = "../../testdata/retrieval/kenkeep-kb-heldout-blind2.yaml"
)

type floor struct {
	recall5, mrr float64
}

// floors maps a corpus condition and a query set to each group's floor.
var floors = map[string]map[string]map[string]floor{
	"drupal": {
		"retrieval-dev-queries.yaml": {
			"all": {0.90, 0.81}, "keyword": {1.0, 1.0}, "long": {1.0, 0.83}, "paraphrase": {0.77, 0.67}, "related": {1.0, 0.88},
		},
		"kenkeep-golden-queries.yaml": {"all": {1.0, 0.91}},
		"drupal-heldout-blind.yaml": {
			"all": {0.86, 0.70}, "keyword": {1.0, 0.95}, "long": {1.0, 0.82}, "paraphrase": {0.66, 0.42}, "related": {1.0, 0.87},
		},
		"drupal-heldout-blind2.yaml": {
			"all": {0.97, 0.90}, "keyword": {1.0, 1.0}, "long": {1.0, 1.0}, "paraphrase": {0.93, 0.77}, "related": {1.0, 1.0},
		},
	},
	"drupal+blind": {
		"retrieval-dev-queries.yaml": {
			"all": {0.96, 0.86}, "keyword": {1.0, 1.0}, "long": {1.0, 0.88}, "paraphrase": {0.94, 0.77}, "related": {0.91, 0.87},
		},
		"drupal-heldout-blind.yaml": {
			"all": {0.97, 0.82}, "keyword": {1.0, 1.0}, "long": {1.0, 0.85}, "paraphrase": {0.93, 0.63}, "related": {1.0, 1.0},
		},
	},
	"kenkeep": {
		"retrieval-dev-queries-kenkeep.yaml": {
			"all": {0.83, 0.78}, "keyword": {1.0, 1.0}, "long": {1.0, 0.83}, "paraphrase": {0.60, 0.54}, "related": {1.0, 1.0},
		},
		"kenkeep-kb-heldout-blind.yaml": {
			"all": {0.89, 0.75}, "keyword": {1.0, 0.95}, "long": {0.87, 0.89}, "paraphrase": {0.80, 0.48}, "related": {1.0, 1.0},
		},
		"kenkeep-kb-heldout-blind2.yaml": {
			"all": {0.94, 0.84}, "keyword": {1.0, 1.0}, "long": {1.0, 1.0}, "paraphrase": {0.86, 0.71}, "related": {1.0, 0.68},
		},
	},
	"kenkeep+blind": {
		"retrieval-dev-queries-kenkeep.yaml": {
			"all": {0.94, 0.90}, "keyword": {1.0, 1.0}, "long": {1.0, 0.93}, "paraphrase": {0.86, 0.78}, "related": {1.0, 1.0},
		},
		"kenkeep-kb-heldout-blind.yaml": {
			"all": {0.94, 0.90}, "keyword": {1.0, 1.0}, "long": {0.87, 0.89}, "paraphrase": {0.93, 0.81}, "related": {1.0, 1.0},
		},
	},
}

// againstBaseline names the query sets on which kk's search, without
// phrasings, must score at or above the BM25 reference script in recall@5
// and MRR, overall and for every style: the two development sets.
var againstBaseline = map[string]bool{
	"retrieval-dev-queries.yaml":         true,
	"retrieval-dev-queries-kenkeep.yaml": true,
}

// corpus is one knowledge base built for the tests, its query sets and
// the BM25 reference ranker over the same leaves.
type corpus struct {
	name     string
	k        *store.KB
	sets     []*searcheval.Set
	baseline *searcheval.Baseline
}

// ranker returns the in-process ranker name over k, closed when the test
// ends.
func ranker(t *testing.T, k *store.KB, name string, limit int) searcheval.Ranker {
	t.Helper()
	r, closeRanker, err := searcheval.InProcess(context.Background(), k, name, limit)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(closeRanker)
	return r
}

func loadSet(t *testing.T, path string) *searcheval.Set {
	t.Helper()
	s, err := searcheval.Load(path)
	if err != nil {
		t.Fatalf("%v (the query sets and the corpora live in shared/, beside the repository, as CI has them)", err)
	}
	return s
}

func phrasingsOf(t *testing.T, path string) map[string][]string {
	t.Helper()
	if path == "" {
		return nil
	}
	ph, err := searcheval.LoadPhrasings(path)
	if err != nil {
		t.Fatal(err)
	}
	return ph
}

func buildDrupal(t *testing.T, ph string) corpus {
	t.Helper()
	k, err := searcheval.BuildPack(context.Background(), t.TempDir(), drupalPack, phrasingsOf(t, ph))
	if err != nil {
		t.Fatal(err)
	}
	b, err := searcheval.LoadBaseline(filepath.Join(drupalPack, "knowledge"))
	if err != nil {
		t.Fatal(err)
	}
	name := "drupal"
	if ph != "" {
		name += "+blind"
	}
	return corpus{name, k, []*searcheval.Set{loadSet(t, devSet), loadSet(t, goldenSet), loadSet(t, drupalHeldout), loadSet(t, drupalHeldout2)}, b}
}

func buildKenkeep(t *testing.T, ph string) corpus {
	t.Helper()
	k, err := searcheval.BuildNodes(context.Background(), t.TempDir(), kenkeepNodes, phrasingsOf(t, ph))
	if err != nil {
		t.Fatal(err)
	}
	b, err := searcheval.LoadBaseline(kenkeepNodes)
	if err != nil {
		t.Fatal(err)
	}
	name := "kenkeep"
	if ph != "" {
		name += "+blind"
	}
	return corpus{name, k, []*searcheval.Set{loadSet(t, kenkeepSet), loadSet(t, kenkeepHeldout), loadSet(t, kenkeepHeldout2)}, b}
}

func TestRetrievalQuality(t *testing.T) {
	for _, build := range []func(*testing.T) corpus{
		func(t *testing.T) corpus { return buildDrupal(t, "") },
		func(t *testing.T) corpus { return buildDrupal(t, drupalBlind) },
		func(t *testing.T) corpus { return buildKenkeep(t, "") },
		func(t *testing.T) corpus { return buildKenkeep(t, kenkeepBlind) },
	} {
		c := build(t)
		t.Run(c.name, func(t *testing.T) { checkCorpus(t, c) })
	}
}

func checkCorpus(t *testing.T, c corpus) {
	ctx := context.Background()
	search, closeSearch, err := searcheval.InProcess(ctx, c.k, searcheval.RankSearch, 20)
	if err != nil {
		t.Fatal(err)
	}
	defer closeSearch()
	for _, set := range c.sets {
		rep, err := searcheval.Run(ctx, set, search)
		if err != nil {
			t.Fatal(err)
		}
		base, err := searcheval.Run(ctx, set, c.baseline.Rank)
		if err != nil {
			t.Fatal(err)
		}
		var b strings.Builder
		rep.Write(&b, true)
		t.Logf("%s, %s\n%s\n%s", c.name, set.Name, b.String(), compare(rep, base))
		// Search ranks; it never refuses a prompt that shares a word with
		// some leaf.
		for _, r := range rep.Results {
			if r.Case.Expect != nil && len(r.Ranked) == 0 {
				t.Errorf("%s: search returned nothing for %s", set.Name, r.Case.ID)
			}
		}
		fl := floors[c.name][set.Name]
		if fl == nil && !strings.Contains(c.name, "+") {
			t.Fatalf("no floors for %s %s", c.name, set.Name)
		}
		if againstBaseline[set.Name] && !strings.Contains(c.name, "+") {
			for _, group := range append([]string{"all"}, base.Groups()...) {
				k, b := rep.All, base.All
				if group != "all" {
					k, b = rep.ByGroup[group], base.ByGroup[group]
				}
				if k.Recall5 < b.Recall5-1e-9 || k.MRR < b.MRR-1e-9 {
					t.Errorf("%s %s %s: recall@5 %.3f MRR %.3f, below the BM25 script's %.3f / %.3f", c.name, set.Name, group, k.Recall5, k.MRR, b.Recall5, b.MRR)
				}
			}
		}
		for group, f := range fl {
			s := rep.All
			if group != "all" {
				s = rep.ByGroup[group]
			}
			if s.N == 0 || s.Recall5 < f.recall5-1e-9 || s.MRR < f.mrr-1e-9 {
				t.Errorf("%s %s %s: recall@5 %.3f MRR %.3f (n=%d), floor %.3f / %.3f", c.name, set.Name, group, s.Recall5, s.MRR, s.N, f.recall5, f.mrr)
			}
		}
	}
}

// compare renders kk's figures beside the baseline's, by group.
func compare(kk, base *searcheval.Report) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%-12s %-15s %-15s\n", "group", "kk r@5/MRR", "bm25 r@5/MRR")
	row := func(g string, k, s searcheval.Summary) {
		fmt.Fprintf(&b, "%-12s %.3f / %.3f   %.3f / %.3f\n", g, k.Recall5, k.MRR, s.Recall5, s.MRR)
	}
	row("all", kk.All, base.All)
	for _, g := range kk.Groups() {
		row(g, kk.ByGroup[g], base.ByGroup[g])
	}
	return b.String()
}

// The prompt-context hook's gate: it injects what search ranks first for
// every answerable prompt, and nothing for a share of the off-topic ones
// (refusal cases). Answerable prompts it refuses: none, on either corpus,
// with or without phrasings; and phrasings, whose everyday words widen
// what search finds, do not lower the refusals (the gate judges a text
// against the notes' own words).
func TestHookGate(t *testing.T) {
	ctx := context.Background()
	// The least share of the refusal cases the hook must refuse, by set:
	// the figures measured when the gate was set (docs/search.md).
	minRefused := map[string]int{
		"retrieval-dev-queries.yaml":         3, // of 4
		"kenkeep-golden-queries.yaml":        2, // of 2
		"retrieval-dev-queries-kenkeep.yaml": 0, // of 3
		"drupal-heldout-blind.yaml":          2, // of 3
		"kenkeep-kb-heldout-blind.yaml":      0, // of 3
		"drupal-heldout-blind2.yaml":         3, // of 3
		"kenkeep-kb-heldout-blind2.yaml":     1, // of 3
	}
	for _, c := range []corpus{buildDrupal(t, ""), buildKenkeep(t, ""), buildDrupal(t, drupalBlind), buildKenkeep(t, kenkeepBlind)} {
		hook := ranker(t, c.k, searcheval.RankHook, 0)
		search := ranker(t, c.k, searcheval.RankSearch, 5)
		for _, set := range c.sets {
			hrep, err := searcheval.Run(ctx, set, hook)
			if err != nil {
				t.Fatal(err)
			}
			srep, err := searcheval.Run(ctx, set, search)
			if err != nil {
				t.Fatal(err)
			}
			for i, r := range hrep.Results {
				if len(r.Ranked) > 5 {
					t.Errorf("%s: the hook listed %d nodes", r.Case.ID, len(r.Ranked))
				}
				if r.Case.Expect == nil {
					continue
				}
				if len(r.Ranked) == 0 {
					t.Errorf("%s %s: the hook refused an answerable prompt", set.Name, r.Case.ID)
					continue
				}
				// The block lists what search ranks first (the
				// character budget may cut the list short).
				want := srep.Results[i].Ranked
				if fmt.Sprint(r.Ranked) != fmt.Sprint(want[:len(r.Ranked)]) {
					t.Errorf("%s %s: the hook listed %v, search ranks %v", set.Name, r.Case.ID, r.Ranked, want)
				}
			}
			t.Logf("%s %s: the hook refused %d of %d off-topic prompts", c.name, set.Name, hrep.RefusalsPassed, hrep.Refusals)
			if hrep.RefusalsPassed < minRefused[set.Name] {
				t.Errorf("%s: the hook refused %d off-topic prompts of %d; floor %d", set.Name, hrep.RefusalsPassed, hrep.Refusals, minRefused[set.Name])
			}
		}
	}
}

// Hand-written phrasings (testdata/retrieval/drupal-phrasings.yaml, written
// by people who had read the development set, so never a headline figure)
// and the blind ones each name every leaf of the pack.
func TestPhrasingsNameLeavesOfThePack(t *testing.T) {
	for _, file := range []string{phrasings, drupalBlind} {
		ph := phrasingsOf(t, file)
		n := 0
		err := filepath.WalkDir(filepath.Join(drupalPack, "knowledge"), func(p string, d os.DirEntry, err error) error {
			if err == nil && !d.IsDir() && strings.HasSuffix(p, ".md") && d.Name() != "index.md" {
				n++
				if len(ph[strings.TrimSuffix(d.Name(), ".md")]) < 2 {
					t.Errorf("%s: %s has fewer than two phrasings", file, d.Name())
				}
			}
			return err
		})
		if err != nil || n != 141 || len(ph) != n {
			t.Fatalf("%s: %d leaves, %d with phrasings, %v", file, n, len(ph), err)
		}
	}
}

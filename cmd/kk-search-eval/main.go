// Command kk-search-eval scores a ranker against query sets in kenkeep's
// golden-queries.yaml schema (recall@1/3/5, MRR, pass@5 overall and by
// style, refusals, misses); see internal/searcheval and docs/search.md.
//
// In-process, on a kenkeep v2 pack migrated into a temporary knowledge
// base, or on a copy of a v3 nodes/ tree (optionally with the phrasings
// of a phrasings file):
//
//	go run ./cmd/kk-search-eval -pack ../shared/fixtures/kenkeep-pack-drupal ../shared/fixtures/retrieval-dev-queries.yaml
//	go run ./cmd/kk-search-eval -nodes ../shared/fixtures/kenkeep-kb/nodes \
//	    -phrasings testdata/retrieval/kenkeep-kb-phrasings-blind.yaml ../shared/fixtures/retrieval-dev-queries-kenkeep.yaml
//
// -ranker hook scores the prompt-context hook's injected block instead of
// search; -ranker bm25 the BM25 reference script's ranking (its Go port)
// over the same leaves. Any other ranker, as a shell command with {prompt}
// (the shell-quoted prompt) printing ids one per line, or JSON with -json
// naming the list:
//
//	go run ./cmd/kk-search-eval -cmd 'python3 ../shared/tools/bm25-baseline.py NODES {prompt}' -json results QUERIES.yaml
//	go run ./cmd/kk-search-eval -cmd 'kk --root KB search --json --limit 20 {prompt}' -json data.hits QUERIES.yaml
//
// -protocol runs the evaluation protocol over the two public corpora
// beside the repository (-shared): the default ranking's figures, the
// ranking tuned on one corpus scored on the other (both ways), and k-fold
// figures within each corpus (-folds).
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"

	"github.com/kk-project/kk/internal/index"
	"github.com/kk-project/kk/internal/searcheval"
	"github.com/kk-project/kk/internal/store"
)

func main() {
	var o options
	flag.StringVar(&o.pack, "pack", "", "kenkeep v2 pack to search in-process")
	flag.StringVar(&o.nodes, "nodes", "", "v3 nodes/ tree to search in-process")
	flag.StringVar(&o.phrasings, "phrasings", "", "phrasings file giving the leaves their kk_phrasings")
	flag.StringVar(&o.ranker, "ranker", "search", "in-process ranker: search, hook (the prompt-context hook's block) or bm25 (the reference script's ranking)")
	flag.IntVar(&o.limit, "limit", 20, "hits asked of the in-process search")
	flag.StringVar(&o.cmd, "cmd", "", "shell command to rank with instead; {prompt} is the shell-quoted prompt")
	flag.StringVar(&o.json, "json", "", "with -cmd: the output is JSON and this dotted path names the list of ids")
	flag.BoolVar(&o.misses, "misses", true, "list the cases that did not pass")
	flag.BoolVar(&o.protocol, "protocol", false, "run the evaluation protocol over the two public corpora")
	flag.StringVar(&o.shared, "shared", "../shared", "with -protocol: the folder holding fixtures/ (the corpora and their query sets)")
	flag.StringVar(&o.protoPhrasings, "protocol-phrasings", "", "with -protocol: blind (searches the corpora with testdata/retrieval/*-phrasings-blind.yaml) or none")
	flag.IntVar(&o.folds, "folds", 5, "with -protocol: k of the k-fold figures (0: none)")
	flag.IntVar(&o.rounds, "rounds", 2, "with -protocol: rounds of coordinate ascent per tuning")
	flag.Usage = func() {
		fmt.Fprintln(os.Stderr, "usage: kk-search-eval ((-pack DIR | -nodes DIR) [-phrasings FILE] [-ranker search|hook|bm25] | -cmd TEMPLATE [-json PATH]) QUERIES.yaml...")
		fmt.Fprintln(os.Stderr, "       kk-search-eval -protocol [-shared DIR] [-protocol-phrasings blind] [-folds K]")
		flag.PrintDefaults()
	}
	flag.Parse()
	o.sets = flag.Args()
	sources := 0
	for _, s := range []string{o.pack, o.nodes, o.cmd} {
		if s != "" {
			sources++
		}
	}
	if o.protocol {
		if sources != 0 || len(o.sets) != 0 {
			flag.Usage()
			os.Exit(2)
		}
	} else if len(o.sets) == 0 || sources != 1 {
		flag.Usage()
		os.Exit(2)
	}
	var err error
	if o.protocol {
		err = runProtocol(context.Background(), o)
	} else {
		err = run(context.Background(), o)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "kk-search-eval:", err)
		os.Exit(1)
	}
}

type options struct {
	pack, nodes, phrasings, ranker, cmd, json string
	limit                                     int
	misses                                    bool
	protocol                                  bool
	shared, protoPhrasings                    string
	folds, rounds                             int
	sets                                      []string
}

// build makes a knowledge base in a temporary folder from a pack or a
// nodes tree; the returned function removes it.
func build(ctx context.Context, pack, nodes, phrasingsFile string) (*store.KB, func(), error) {
	var phrasings map[string][]string
	if phrasingsFile != "" {
		var err error
		if phrasings, err = searcheval.LoadPhrasings(phrasingsFile); err != nil {
			return nil, nil, err
		}
	}
	dir, err := os.MkdirTemp("", "kk-search-eval-")
	if err != nil {
		return nil, nil, err
	}
	cleanup := func() { _ = os.RemoveAll(dir) }
	var k *store.KB
	if pack != "" {
		k, err = searcheval.BuildPack(ctx, dir, pack, phrasings)
	} else {
		k, err = searcheval.BuildNodes(ctx, dir, nodes, phrasings)
	}
	if err != nil {
		cleanup()
		return nil, nil, err
	}
	return k, cleanup, nil
}

func run(ctx context.Context, o options) error {
	var rank searcheval.Ranker
	switch {
	case o.cmd != "":
		rank = searcheval.CommandRanker(o.cmd, o.json)
	case o.ranker == "bm25":
		dir := o.nodes
		if o.pack != "" {
			dir = filepath.Join(o.pack, "knowledge")
		}
		b, err := searcheval.LoadBaseline(dir)
		if err != nil {
			return err
		}
		rank = b.Rank
	default:
		k, cleanup, err := build(ctx, o.pack, o.nodes, o.phrasings)
		if err != nil {
			return err
		}
		defer cleanup()
		r, closeFn, err := searcheval.InProcess(ctx, k, o.ranker, o.limit)
		if err != nil {
			return err
		}
		defer closeFn()
		rank = r
	}
	for _, path := range o.sets {
		set, err := searcheval.Load(path)
		if err != nil {
			return err
		}
		rep, err := searcheval.Run(ctx, set, rank)
		if err != nil {
			return err
		}
		rep.Write(os.Stdout, o.misses)
	}
	return nil
}

func runProtocol(ctx context.Context, o options) error {
	fixtures := filepath.Join(o.shared, "fixtures")
	type spec struct {
		name, pack, nodes, queries, phrasings string
	}
	specs := []spec{
		{"drupal", filepath.Join(fixtures, "kenkeep-pack-drupal"), "", filepath.Join(fixtures, "retrieval-dev-queries.yaml"), "testdata/retrieval/drupal-phrasings-blind.yaml"},
		{"kenkeep", "", filepath.Join(fixtures, "kenkeep-kb", "nodes"), filepath.Join(fixtures, "retrieval-dev-queries-kenkeep.yaml"), "testdata/retrieval/kenkeep-kb-phrasings-blind.yaml"},
	}
	switch o.protoPhrasings {
	case "", "none":
		for i := range specs {
			specs[i].phrasings = ""
		}
	case "blind":
	default:
		return fmt.Errorf("-protocol-phrasings must be blind or none, not %q", o.protoPhrasings)
	}
	var corpora []searcheval.Named
	for _, s := range specs {
		k, cleanup, err := build(ctx, s.pack, s.nodes, s.phrasings)
		if err != nil {
			return err
		}
		defer cleanup()
		db, _, err := index.Open(ctx, k, "main")
		if err != nil {
			return err
		}
		defer func() { _ = db.Close() }()
		set, err := searcheval.Load(s.queries)
		if err != nil {
			return err
		}
		corpora = append(corpora, searcheval.Named{Name: s.name, Corpus: searcheval.Corpus{Set: set,
			Search: func(ctx context.Context, prompt string, rk *index.Ranking) ([]string, error) {
				hits, err := db.Search(ctx, index.Request{Text: prompt, Limit: o.limit, Ranking: rk})
				ids := make([]string, len(hits))
				for i, h := range hits {
					ids[i] = h.ID
				}
				return ids, err
			}}})
	}
	_, err := searcheval.Protocol(ctx, corpora, searcheval.Grid(), o.folds, o.rounds, os.Stdout)
	return err
}

// Command kk-search-eval scores a ranker against query sets in kenkeep's
// golden-queries.yaml schema (recall@1/3/5, MRR, pass@5 overall and by
// style, refusals, misses); see internal/searcheval.
//
// In-process, on a kenkeep v2 pack migrated into a temporary knowledge
// base (optionally with the phrasings of a phrasings file):
//
//	go run ./cmd/kk-search-eval -pack ../shared/fixtures/kenkeep-pack-drupal \
//	    -phrasings testdata/retrieval/drupal-phrasings.yaml \
//	    ../shared/fixtures/retrieval-dev-queries.yaml testdata/retrieval/kenkeep-golden-queries.yaml
//
// -ranker hook scores the prompt-context hook's injected block instead of
// search. Any other ranker, as a shell command with {prompt} (the
// shell-quoted prompt) printing ids one per line, or JSON with -json
// naming the list:
//
//	go run ./cmd/kk-search-eval -cmd 'python3 ../shared/tools/bm25-baseline.py NODES {prompt}' -json results QUERIES.yaml
//	go run ./cmd/kk-search-eval -cmd 'kk --root KB search --json --limit 20 {prompt}' -json data.hits QUERIES.yaml
package main

import (
	"context"
	"flag"
	"fmt"
	"os"

	"github.com/kk-project/kk/internal/searcheval"
)

func main() {
	var o options
	flag.StringVar(&o.pack, "pack", "", "kenkeep v2 pack to search in-process")
	flag.StringVar(&o.phrasings, "phrasings", "", "phrasings file giving the pack's leaves their kk_phrasings")
	flag.StringVar(&o.ranker, "ranker", "search", "in-process ranker: search or hook (the prompt-context hook's block)")
	flag.IntVar(&o.limit, "limit", 20, "hits asked of the in-process search")
	flag.StringVar(&o.cmd, "cmd", "", "shell command to rank with instead; {prompt} is the shell-quoted prompt")
	flag.StringVar(&o.json, "json", "", "with -cmd: the output is JSON and this dotted path names the list of ids")
	flag.BoolVar(&o.misses, "misses", true, "list the cases that did not pass")
	flag.Usage = func() {
		fmt.Fprintln(os.Stderr, "usage: kk-search-eval (-pack DIR [-phrasings FILE] [-ranker search|hook] | -cmd TEMPLATE [-json PATH]) QUERIES.yaml...")
		flag.PrintDefaults()
	}
	flag.Parse()
	o.sets = flag.Args()
	if len(o.sets) == 0 || (o.pack == "") == (o.cmd == "") {
		flag.Usage()
		os.Exit(2)
	}
	if err := run(context.Background(), o); err != nil {
		fmt.Fprintln(os.Stderr, "kk-search-eval:", err)
		os.Exit(1)
	}
}

type options struct {
	pack, phrasings, ranker, cmd, json string
	limit                              int
	misses                             bool
	sets                               []string
}

func run(ctx context.Context, o options) error {
	var rank searcheval.Ranker
	if o.cmd != "" {
		rank = searcheval.CommandRanker(o.cmd, o.json)
	} else {
		var phrasings map[string][]string
		if o.phrasings != "" {
			var err error
			if phrasings, err = searcheval.LoadPhrasings(o.phrasings); err != nil {
				return err
			}
		}
		dir, err := os.MkdirTemp("", "kk-search-eval-")
		if err != nil {
			return err
		}
		defer os.RemoveAll(dir)
		k, err := searcheval.BuildPack(ctx, dir, o.pack, phrasings)
		if err != nil {
			return err
		}
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

package searcheval

import (
	"context"
	"fmt"
	"hash/fnv"
	"io"

	"github.com/kk-project/kk/internal/index"
)

// The evaluation protocol of kk's ranking (docs/search.md): the values of
// index.DefaultRanking are never judged on the questions they were chosen
// with. For each public corpus it reports
//
//   - the default ranking's figures;
//   - cross-corpus figures: the grid tuned on the other corpus, scored on
//     this one;
//   - k-fold figures: the grid tuned on k-1 folds of this corpus's cases,
//     scored on the fold left out, the held-out results of every fold
//     pooled.

// Named is a corpus with the name the protocol reports it under.
type Named struct {
	Name string
	Corpus
}

// Fold returns the cases of set in fold i of k (by a hash of the case id,
// so a case keeps its fold whatever the order of the file), or, with
// rest, every other case.
func Fold(set *Set, i, k int, rest bool) *Set {
	out := &Set{Name: fmt.Sprintf("%s fold %d/%d", set.Name, i+1, k)}
	if rest {
		out.Name = fmt.Sprintf("%s without fold %d/%d", set.Name, i+1, k)
	}
	for _, c := range set.Cases {
		h := fnv.New32a()
		h.Write([]byte(c.ID))
		if (int(h.Sum32()%uint32(k)) == i) != rest {
			out.Cases = append(out.Cases, c)
		}
	}
	return out
}

// Pool scores the results of several reports as one report.
func Pool(name string, reps ...*Report) *Report {
	out := &Report{Name: name, ByGroup: map[string]Summary{}}
	groups := map[string][]Result{}
	var scored []Result
	for _, r := range reps {
		out.Refusals += r.Refusals
		out.RefusalsPassed += r.RefusalsPassed
		for _, res := range r.Results {
			out.Results = append(out.Results, res)
			if res.Case.Expect == nil {
				continue
			}
			scored = append(scored, res)
			groups[res.Case.Group()] = append(groups[res.Case.Group()], res)
		}
	}
	out.All = summarize(scored)
	for g, rs := range groups {
		out.ByGroup[g] = summarize(rs)
	}
	return out
}

// Protocol runs the protocol over the corpora (two or more) and writes
// each figure to w; folds is k of the k-fold figures (0: none), rounds
// bounds each tuning's coordinate ascent. It returns the reports it
// wrote, keyed "<corpus> default", "<corpus> cross" and "<corpus> folds".
func Protocol(ctx context.Context, corpora []Named, grid []Param, folds, rounds int, w io.Writer) (map[string]*Report, error) {
	out := map[string]*Report{}
	write := func(key string, rep *Report, note string) {
		out[key] = rep
		fmt.Fprintf(w, "\n# %s: %s\n", key, note)
		rep.Write(w, false)
	}
	for _, c := range corpora {
		rep, err := c.Evaluate(ctx, index.DefaultRanking)
		if err != nil {
			return nil, err
		}
		write(c.Name+" default", rep, "index.DefaultRanking")
	}
	for _, test := range corpora {
		var train []Corpus
		for _, c := range corpora {
			if c.Name != test.Name {
				train = append(train, c.Corpus)
			}
		}
		rk, _, err := Tune(ctx, train, grid, index.DefaultRanking, rounds, nil)
		if err != nil {
			return nil, err
		}
		rep, err := test.Evaluate(ctx, rk)
		if err != nil {
			return nil, err
		}
		write(test.Name+" cross", rep, fmt.Sprintf("tuned on the other corpora: %+v", rk))
	}
	if folds < 2 {
		return out, nil
	}
	for _, c := range corpora {
		var held []*Report
		for i := range folds {
			trainSet, testSet := Fold(c.Set, i, folds, true), Fold(c.Set, i, folds, false)
			rk, _, err := Tune(ctx, []Corpus{{Set: trainSet, Search: c.Search}}, grid, index.DefaultRanking, rounds, nil)
			if err != nil {
				return nil, err
			}
			rep, err := Corpus{Set: testSet, Search: c.Search}.Evaluate(ctx, rk)
			if err != nil {
				return nil, err
			}
			held = append(held, rep)
		}
		write(c.Name+" folds", Pool(c.Set.Name, held...), fmt.Sprintf("%d folds, each tuned on the others, held-out results pooled", folds))
	}
	return out, nil
}

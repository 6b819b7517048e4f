// Package searcheval scores a ranker (prompt in, ranked node ids out)
// against a query set in kenkeep's golden-queries.yaml schema. It is the
// Go port of the retrieval scorer kk's ranking work was measured with
// (shared/tools/retrieval-eval.py), with the same metrics:
//
//   - recall@k: the expected ids ranked within k, over min(|expected|, k);
//   - MRR: the mean of 1/rank of the best-ranked expected id (0 if none);
//   - pass@k: every expected id ranked within k;
//   - a refusal case (expect_empty) passes when the ranker returns nothing
//     and is counted apart from the averages.
//
// Cases are grouped by their style key when they have one, else by their
// category.
package searcheval

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"

	"go.yaml.in/yaml/v3"
)

// Categories of a case.
const (
	Retrieval = "retrieval"
	MultiHop  = "multi-hop"
	Refusal   = "refusal"
)

// K is the window of pass@K and the most ids a case may expect.
const K = 5

// Case is one query.
type Case struct {
	ID       string
	Category string
	Style    string
	Prompt   string
	// Expect lists the ids that should rank in the top K; nil for a
	// refusal.
	Expect []string
}

// Group is the name the case is reported under: its style, else its
// category.
func (c Case) Group() string {
	if c.Style != "" {
		return c.Style
	}
	return c.Category
}

// Set is a query set.
type Set struct {
	Name  string
	Cases []Case
}

type rawCase struct {
	ID                 string   `yaml:"id"`
	Category           string   `yaml:"category"`
	Style              string   `yaml:"style"`
	Prompt             string   `yaml:"prompt"`
	ExpectIDsInTopK    []string `yaml:"expect_ids_in_top_k"`
	ExpectEmpty        *bool    `yaml:"expect_empty"`
	ExpectViaBoostOnly string   `yaml:"expect_id_present_only_via_boost"`
}

// Load reads a query set.
func Load(path string) (*Set, error) {
	src, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	name := path
	if i := strings.LastIndexAny(name, `/\`); i >= 0 {
		name = name[i+1:]
	}
	return Parse(name, src)
}

// Parse decodes a query set and checks every case.
func Parse(name string, src []byte) (*Set, error) {
	var doc struct {
		Cases []rawCase `yaml:"cases"`
	}
	if err := yaml.Unmarshal(src, &doc); err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	if len(doc.Cases) == 0 {
		return nil, fmt.Errorf("%s: expected a top-level cases list", name)
	}
	set := &Set{Name: name}
	seen := map[string]bool{}
	for i, r := range doc.Cases {
		label := r.ID
		if label == "" {
			return nil, fmt.Errorf("%s: case %d: id must be a non-empty string", name, i+1)
		}
		if seen[r.ID] {
			return nil, fmt.Errorf("%s: duplicate case id %s", name, r.ID)
		}
		seen[r.ID] = true
		if !slices.Contains([]string{Retrieval, MultiHop, Refusal}, r.Category) {
			return nil, fmt.Errorf("%s: %s: category must be retrieval, multi-hop or refusal", name, label)
		}
		if strings.TrimSpace(r.Prompt) == "" {
			return nil, fmt.Errorf("%s: %s: prompt must be a non-empty string", name, label)
		}
		n := 0
		c := Case{ID: r.ID, Category: r.Category, Style: r.Style, Prompt: r.Prompt}
		if r.ExpectIDsInTopK != nil {
			n++
			if len(r.ExpectIDsInTopK) < 1 || len(r.ExpectIDsInTopK) > K {
				return nil, fmt.Errorf("%s: %s: expect_ids_in_top_k must list 1 to %d ids", name, label, K)
			}
			c.Expect = r.ExpectIDsInTopK
		}
		if r.ExpectViaBoostOnly != "" {
			n++
			c.Expect = []string{r.ExpectViaBoostOnly}
		}
		if r.ExpectEmpty != nil {
			n++
			if !*r.ExpectEmpty {
				return nil, fmt.Errorf("%s: %s: expect_empty must be true", name, label)
			}
		}
		if n != 1 {
			return nil, fmt.Errorf("%s: %s: expected exactly one expectation key", name, label)
		}
		set.Cases = append(set.Cases, c)
	}
	return set, nil
}

// Ranker returns node ids for a prompt, best first.
type Ranker func(ctx context.Context, prompt string) ([]string, error)

// Result is one case's outcome.
type Result struct {
	Case   Case
	Ranked []string
	// Ranks are the 1-based ranks of the expected ids (0: not returned).
	Ranks  []int
	RR     float64
	Recall [3]float64 // at 1, 3 and 5
	Pass   bool
}

// Summary aggregates the results of the scored (non-refusal) cases.
type Summary struct {
	N         int     `json:"n"`
	Recall1   float64 `json:"recall@1"`
	Recall3   float64 `json:"recall@3"`
	Recall5   float64 `json:"recall@5"`
	MRR       float64 `json:"mrr"`
	PassCount int     `json:"pass_count"`
}

// Report is the outcome of a set.
type Report struct {
	Name           string             `json:"label"`
	All            Summary            `json:"all"`
	ByGroup        map[string]Summary `json:"by_group"`
	Refusals       int                `json:"refusals"`
	RefusalsPassed int                `json:"refusals_passed"`
	Results        []Result           `json:"-"`
}

var windows = [3]int{1, 3, 5}

// Score scores one case's ranking.
func Score(c Case, ranked []string) Result {
	ranked = dedupe(ranked)
	r := Result{Case: c, Ranked: ranked}
	if c.Expect == nil {
		r.Pass = len(ranked) == 0
		return r
	}
	r.Pass = true
	first := 0
	for _, e := range c.Expect {
		rank := slices.Index(ranked, e) + 1
		r.Ranks = append(r.Ranks, rank)
		if rank == 0 || rank > K {
			r.Pass = false
		}
		if rank > 0 && (first == 0 || rank < first) {
			first = rank
		}
		for i, k := range windows {
			if rank > 0 && rank <= k {
				r.Recall[i] += 1 / float64(min(len(c.Expect), k))
			}
		}
	}
	if first > 0 {
		r.RR = 1 / float64(first)
	}
	return r
}

func dedupe(ids []string) []string {
	out := make([]string, 0, len(ids))
	for _, id := range ids {
		if id != "" && !slices.Contains(out, id) {
			out = append(out, id)
		}
	}
	return out
}

// Run ranks every case of the set and scores it.
func Run(ctx context.Context, set *Set, rank Ranker) (*Report, error) {
	rep := &Report{Name: set.Name, ByGroup: map[string]Summary{}}
	var errs []error
	for _, c := range set.Cases {
		ranked, err := rank(ctx, c.Prompt)
		if err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", c.ID, err))
		}
		rep.Results = append(rep.Results, Score(c, ranked))
	}
	groups := map[string][]Result{}
	var scored []Result
	for _, r := range rep.Results {
		if r.Case.Expect == nil {
			rep.Refusals++
			if r.Pass {
				rep.RefusalsPassed++
			}
			continue
		}
		scored = append(scored, r)
		groups[r.Case.Group()] = append(groups[r.Case.Group()], r)
	}
	rep.All = summarize(scored)
	for g, rs := range groups {
		rep.ByGroup[g] = summarize(rs)
	}
	return rep, errors.Join(errs...)
}

func summarize(rs []Result) Summary {
	s := Summary{N: len(rs)}
	if s.N == 0 {
		return s
	}
	for _, r := range rs {
		s.Recall1 += r.Recall[0]
		s.Recall3 += r.Recall[1]
		s.Recall5 += r.Recall[2]
		s.MRR += r.RR
		if r.Pass {
			s.PassCount++
		}
	}
	n := float64(s.N)
	s.Recall1 /= n
	s.Recall3 /= n
	s.Recall5 /= n
	s.MRR /= n
	return s
}

// Groups returns the report's group names, sorted.
func (r *Report) Groups() []string {
	var out []string
	for g := range r.ByGroup {
		out = append(out, g)
	}
	slices.Sort(out)
	return out
}

// Write prints the report as retrieval-eval.py does: the overall figures,
// each group's, the refusals, then every miss with the expected ranks and
// the top 5 (when misses is set).
func (r *Report) Write(w io.Writer, misses bool) {
	a := r.All
	fmt.Fprintf(w, "== %s: %d scored cases", r.Name, a.N)
	if r.Refusals > 0 {
		fmt.Fprintf(w, ", %d refusal", r.Refusals)
	}
	fmt.Fprintln(w)
	if a.N > 0 {
		fmt.Fprintf(w, "recall@1 %.3f  recall@3 %.3f  recall@5 %.3f  MRR %.3f  pass@%d %d/%d\n",
			a.Recall1, a.Recall3, a.Recall5, a.MRR, K, a.PassCount, a.N)
	}
	if len(r.ByGroup) > 1 {
		for _, g := range r.Groups() {
			s := r.ByGroup[g]
			fmt.Fprintf(w, "  %-12s n=%-3d r@1 %.3f  r@3 %.3f  r@5 %.3f  MRR %.3f  pass@%d %d/%d\n",
				g, s.N, s.Recall1, s.Recall3, s.Recall5, s.MRR, K, s.PassCount, s.N)
		}
	}
	if r.Refusals > 0 {
		fmt.Fprintf(w, "refusal: %d/%d returned nothing\n", r.RefusalsPassed, r.Refusals)
	}
	if !misses {
		return
	}
	var missed []Result
	for _, res := range r.Results {
		if !res.Pass {
			missed = append(missed, res)
		}
	}
	if len(missed) > 0 {
		fmt.Fprintf(w, "-- misses (%d):\n", len(missed))
	}
	for _, res := range missed {
		top := strings.Join(res.Ranked[:min(K, len(res.Ranked))], ", ")
		if top == "" {
			top = "(nothing)"
		}
		if res.Case.Expect == nil {
			fmt.Fprintf(w, "  %s: expected nothing, got %d ids: %s\n", res.Case.ID, len(res.Ranked), top)
			continue
		}
		var exp []string
		for i, e := range res.Case.Expect {
			rank := "-"
			if res.Ranks[i] > 0 {
				rank = fmt.Sprint(res.Ranks[i])
			}
			exp = append(exp, e+"@"+rank)
		}
		fmt.Fprintf(w, "  %s [%s]: want %s\n      top%d: %s\n", res.Case.ID, res.Case.Group(), strings.Join(exp, ", "), K, top)
	}
}

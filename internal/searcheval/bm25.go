package searcheval

import (
	"context"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"

	"go.yaml.in/yaml/v3"
)

// The BM25 reference ranker that kk's search is measured against: a port
// of shared/tools/bm25-baseline.py, so that the comparison runs in the
// tests with nothing but Go (TestBaselineMatchesTheScript checks the two
// agree where Python is at hand). A document is its title three times,
// its tags and description twice, and its body without the generated
// Related and Citations sections; tokens are lowercase runs of [a-z0-9]
// of two characters or more, less a small stop list, with a crude suffix
// stemmer; k1 1.2, b 0.75.

var baselineStop = map[string]bool{}

func init() {
	for _, w := range strings.Fields("a an and are as at be but by can do does for from how i in is it its of on or our should " +
		"that the this to we what when where which why with you your my me") {
		baselineStop[w] = true
	}
}

var (
	baselineSplit     = regexp.MustCompile(`[^a-z0-9]+`)
	baselineFront     = regexp.MustCompile(`(?s)^---\n(.*?)\n---\n(.*)`)
	baselineGenerated = regexp.MustCompile(`(?s)<!-- kk:(related|citations):start -->.*?<!-- kk:(related|citations):end -->`)
)

func baselineStem(t string) string {
	for _, suf := range []string{"ing", "ed", "es", "s"} {
		if len(t) > len(suf)+3 && strings.HasSuffix(t, suf) {
			return t[:len(t)-len(suf)]
		}
	}
	return t
}

func baselineTokens(s string) []string {
	var out []string
	for _, t := range baselineSplit.Split(strings.ToLower(s), -1) {
		if len(t) >= 2 && !baselineStop[t] {
			out = append(out, baselineStem(t))
		}
	}
	return out
}

// Baseline is the BM25 reference ranker over the leaves of a nodes folder
// (kk's or kenkeep's v3 format, or kenkeep v2).
type Baseline struct {
	ids  []string
	docs [][]string
	tf   []map[string]int
	df   map[string]int
	avg  float64
}

// LoadBaseline reads every leaf under nodesDir (every .md but index.md).
func LoadBaseline(nodesDir string) (*Baseline, error) {
	b := &Baseline{df: map[string]int{}}
	err := filepath.WalkDir(nodesDir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(p, ".md") || d.Name() == "index.md" {
			return err
		}
		src, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		m := baselineFront.FindStringSubmatch(string(src))
		if m == nil {
			return nil
		}
		var fm struct {
			ID          string   `yaml:"id"`
			KKID        string   `yaml:"kk_id"`
			Title       string   `yaml:"title"`
			Description string   `yaml:"description"`
			Summary     string   `yaml:"summary"`
			Tags        []string `yaml:"tags"`
		}
		if err := yaml.Unmarshal([]byte(m[1]), &fm); err != nil {
			return nil // the script skips what it cannot read the same way
		}
		id := fm.KKID
		if id == "" {
			id = fm.ID
		}
		desc := fm.Description
		if desc == "" {
			desc = fm.Summary
		}
		body := baselineGenerated.ReplaceAllString(m[2], "")
		var doc []string
		for range 3 {
			doc = append(doc, baselineTokens(fm.Title)...)
		}
		for range 2 {
			doc = append(doc, baselineTokens(strings.Join(fm.Tags, " "))...)
		}
		for range 2 {
			doc = append(doc, baselineTokens(desc)...)
		}
		doc = append(doc, baselineTokens(body)...)
		b.ids = append(b.ids, id)
		b.docs = append(b.docs, doc)
		return nil
	})
	if err != nil {
		return nil, err
	}
	total := 0
	for _, d := range b.docs {
		tf := map[string]int{}
		for _, t := range d {
			tf[t]++
		}
		for t := range tf {
			b.df[t]++
		}
		b.tf = append(b.tf, tf)
		total += len(d)
	}
	b.avg = float64(total) / float64(max(1, len(b.docs)))
	return b, nil
}

// Rank returns the ids of the leaves sharing a term with prompt, best
// first (ties by id), as the script prints them.
func (b *Baseline) Rank(_ context.Context, prompt string) ([]string, error) {
	q := map[string]bool{}
	for _, t := range baselineTokens(prompt) {
		q[t] = true
	}
	type scored struct {
		id    string
		score float64
	}
	var res []scored
	n := float64(len(b.docs))
	const k1, bb = 1.2, 0.75
	for i, d := range b.docs {
		s := 0.0
		for t := range q {
			f := float64(b.tf[i][t])
			if f == 0 {
				continue
			}
			df := float64(b.df[t])
			idf := math.Log(1 + (n-df+0.5)/(df+0.5))
			s += idf * f * (k1 + 1) / (f + k1*(1-bb+bb*float64(len(d))/b.avg))
		}
		if s > 0 {
			res = append(res, scored{b.ids[i], s})
		}
	}
	slices.SortFunc(res, func(x, y scored) int {
		if x.score != y.score {
			if x.score > y.score {
				return -1
			}
			return 1
		}
		return strings.Compare(x.id, y.id)
	})
	out := make([]string, len(res))
	for i, r := range res {
		out[i] = r.id
	}
	return out, nil
}

package searcheval

import (
	"context"
	"math"
	"strings"
	"testing"
)

const sample = `cases:
  - id: one
    category: retrieval
    style: keyword
    prompt: a b
    expect_ids_in_top_k: [x]
  - id: two
    category: multi-hop
    style: related
    prompt: c d
    expect_ids_in_top_k: [x, y]
  - id: three
    category: multi-hop
    prompt: e
    expect_id_present_only_via_boost: z
  - id: four
    category: refusal
    prompt: off topic
    expect_empty: true
`

func TestScore(t *testing.T) {
	for _, c := range []struct {
		expect, ranked []string
		rr             float64
		recall         [3]float64
		pass           bool
	}{
		{[]string{"x"}, []string{"x", "a"}, 1, [3]float64{1, 1, 1}, true},
		{[]string{"x"}, []string{"a", "b", "x"}, 1.0 / 3, [3]float64{0, 1, 1}, true},
		{[]string{"x"}, []string{"a", "b", "c", "d", "e", "x"}, 1.0 / 6, [3]float64{0, 0, 0}, false},
		{[]string{"x", "y"}, []string{"y", "a", "x"}, 1, [3]float64{1, 1, 1}, true}, // recall@1 capped at min(|E|, 1)
		{[]string{"x", "y"}, []string{"a", "x", "b", "c", "d", "y"}, 0.5, [3]float64{0, 0.5, 0.5}, false},
		{[]string{"x"}, []string{"a", "a", "x"}, 0.5, [3]float64{0, 1, 1}, true}, // repeats count once
		{[]string{"x"}, nil, 0, [3]float64{}, false},
	} {
		r := Score(Case{ID: "c", Expect: c.expect}, c.ranked)
		if math.Abs(r.RR-c.rr) > 1e-9 || r.Recall != c.recall || r.Pass != c.pass {
			t.Errorf("Score(%v, %v) = rr %v recall %v pass %v; want %v %v %v", c.expect, c.ranked, r.RR, r.Recall, r.Pass, c.rr, c.recall, c.pass)
		}
	}
	if r := Score(Case{ID: "r"}, nil); !r.Pass {
		t.Error("a refusal with nothing returned failed")
	}
	if r := Score(Case{ID: "r"}, []string{"x"}); r.Pass {
		t.Error("a refusal with an id returned passed")
	}
}

func TestRun(t *testing.T) {
	set, err := Parse("sample.yaml", []byte(sample))
	if err != nil {
		t.Fatal(err)
	}
	answers := map[string][]string{"a b": {"x"}, "c d": {"y", "q", "r", "s", "t", "x"}, "e": {"q", "z"}, "off topic": {"x"}}
	rep, err := Run(context.Background(), set, func(_ context.Context, prompt string) ([]string, error) { return answers[prompt], nil })
	if err != nil {
		t.Fatal(err)
	}
	if rep.All.N != 3 || rep.Refusals != 1 || rep.RefusalsPassed != 0 || rep.All.PassCount != 2 {
		t.Fatalf("report %+v", rep)
	}
	if math.Abs(rep.All.MRR-(1+1+0.5)/3) > 1e-9 || math.Abs(rep.All.Recall5-(1+0.5+1)/3) > 1e-9 {
		t.Fatalf("all %+v", rep.All)
	}
	if g := rep.Groups(); strings.Join(g, ",") != "keyword,multi-hop,related" {
		t.Fatalf("groups %v", g)
	}
	var b strings.Builder
	rep.Write(&b, true)
	for _, want := range []string{"== sample.yaml: 3 scored cases, 1 refusal", "refusal: 0/1 returned nothing",
		"two [related]: want x@6, y@1", "four: expected nothing, got 1 ids: x"} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("report lacks %q:\n%s", want, b.String())
		}
	}
}

func TestParseErrors(t *testing.T) {
	for _, c := range []struct{ src, want string }{
		{"cases: []", "cases list"},
		{"cases:\n  - {id: a, category: other, prompt: p, expect_empty: true}", "category"},
		{"cases:\n  - {id: a, category: refusal, prompt: p}", "exactly one expectation"},
		{"cases:\n  - {id: a, category: retrieval, prompt: p, expect_ids_in_top_k: [a, b, c, d, e, f]}", "1 to 5 ids"},
		{"cases:\n  - {id: a, category: refusal, prompt: ' ', expect_empty: true}", "prompt"},
		{"cases:\n  - {id: a, category: refusal, prompt: p, expect_empty: true}\n  - {id: a, category: refusal, prompt: q, expect_empty: true}", "duplicate"},
	} {
		if _, err := Parse("s", []byte(c.src)); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%q: %v, want %q", c.src, err, c.want)
		}
	}
}

func TestCommandRanker(t *testing.T) {
	ctx := context.Background()
	lines := CommandRanker(`printf '# ranked\nx\n\n%s\n' {prompt}`, "")
	if ids, err := lines(ctx, "it's y"); err != nil || strings.Join(ids, "|") != "x|it's y" {
		t.Fatalf("lines: %q %v", ids, err)
	}
	js := CommandRanker(`echo '{"data":{"hits":[{"id":"a"},{"id":"b"}]}}'`, "data.hits")
	if ids, err := js(ctx, "p"); err != nil || strings.Join(ids, "|") != "a|b" {
		t.Fatalf("json: %q %v", ids, err)
	}
	if _, err := CommandRanker(`exit 3`, "")(ctx, "p"); err == nil {
		t.Fatal("a failing command gave no error")
	}
	if _, err := CommandRanker(`echo '{"x":1}'`, "data.hits")(ctx, "p"); err == nil {
		t.Fatal("a missing path gave no error")
	}
}

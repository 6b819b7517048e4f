package searcheval_test

import (
	"context"
	"encoding/json"
	"os/exec"
	"slices"
	"testing"

	"github.com/kk-project/kk/internal/searcheval"
)

const (
	kenkeepNodes = "../../../shared/fixtures/kenkeep-kb/nodes"
	kenkeepSet   = "../../../shared/fixtures/retrieval-dev-queries-kenkeep.yaml"
	bm25Script   = "../../../shared/tools/bm25-baseline.py"
)

// The Go port of the BM25 reference ranks as the script does, on every
// prompt of both public query sets (where python3 with PyYAML is at hand).
func TestBaselineMatchesTheScript(t *testing.T) {
	if err := exec.Command("python3", "-c", "import yaml").Run(); err != nil {
		t.Skip("python3 with PyYAML is not available:", err)
	}
	for _, c := range []struct{ nodes, set string }{
		{drupalPack + "/knowledge", devSet},
		{kenkeepNodes, kenkeepSet},
	} {
		b, err := searcheval.LoadBaseline(c.nodes)
		if err != nil {
			t.Fatal(err)
		}
		set, err := searcheval.Load(c.set)
		if err != nil {
			t.Fatal(err)
		}
		for i, cs := range set.Cases {
			if i%6 != 0 {
				continue // a sixth of the prompts keeps the test short
			}
			out, err := exec.Command("python3", bm25Script, c.nodes, cs.Prompt).Output()
			if err != nil {
				t.Fatal(err)
			}
			var res struct {
				Results []struct{ ID string } `json:"results"`
			}
			if err := json.Unmarshal(out, &res); err != nil {
				t.Fatal(err)
			}
			var want []string
			for _, r := range res.Results {
				want = append(want, r.ID)
			}
			got, _ := b.Rank(context.Background(), cs.Prompt)
			if !slices.Equal(got[:min(10, len(got))], want[:min(10, len(want))]) {
				t.Errorf("%s: the port ranks %v, the script %v", cs.ID, got[:min(10, len(got))], want[:min(10, len(want))])
			}
		}
	}
}

package reorg_test

import (
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/kk-project/kk/internal/node"
	"github.com/kk-project/kk/internal/reorg"
	"github.com/kk-project/kk/internal/store"
)

// Ported from kenkeep v1.17 tests/lib/rebalance.test.ts (decideRebalance).
// The thresholds at and across their edges, split-leaf's two gates and the
// sorting are TestRebalanceTrigger; these are the remaining cases.

func kenkeepTriggerKB(t *testing.T, leaves map[string][2][]string) *store.KB {
	t.Helper()
	k := store.New(t.TempDir())
	if err := os.MkdirAll(k.StateDir(), 0o755); err != nil {
		t.Fatal(err)
	}
	for p, tr := range leaves {
		id := strings.TrimSuffix(p[strings.LastIndex(p, "/")+1:], ".md")
		writeLeaf(t, k, &node.Node{Format: node.SchemaVersion, Type: "practice", Title: id, Description: "s",
			Tags: tr[0], ID: id, DerivedFrom: []string{}, RelatesTo: tr[1], DependsOn: []string{}, Confidence: "high",
			Body: []byte("x\n"), Path: p}, nil)
	}
	return k
}

func TestKenkeepLibRebalanceHysteresis(t *testing.T) {
	if !(reorg.BranchOccupancyMin < reorg.FolderOccupancyMax) {
		t.Fatalf("no gap between merge (%d) and split (%d)", reorg.BranchOccupancyMin, reorg.FolderOccupancyMax)
	}
	// A folder inside the band, one at the merge mark, and a root leaf
	// with an edge: nothing to do.
	leaves := map[string][2][]string{"practice-root.md": {nil, {"practice-s0"}}}
	mid := (reorg.BranchOccupancyMin + reorg.FolderOccupancyMax) / 2
	for i := range mid {
		leaves[fmt.Sprintf("settled/practice-s%d.md", i)] = [2][]string{nil, {"practice-root"}}
	}
	for i := range reorg.BranchOccupancyMin {
		leaves[fmt.Sprintf("pair/practice-p%d.md", i)] = [2][]string{nil, {"practice-root"}}
	}
	k := kenkeepTriggerKB(t, leaves)
	actions, err := reorg.RebalanceTrigger(k)
	if err != nil || len(actions) != 0 {
		t.Fatalf("actions %v %v, want none", actionsString(actions), err)
	}
}

func TestKenkeepLibRebalanceGroupsHomelessRootLeaves(t *testing.T) {
	k := kenkeepTriggerKB(t, map[string][2][]string{
		"practice-one.md":   {{"billing", "workflow"}, nil},
		"practice-two.md":   {{"billing"}, nil},
		"practice-three.md": {{"testing"}, nil},
	})
	first, err := reorg.RebalanceTrigger(k)
	if err != nil {
		t.Fatal(err)
	}
	want := "create-branch practice-one.md #billing [practice-one.md practice-two.md]\ncreate-branch practice-three.md\n"
	if got := actionsString(first); got != want {
		t.Errorf("actions:\n%s\nwant\n%s", got, want)
	}
	// The same tree gives the same bytes.
	second, err := reorg.RebalanceTrigger(k)
	if err != nil {
		t.Fatal(err)
	}
	a, _ := json.Marshal(first)
	b, _ := json.Marshal(second)
	if string(a) != string(b) {
		t.Errorf("two triggers differ:\n%s\n%s", a, b)
	}
}

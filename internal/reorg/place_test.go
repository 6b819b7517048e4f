package reorg_test

import (
	"context"
	"errors"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/rogpeppe/go-internal/txtar"

	"github.com/kk-project/kk/internal/contracts"
	"github.com/kk-project/kk/internal/migrate"
	"github.com/kk-project/kk/internal/reorg"
	"github.com/kk-project/kk/internal/store"
)

// TestPlaceGolden places each fixture's v1 tree by its plan and compares
// the result and every file with the fixture. A second run reports
// nothing to do and changes nothing, and the next migration step, okf-v3,
// then converts the placed leaves into a tree that lints clean.
func TestPlaceGolden(t *testing.T) {
	for _, file := range goldenFiles(t, "place") {
		t.Run(strings.TrimSuffix(filepath.Base(file), ".txtar"), func(t *testing.T) {
			ar, err := txtar.ParseFile(file)
			if err != nil {
				t.Fatal(err)
			}
			k := goldenTree(t, ar)
			inv, err := reorg.PlaceInventory(k)
			if err != nil {
				t.Fatal(err)
			}
			data, ok := goldenFile(ar, "plan.json")
			if !ok {
				t.Fatal("fixture has no plan.json")
			}
			var plan contracts.PlacePlan
			decodePlan(t, "place-plan", data, &plan)
			res, err := reorg.ApplyPlacement(context.Background(), k, plan, "test")
			if err != nil {
				t.Fatal(err)
			}
			got := treeSnapshot(t, k)
			got["inventory.json"] = resultJSON(t, inv)
			got["result.json"] = resultJSON(t, res)
			checkGolden(t, file, ar, got)

			before := treeSnapshot(t, k)
			again, err := reorg.ApplyPlacement(context.Background(), k, plan, "test")
			if err != nil {
				t.Fatalf("second run: %v", err)
			}
			if !again.Noop || len(again.Placed) != 0 {
				t.Fatalf("second run did something: %s", resultJSON(t, again))
			}
			if after := treeSnapshot(t, k); !maps.Equal(before, after) {
				t.Fatal("second run changed the tree")
			}
			if inv, err := reorg.PlaceInventory(k); err != nil || !inv.Noop || inv.Detected != 2 {
				t.Fatalf("inventory after placing: %+v, %v", inv, err)
			}

			mig, err := migrate.MigrateOKFv3(context.Background(), k, "test")
			if err != nil {
				t.Fatalf("okf-v3 after placing: %v", err)
			}
			if mig.Converted != len(plan.Placements) {
				t.Fatalf("okf-v3 converted %d leaves, want %d", mig.Converted, len(plan.Placements))
			}
			checkTreeHealthy(t, k)
		})
	}
}

// flatTree writes v1 leaves (nodes/<path> -> front matter lines) into a
// new knowledge base.
func flatTree(t *testing.T, leaves map[string]string) *store.KB {
	t.Helper()
	k := store.New(t.TempDir())
	if err := os.MkdirAll(k.StateDir(), 0o755); err != nil {
		t.Fatal(err)
	}
	for rel, fm := range leaves {
		p := k.NodePath(rel)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte("---\n"+fm+"---\nBody.\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return k
}

func v1Leaf(id, kind string, extra ...string) string {
	return "schema_version: 1\nid: " + id + "\ntitle: " + id + "\nkind: " + kind + "\ntags: []\nsummary: about " + id + "\nrelates_to: []\n" + strings.Join(extra, "")
}

func placePlan(t *testing.T, plan string) contracts.PlacePlan {
	t.Helper()
	var p contracts.PlacePlan
	decodePlan(t, "place-plan", []byte(plan), &p)
	return p
}

func TestPlaceInventory(t *testing.T) {
	k := flatTree(t, map[string]string{
		"practice/practice-b.md": v1Leaf("practice-b", "practice", "confidence: high\n"),
		"map/map-a.md":           v1Leaf("map-a", "map", "confidence: high\n"),
		"practice/practice-c.md": "id: practice-c\ntitle: C\nkind: practice\ntags: [x, 3]\nrelates_to: [map-a]\n",
	})
	res, err := reorg.PlaceInventory(k)
	if err != nil {
		t.Fatal(err)
	}
	if res.Noop || res.Detected != 1 {
		t.Fatalf("inventory: %+v", res)
	}
	var ids, paths []string
	for _, l := range res.Leaves {
		ids = append(ids, l.ID)
		paths = append(paths, l.SourcePath)
	}
	if want := []string{"map-a", "practice-b", "practice-c"}; !slices.Equal(ids, want) {
		t.Fatalf("ids %v, want %v (sorted by id)", ids, want)
	}
	if want := ".ai/kenkeep/nodes/practice/practice-c.md"; paths[2] != want {
		t.Fatalf("source path %q, want %q", paths[2], want)
	}
	if c := res.Leaves[2]; !slices.Equal(c.Tags, []string{"x"}) || !slices.Equal(c.RelatesTo, []string{"map-a"}) || c.Summary != "" {
		t.Fatalf("leaf without a version in the flat layout: %+v", c)
	}
}

func TestPlaceInventoryNoop(t *testing.T) {
	k := store.New(t.TempDir())
	res, err := reorg.PlaceInventory(k)
	if err != nil || !res.Noop || res.Detected != 0 || res.Leaves == nil {
		t.Fatalf("no tree: %+v, %v", res, err)
	}
	k = simTree(t, "practice-a.md||")
	res, err = reorg.PlaceInventory(k)
	if err != nil || !res.Noop || res.Detected != 3 {
		t.Fatalf("v3 tree: %+v, %v", res, err)
	}
}

func TestPlaceInventoryRejectsBadIDs(t *testing.T) {
	k := flatTree(t, map[string]string{
		"practice/practice-a.md": v1Leaf("practice-a", "practice"),
		"map/practice-a.md":      v1Leaf("practice-a", "map"),
	})
	if _, err := reorg.PlaceInventory(k); err == nil || !strings.Contains(err.Error(), "duplicate id practice-a") {
		t.Fatalf("duplicate ids: err = %v", err)
	}
	k = flatTree(t, map[string]string{"practice/x.md": "schema_version: 1\ntitle: X\n"})
	if _, err := reorg.PlaceInventory(k); err == nil || !strings.Contains(err.Error(), `practice/x.md: field "id": a v1 leaf needs a string id`) {
		t.Fatalf("missing id: err = %v", err)
	}
}

// TestPlaceRejects checks that bad plans are rejected naming the JSON
// pointer at fault, and that nothing is written.
func TestPlaceRejects(t *testing.T) {
	for _, c := range []struct {
		name, plan string
		want       []string
	}{
		{"unknown and duplicate", `{"placements": [{"id": "practice-a", "targetFolder": "x"}, {"id": "practice-a", "targetFolder": "y"}, {"id": "map-zz", "targetFolder": "y"}, {"id": "map-b", "targetFolder": "y"}, {"id": "practice-c", "targetFolder": "y"}]}`,
			[]string{
				`/placements/1/id: leaf practice-a is already placed by /placements/0; place each leaf exactly once`,
				`/placements/2/id: no v1 leaf has the id "map-zz"; ` + "`kk place inventory`" + ` lists them`,
			}},
		{"missing", `{"placements": [{"id": "practice-a", "targetFolder": "x"}, {"id": "practice-c", "targetFolder": "x"}]}`,
			[]string{"/placements: leaf map-b (map/map-b.md) is not placed; every leaf `kk place inventory` lists must be placed exactly once"}},
		{"escape", `{"placements": [{"id": "practice-a", "targetFolder": "../x"}, {"id": "map-b", "targetFolder": "/abs"}, {"id": "practice-c", "targetFolder": "x"}]}`,
			[]string{
				`/placements/0/targetFolder: folder "../x" escapes nodes/: it climbs out with ".."; give a folder inside nodes/`,
				`/placements/1/targetFolder: folder "/abs" is absolute; give a folder relative to nodes/`,
			}},
		{"orphan summary", `{"placements": [{"id": "practice-a", "targetFolder": "x/y"}, {"id": "map-b", "targetFolder": "x"}, {"id": "practice-c", "targetFolder": "x"}],
			"folders": [{"folder": "x", "summary": "ok"}, {"folder": "x/y/", "summary": "ok"}, {"folder": "z", "summary": "no leaf"}, {"folder": "x", "summary": "twice"}]}`,
			[]string{
				`/folders/2/folder: no leaf is placed in folder "z" or below it; summaries are for the folders the placements create`,
				`/folders/3/folder: folder "x" already has a summary at /folders/0`,
			}},
		{"summary lines", `{"placements": [{"id": "practice-a", "targetFolder": "x"}, {"id": "map-b", "targetFolder": "x"}, {"id": "practice-c", "targetFolder": "x"}], "folders": [{"folder": "x", "summary": "one\ntwo"}]}`,
			[]string{`/folders/0/summary: a folder summary is one line`}},
		{"collision", `{"placements": [{"id": "practice-a", "targetFolder": "taken"}, {"id": "map-b", "targetFolder": "x"}, {"id": "practice-c", "targetFolder": "x"}]}`,
			[]string{`/placements/0/targetFolder: taken/practice-a.md already exists and kk does not overwrite it`}},
		{"not valid v2", `{"placements": [{"id": "practice-a", "targetFolder": "x"}, {"id": "map-b", "targetFolder": "x"}, {"id": "practice-c", "targetFolder": "x"}]}`,
			[]string{`/placements/2/id: leaf practice/practice-c.md would not be a valid v2 leaf once placed (x/practice-c.md: field "confidence": is required); fix it in place, then apply the plan again`}},
	} {
		t.Run(c.name, func(t *testing.T) {
			leaves := map[string]string{
				"practice/practice-a.md": v1Leaf("practice-a", "practice", "confidence: high\n"),
				"map/map-b.md":           v1Leaf("map-b", "map", "confidence: low\n"),
				"practice/practice-c.md": v1Leaf("practice-c", "practice", "confidence: high\n"),
			}
			if c.name == "not valid v2" {
				leaves["practice/practice-c.md"] = v1Leaf("practice-c", "practice")
			}
			k := flatTree(t, leaves)
			if err := os.MkdirAll(k.NodePath("taken/practice-a.md"), 0o755); err != nil {
				t.Fatal(err)
			}
			before := treeSnapshot(t, k)
			_, err := reorg.ApplyPlacement(context.Background(), k, placePlan(t, c.plan), "test")
			var pe *reorg.MovePlanError
			if !errors.As(err, &pe) {
				t.Fatalf("err = %v, want a MovePlanError", err)
			}
			var got []string
			for _, p := range pe.Problems {
				got = append(got, p.String())
			}
			if !slices.Equal(got, c.want) {
				t.Fatalf("problems:\n got  %q\n want %q", got, c.want)
			}
			if after := treeSnapshot(t, k); !maps.Equal(before, after) {
				t.Fatal("a rejected plan changed the tree")
			}
		})
	}
}

// TestPlaceStepOrder checks that placing refuses a tree that is not at
// version 1 unless the plan is already carried out.
func TestPlaceStepOrder(t *testing.T) {
	k := simTree(t, "x/practice-a.md||")
	_, err := reorg.ApplyPlacement(context.Background(), k, placePlan(t, `{"placements": [{"id": "practice-a", "targetFolder": "y"}]}`), "test")
	if !errors.Is(err, migrate.ErrStepOrder) || !strings.Contains(err.Error(), "this tree has version 3") {
		t.Fatalf("err = %v, want ErrStepOrder", err)
	}
	res, err := reorg.ApplyPlacement(context.Background(), k, placePlan(t, `{"placements": [{"id": "practice-a", "targetFolder": "x/"}]}`), "test")
	if err != nil || !res.Noop {
		t.Fatalf("plan already carried out: %+v, %v", res, err)
	}
}

// TestPlaceFlowFrontMatter places a leaf whose front matter is one flow
// mapping, so every key is written again; it must still read back as v2
// with the same values.
func TestPlaceFlowFrontMatter(t *testing.T) {
	k := flatTree(t, map[string]string{
		"practice/practice-flow.md": "{schema_version: 1, id: practice-flow, title: 'Flow: style', kind: practice, tags: [a, b], summary: s, relates_to: [], confidence: high, x_meta: {b: 2, a: [1, 'x']}}\n",
	})
	if _, err := reorg.ApplyPlacement(context.Background(), k, placePlan(t, `{"placements": [{"id": "practice-flow", "targetFolder": "f"}]}`), "test"); err != nil {
		t.Fatal(err)
	}
	got := readFile(t, k, "f/practice-flow.md")
	want := "---\nschema_version: 2\nid: practice-flow\ntitle: 'Flow: style'\nkind: practice\ntags:\n  - a\n  - b\nsummary: s\nrelates_to: []\nconfidence: high\nx_meta:\n  a:\n    - 1\n    - x\n  b: 2\n---\nBody.\n"
	if got != want {
		t.Fatalf("placed leaf:\n%s\nwant\n%s", got, want)
	}
}

// TestPlaceFolderPrefix: a plan naming its folders as seen from the
// repository (nodes/x/, .ai/kenkeep/nodes/y) places into the folders under
// nodes/, where nodes/x made nodes/nodes/x.
func TestPlaceFolderPrefix(t *testing.T) {
	k := flatTree(t, map[string]string{
		"practice/practice-a.md": v1Leaf("practice-a", "practice", "confidence: high\n"),
		"map/map-b.md":           v1Leaf("map-b", "map", "confidence: high\n"),
	})
	plan := placePlan(t, `{"placements": [{"id": "practice-a", "targetFolder": "nodes/x/"}, {"id": "map-b", "targetFolder": ".ai/kenkeep/nodes/y"}],
		"folders": [{"folder": "nodes/x", "summary": "the x folder"}]}`)
	if _, err := reorg.ApplyPlacement(context.Background(), k, plan, "test"); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{"x/practice-a.md", "y/map-b.md"} {
		if _, err := os.Stat(k.NodePath(p)); err != nil {
			t.Errorf("%s: %v", p, err)
		}
	}
	if _, err := os.Stat(k.NodePath("nodes")); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("nodes/nodes was made: %v", err)
	}
	if again, err := reorg.ApplyPlacement(context.Background(), k, plan, "test"); err != nil || !again.Noop {
		t.Fatalf("second run: %+v, %v", again, err)
	}
}

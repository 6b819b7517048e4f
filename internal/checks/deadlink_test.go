package checks

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// TestLintDeadLinks: a link from a leaf to a leaf path where there is no
// file is reported on its line, with where the leaf it named is now: the
// same id at another path, or the successor the redirect ledger names. A
// link a person wrote is an error; one of the generated Related block a
// finding. Links that lead out of nodes/, to a file that is there (an
// index.md, a leaf kk skips), to the repository root's own files, or to
// a path that is no leaf's (a folder's index.md) are not dead links
// between leaves.
func TestLintDeadLinks(t *testing.T) {
	f := newLintKB(t)
	f.leaf(lintLeaf{id: "practice-x", path: "b/practice-x.md", tags: []string{"t"}})
	f.leaf(lintLeaf{id: "map-new", path: "m/map-new.md", tags: []string{"t"}})
	f.leaf(lintLeaf{id: "map-half", path: "m/map-half.md", tags: []string{"t"}})
	f.leaf(lintLeaf{id: "map-other", path: "m/map-other.md", tags: []string{"t"}})
	f.write("nodes/.redirects.json", `{"map-old": ["map-new"], "map-split": ["map-half", "map-other"]}`)
	f.write("nodes/c/practice-bad.md", "---\ntype: practice\n---\nnot a leaf kk reads\n")
	if err := os.MkdirAll(filepath.Join(f.k.Root, "docs"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(f.k.Root, "docs", "readme.md"), []byte("a file of the repository, linked from its root as a forge does\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	f.rebuild()
	body := "Moved: [x](../a/practice-x.md).\n" + // line 13 of the file
		"Retired: [old](/map-old.md#part) and split: [s](../m/map-split.md).\n" + // 14
		"Gone: [g](practice-gone.md). Fine: [i](../b/index.md), [bad](practice-bad.md), [out](../../../README.md), [folder](../gone/index.md).\n" + // 15
		"Root: [r](/docs/readme.md) [web](https://example.com/a.md)\n" + // 16
		"\n<!-- kk:related:start -->\n# Related\n\n- Related: [practice-x](/a/practice-x.md)\n- Related: [practice-nowhere](/practice-nowhere.md)\n<!-- kk:related:end -->\n" // 21, 22
	f.write("nodes/c/practice-z.md", "---\ntype: practice\ntitle: Z\ndescription: About z\ntags: [t]\nkk_schema_version: 3\nkk_id: practice-z\nkk_derived_from: []\nkk_relates_to: [practice-x, practice-nowhere]\nkk_depends_on: []\nkk_confidence: high\n---\n"+body)
	r := f.lint()
	var got []string
	for _, it := range r.Items {
		if it.Rule == ruleDeadLink {
			got = append(got, fmt.Sprintf("%s %s:%d: %s (fix: %s)", it.Level, it.File, it.Line, it.Message, it.Fix))
		}
	}
	z := ".ai/kenkeep/nodes/c/practice-z.md"
	want := []string{
		"error " + z + ":13: links to ../a/practice-x.md (.ai/kenkeep/nodes/a/practice-x.md), which does not exist; the leaf practice-x moved to .ai/kenkeep/nodes/b/practice-x.md (fix: run `kk doctor --fix`, which relinks it to ../b/practice-x.md)",
		"error " + z + ":14: links to ../m/map-split.md (.ai/kenkeep/nodes/m/map-split.md), which does not exist; map-split was retired and redirects to map-half (.ai/kenkeep/nodes/m/map-half.md), map-other (.ai/kenkeep/nodes/m/map-other.md) (fix: point the link at the leaf among those it means)",
		"error " + z + ":14: links to /map-old.md (.ai/kenkeep/nodes/map-old.md), which does not exist; map-old was retired and redirects to map-new (.ai/kenkeep/nodes/m/map-new.md) (fix: run `kk doctor --fix`, which relinks it to /m/map-new.md)",
		"error " + z + ":15: links to practice-gone.md (.ai/kenkeep/nodes/c/practice-gone.md), which does not exist; no leaf has the id practice-gone (deleted, or renamed without a redirect) (fix: point the link at the leaf that holds this knowledge now, or remove it)",
		"finding " + z + ":21: the generated Related block links to /a/practice-x.md (.ai/kenkeep/nodes/a/practice-x.md), which does not exist; the leaf practice-x moved to .ai/kenkeep/nodes/b/practice-x.md (fix: run `kk doctor --fix`, which renders the Related block again with the link to /b/practice-x.md)",
	}
	if !slices.Equal(got, want) {
		t.Errorf("dead links:\n%s\nwant:\n%s", joinLines(got), joinLines(want))
	}
	if !slices.Contains(lintLines(r, ruleDanglingEdge), "error "+z+": kk_relates_to: practice-nowhere is not the id of any leaf") {
		t.Errorf("the edge that names no leaf is a dangling edge (and its generated link is not reported twice): %v", lintLines(r, ruleDanglingEdge))
	}
}

func joinLines(s []string) string {
	out := ""
	for _, l := range s {
		out += "  " + l + "\n"
	}
	return out
}

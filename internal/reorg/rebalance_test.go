package reorg_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/rogpeppe/go-internal/txtar"

	"github.com/kk-project/kk/internal/benchtree/benchkb"
	"github.com/kk-project/kk/internal/checks"
	"github.com/kk-project/kk/internal/contracts"
	"github.com/kk-project/kk/internal/indexfiles"
	"github.com/kk-project/kk/internal/node"
	"github.com/kk-project/kk/internal/reorg"
	"github.com/kk-project/kk/internal/schema"
	"github.com/kk-project/kk/internal/store"
	"github.com/kk-project/kk/internal/txn"
)

// Golden fixtures: testdata/<kind>/*.txtar hold a tree ("tree/<path under
// .ai/kenkeep>"), a plan ("plan.json") and the expected result
// ("want/result.json") and tree ("want/<path under .ai/kenkeep>", every
// file but .state/). KK_UPDATE=1 rewrites the want/ sections from what the
// code produces; review the diff before committing it.

var updateGolden = os.Getenv("KK_UPDATE") == "1"

func goldenFiles(t *testing.T, kind string) []string {
	t.Helper()
	files, err := filepath.Glob(filepath.Join("testdata", kind, "*.txtar"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no golden fixtures in testdata/%s (%v)", kind, err)
	}
	return files
}

// goldenTree writes the tree/ files of an archive into a new knowledge base.
func goldenTree(t *testing.T, ar *txtar.Archive) *store.KB {
	t.Helper()
	k := store.New(t.TempDir())
	for _, f := range ar.Files {
		rel, ok := strings.CutPrefix(f.Name, "tree/")
		if !ok {
			continue
		}
		p := filepath.Join(k.Dir, filepath.FromSlash(rel))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, f.Data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.MkdirAll(k.StateDir(), 0o755); err != nil {
		t.Fatal(err)
	}
	return k
}

func goldenFile(ar *txtar.Archive, name string) ([]byte, bool) {
	for _, f := range ar.Files {
		if f.Name == name {
			return f.Data, true
		}
	}
	return nil, false
}

// treeSnapshot maps every file under .ai/kenkeep but .state/ to its bytes.
func treeSnapshot(t *testing.T, k *store.KB) map[string]string {
	t.Helper()
	out := map[string]string{}
	err := filepath.WalkDir(k.Dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && d.Name() == ".state" {
			return filepath.SkipDir
		}
		if !d.IsDir() {
			data, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			rel, _ := filepath.Rel(k.Dir, p)
			// A txtar file always ends with a newline, and a folder's
			// index.md, as kenkeep writes it, does not: the golden
			// holds it with one (indexfiles tests the bytes).
			if len(data) > 0 && data[len(data)-1] != '\n' {
				data = append(data, '\n')
			}
			out[filepath.ToSlash(rel)] = string(data)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// checkGolden compares the produced files (result.json and the tree) with
// the archive's want/ sections, or rewrites them under KK_UPDATE=1.
func checkGolden(t *testing.T, file string, ar *txtar.Archive, got map[string]string) {
	t.Helper()
	if updateGolden {
		var keep []txtar.File
		for _, f := range ar.Files {
			if !strings.HasPrefix(f.Name, "want/") {
				keep = append(keep, f)
			}
		}
		names := slices.Sorted(maps.Keys(got))
		for _, name := range names {
			keep = append(keep, txtar.File{Name: "want/" + name, Data: []byte(got[name])})
		}
		ar.Files = keep
		if err := os.WriteFile(file, txtar.Format(ar), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want := map[string]string{}
	for _, f := range ar.Files {
		if name, ok := strings.CutPrefix(f.Name, "want/"); ok {
			want[name] = string(f.Data)
		}
	}
	for _, name := range slices.Sorted(maps.Keys(want)) {
		g, ok := got[name]
		switch {
		case !ok:
			t.Errorf("%s: want/%s: the file was not produced", file, name)
		case g != want[name]:
			t.Errorf("%s: want/%s differs:\n--- got ---\n%s\n--- want ---\n%s", file, name, g, want[name])
		}
	}
	for name := range got {
		if _, ok := want[name]; !ok {
			t.Errorf("%s: %s was produced but is not in want/ (KK_UPDATE=1 refreshes the fixture)", file, name)
		}
	}
}

func resultJSON(t *testing.T, v any) string {
	t.Helper()
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(v); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

// decodePlan checks a plan against its schema, as the CLI does, and decodes it.
func decodePlan(t *testing.T, name string, data []byte, out any) {
	t.Helper()
	doc, err := schema.ParseDocument(data)
	if err != nil {
		t.Fatal(err)
	}
	if err := schema.Validate(name, doc); err != nil {
		t.Fatalf("the plan does not match its schema: %v", err)
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(out); err != nil {
		t.Fatal(err)
	}
}

func rebuild(t *testing.T, k *store.KB) {
	t.Helper()
	if _, err := txn.Rebuild(context.Background(), k, txn.Meta{Command: "test"}, txn.RebuildOptions{}); err != nil {
		t.Fatal(err)
	}
}

// relatedLinks matches the links of generated Related sections.
var relatedLinks = regexp.MustCompile(`(?m)^- (?:Related|Depends on): \[[^\]]*\]\((/[^)]*)\)$`)

// checkTreeHealthy asserts what every applied plan must leave: lint finds
// no error, the index is current, and every generated Related link leads
// to a file that exists.
func checkTreeHealthy(t *testing.T, k *store.KB) {
	t.Helper()
	r, err := checks.Lint(context.Background(), k)
	if err != nil {
		t.Fatal(err)
	}
	if r.Errors > 0 {
		t.Errorf("lint found %d error(s): %+v", r.Errors, r.Items)
	}
	res, err := indexfiles.Check(context.Background(), k)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Changed)+len(res.Removed) > 0 {
		t.Errorf("index is stale after the plan: %v %v", res.Changed, res.Removed)
	}
	tree, err := k.ReadTree(store.LoadOptions{Bodies: true})
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range tree.Leaves {
		for _, m := range relatedLinks.FindAllStringSubmatch(string(n.Body), -1) {
			if _, err := os.Stat(k.NodePath(strings.TrimPrefix(m[1], "/"))); err != nil {
				t.Errorf("%s: Related link %s leads nowhere", n.Path, m[1])
			}
		}
	}
}

// TestRebalanceGolden applies each fixture's plan to its tree and compares
// the result and every file with the fixture; then applies it again, which
// must change nothing and report nothing to do.
func TestRebalanceGolden(t *testing.T) {
	for _, file := range goldenFiles(t, "rebalance") {
		t.Run(strings.TrimSuffix(filepath.Base(file), ".txtar"), func(t *testing.T) {
			ar, err := txtar.ParseFile(file)
			if err != nil {
				t.Fatal(err)
			}
			k := goldenTree(t, ar)
			rebuild(t, k)
			data, ok := goldenFile(ar, "plan.json")
			if !ok {
				t.Fatal("fixture has no plan.json")
			}
			var plan contracts.RebalancePlan
			decodePlan(t, "rebalance-plan", data, &plan)
			res, err := reorg.ApplyRebalance(context.Background(), k, plan, "test")
			if err != nil {
				t.Fatal(err)
			}
			if res.Noop {
				t.Fatal("the first run found nothing to do")
			}
			got := treeSnapshot(t, k)
			got["result.json"] = resultJSON(t, res)
			checkGolden(t, file, ar, got)
			checkTreeHealthy(t, k)

			before := treeSnapshot(t, k)
			again, err := reorg.ApplyRebalance(context.Background(), k, plan, "test")
			if err != nil {
				t.Fatalf("second run: %v", err)
			}
			if !again.Noop || len(again.Moves) != 0 || len(again.Skipped) != len(plan.Operations) {
				t.Fatalf("second run did something: %s", resultJSON(t, again))
			}
			if after := treeSnapshot(t, k); !maps.Equal(before, after) {
				t.Fatal("second run changed the tree")
			}
		})
	}
}

// simTree builds a small v3 tree from leaf specs "<path>|<relates_to,...>|<depends_on,...>"
// and regenerates its index.
func simTree(t *testing.T, specs ...string) *store.KB {
	t.Helper()
	k := store.New(t.TempDir())
	if err := os.MkdirAll(k.StateDir(), 0o755); err != nil {
		t.Fatal(err)
	}
	for _, spec := range specs {
		parts := strings.Split(spec, "|")
		for len(parts) < 3 {
			parts = append(parts, "")
		}
		p := parts[0]
		id := strings.TrimSuffix(filepath.Base(p), ".md")
		n := &node.Node{Format: node.SchemaVersion, Type: strings.SplitN(id, "-", 2)[0], Title: id, Description: "about " + id,
			Tags: []string{"t"}, ID: id, DerivedFrom: []string{}, RelatesTo: splitList(parts[1]), DependsOn: splitList(parts[2]),
			Confidence: "high", Body: []byte("Body of " + id + ".\n"), Path: p}
		writeLeaf(t, k, n, nil)
	}
	// Render once more so every Related link points at the real path.
	tree, err := k.ReadTree(store.LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range tree.Leaves {
		full, err := k.ReadLeaf(n.Path)
		if err != nil {
			t.Fatal(err)
		}
		writeLeaf(t, k, full, tree.Resolve)
	}
	rebuild(t, k)
	return k
}

func splitList(s string) []string {
	if s == "" {
		return []string{}
	}
	return strings.Split(s, ",")
}

func writeLeaf(t *testing.T, k *store.KB, n *node.Node, resolve node.Resolver) {
	t.Helper()
	data, err := n.Render(resolve)
	if err != nil {
		t.Fatal(err)
	}
	p := k.NodePath(n.Path)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, data, 0o644); err != nil {
		t.Fatal(err)
	}
}

func applyJSON(t *testing.T, k *store.KB, plan string) (*reorg.RebalanceResult, error) {
	t.Helper()
	var p contracts.RebalancePlan
	decodePlan(t, "rebalance-plan", []byte(plan), &p)
	return reorg.ApplyRebalance(context.Background(), k, p, "test")
}

func readFile(t *testing.T, k *store.KB, rel string) string {
	t.Helper()
	data, err := os.ReadFile(k.NodePath(rel))
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}

// TestRebalanceRelinks is the stale-link defect of the prior art: after a
// move, the Related sections of the moved leaves and of every leaf linking
// to a moved or retired id point at the current paths, and leaves that do
// not link to anything that moved keep their bytes.
func TestRebalanceRelinks(t *testing.T) {
	k := simTree(t,
		"a/practice-mover.md|map-anchor|",
		"a/practice-stay.md||",
		"map-anchor.md|practice-mover|",
		"b/map-fan.md||practice-mover",
		"b/practice-split.md||",
		"c/practice-bystander.md|practice-stay|",
		"c/map-reader.md|practice-split|practice-mover",
	)
	bystander := readFile(t, k, "c/practice-bystander.md")
	stay := readFile(t, k, "a/practice-stay.md")
	res, err := applyJSON(t, k, `{"operations": [
		{"operation": "create-branch", "folder": "d/e", "summary": "new home", "ids": ["practice-mover", "map-anchor"]},
		{"operation": "split-leaf", "leafId": "practice-split", "folder": "b/split", "summary": "split parts", "children": [
			{"title": "Split one", "summary": "one", "body": "One.", "relates_to": ["practice-mover"]},
			{"title": "Split two", "summary": "two", "body": "Two."}]}]}`)
	if err != nil {
		t.Fatal(err)
	}
	wantRelinked := []string{"b/map-fan.md", "c/map-reader.md"}
	if !slices.Equal(res.Relinked, wantRelinked) {
		t.Fatalf("relinked %v, want %v", res.Relinked, wantRelinked)
	}
	for _, c := range []struct{ file, want string }{
		// A moved leaf's own link to another moved leaf.
		{"d/e/practice-mover.md", "- Related: [map-anchor](/d/e/map-anchor.md)\n"},
		{"d/e/map-anchor.md", "- Related: [practice-mover](/d/e/practice-mover.md)\n"},
		// A leaf that stayed links to a moved leaf.
		{"b/map-fan.md", "- Depends on: [practice-mover](/d/e/practice-mover.md)\n"},
		// An edge to the retired id keeps the id and leads to its successor.
		{"c/map-reader.md", "- Related: [practice-split](/b/split/practice-split-one.md)\n- Depends on: [practice-mover](/d/e/practice-mover.md)\n"},
		// A new leaf links to the moved leaf's new path.
		{"b/split/practice-split-one.md", "- Related: [practice-mover](/d/e/practice-mover.md)\n"},
	} {
		if got := readFile(t, k, c.file); !strings.Contains(got, c.want) {
			t.Errorf("%s lacks %q:\n%s", c.file, c.want, got)
		}
	}
	if got := readFile(t, k, "c/map-reader.md"); !strings.Contains(got, "kk_relates_to:\n  - practice-split\n") {
		t.Errorf("the edge to the retired id was rewritten:\n%s", got)
	}
	if readFile(t, k, "c/practice-bystander.md") != bystander || readFile(t, k, "a/practice-stay.md") != stay {
		t.Error("a leaf linking to nothing that moved was rewritten")
	}
	checkTreeHealthy(t, k)
	r, err := checks.Lint(context.Background(), k)
	if err != nil {
		t.Fatal(err)
	}
	var redirected []string
	for _, it := range r.Items {
		if it.Rule == "redirected-edge" {
			redirected = append(redirected, it.File+": "+it.Message)
		}
	}
	want := []string{".ai/kenkeep/nodes/c/map-reader.md: kk_relates_to: practice-split was retired and now redirects to practice-split-one, practice-split-two"}
	if !slices.Equal(redirected, want) {
		t.Errorf("redirected-edge findings %q, want %q", redirected, want)
	}
}

// TestRebalanceFolderPrefix: a plan that names its folders as seen from
// the repository (nodes/x/, .ai/kenkeep/nodes/keep) means the folders
// under nodes/; nodes/new made nodes/nodes/new.
func TestRebalanceFolderPrefix(t *testing.T) {
	k := simTree(t, "old/practice-a.md||", "keep/practice-b.md||", "map-c.md||")
	if _, err := applyJSON(t, k, `{"operations": [
		{"operation": "merge", "branch": "nodes/old/", "into": ".ai/kenkeep/nodes/keep"},
		{"operation": "create-branch", "folder": "nodes/new/", "summary": "new", "ids": ["map-c"]}]}`); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{"keep/practice-a.md", "new/map-c.md"} {
		if _, err := os.Stat(k.NodePath(p)); err != nil {
			t.Errorf("%s: %v", p, err)
		}
	}
	if _, err := os.Stat(k.NodePath("nodes")); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("nodes/nodes was made: %v", err)
	}
}

// TestRebalanceMoveKeepsBytes checks that a leaf whose links do not change
// moves as the same bytes (git sees a pure rename) and that the folder it
// left is removed.
func TestRebalanceMoveKeepsBytes(t *testing.T) {
	k := simTree(t, "old/practice-a.md||", "keep/practice-b.md||")
	before := readFile(t, k, "old/practice-a.md")
	if _, err := applyJSON(t, k, `{"operations": [{"operation": "merge", "branch": "old", "into": "keep"}]}`); err != nil {
		t.Fatal(err)
	}
	if got := readFile(t, k, "keep/practice-a.md"); got != before {
		t.Fatalf("moved leaf changed:\n%s\nwas\n%s", got, before)
	}
	if _, err := os.Stat(k.NodePath("old")); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("the merged folder is still there: %v", err)
	}
}

// A leaf kenkeep wrote without the optional kk_depends_on and kk_version
// moves as the same bytes too: kk adds nothing to a leaf it only moves
// (kenkeep's moves are byte copies), and the index files follow.
func TestRebalanceMoveKeepsKenkeepBytes(t *testing.T) {
	k := simTree(t, "keep/practice-b.md||")
	kenkeep := "---\ntype: practice\ntitle: A\ndescription: d\ntags: []\nkk_schema_version: 3\nkk_id: practice-a\nkk_derived_from: []\nkk_relates_to: []\nkk_confidence: high\n---\nBody.\n"
	if err := os.MkdirAll(k.NodePath("old"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(k.NodePath("old/practice-a.md"), []byte(kenkeep), 0o644); err != nil {
		t.Fatal(err)
	}
	rebuild(t, k)
	if _, err := applyJSON(t, k, `{"operations": [{"operation": "merge", "branch": "old", "into": "keep"}]}`); err != nil {
		t.Fatal(err)
	}
	if got := readFile(t, k, "keep/practice-a.md"); got != kenkeep {
		t.Fatalf("moved leaf changed:\n%s\nwas\n%s", got, kenkeep)
	}
	if !strings.Contains(readFile(t, k, "keep/index.md"), "keep/practice-a.md") && !strings.Contains(readFile(t, k, "keep/index.md"), "(practice-a.md)") {
		t.Fatalf("keep/index.md does not list the moved leaf:\n%s", readFile(t, k, "keep/index.md"))
	}
	checkTreeHealthy(t, k)
}

// TestRebalanceRejects checks that bad plans are rejected naming the JSON
// pointer at fault, and that nothing is written.
func TestRebalanceRejects(t *testing.T) {
	for _, c := range []struct {
		name, plan string
		want       []string
	}{
		{"unknown id", `{"operations": [{"operation": "create-branch", "folder": "x", "summary": "", "ids": ["practice-a", "practice-nope"]}]}`,
			[]string{`/operations/0/ids/1: no leaf has the id "practice-nope"`}},
		{"later op fails", `{"operations": [
			{"operation": "create-branch", "folder": "x", "summary": "s", "ids": ["practice-a"]},
			{"operation": "merge", "branch": "nowhere/deep", "into": "missing"}]}`,
			[]string{`/operations/1/into: no folder "missing" under nodes/; a merge moves leaves into an existing folder (use create-branch for a new one)`}},
		{"escape", `{"operations": [{"operation": "create-branch", "folder": "../out", "summary": "", "ids": ["practice-a"]}]}`,
			[]string{`/operations/0/folder: folder "../out" escapes nodes/: it climbs out with ".."; give a folder inside nodes/`}},
		{"absolute", `{"operations": [{"operation": "split-leaf", "leafId": "practice-a", "folder": "/etc", "summary": "", "children": [{"title": "x", "summary": "", "body": ""}, {"title": "y", "summary": "", "body": ""}]}]}`,
			[]string{`/operations/0/folder: folder "/etc" is absolute; give a folder relative to nodes/`}},
		{"hidden folder", `{"operations": [{"operation": "create-branch", "folder": "a/.git", "summary": "", "ids": ["practice-a"]}]}`,
			[]string{`/operations/0/folder: folder "a/.git" has a hidden segment ".git"; folder names may not start with "."`}},
		{"duplicate id", `{"operations": [{"operation": "create-branch", "folder": "x", "summary": "", "ids": ["practice-a", "practice-a"]}]}`,
			[]string{`/operations/0/ids/1: leaf practice-a is already listed at /operations/0/ids/0`}},
		{"not in branch", `{"operations": [{"operation": "split-folder", "branch": "f", "groups": [{"subfolder": "s", "summary": "", "ids": ["practice-a", "map-c"]}]}]}`,
			[]string{`/operations/0/groups/0/ids/0: leaf practice-a is in the nodes/ root, not directly in f; split-folder moves the branch's own leaves`}},
		{"overwrite", `{"operations": [{"operation": "create-branch", "folder": "f", "summary": "", "ids": ["practice-a"]}]}`,
			[]string{`/operations/0/ids/0: moving practice-a to f: f/practice-a.md already exists and kk does not overwrite it`}},
		{"merge root", `{"operations": [{"operation": "merge", "branch": ".", "into": "f"}]}`,
			[]string{`/operations/0/branch: the nodes/ root cannot be merged into another folder`}},
		{"merge nothing of its own", `{"operations": [{"operation": "merge", "branch": "p", "into": "f"}]}`,
			[]string{`/operations/0/branch: folder p has no leaves of its own to merge; its leaves are in subfolders`}},
		{"merge into itself", `{"operations": [{"operation": "merge", "branch": "f", "into": "f/"}]}`,
			[]string{`/operations/0/into: merging f into itself moves nothing`}},
		{"child cites retired id", `{"operations": [{"operation": "split-leaf", "leafId": "map-c", "folder": "f", "summary": "", "children": [
			{"title": "C one", "summary": "", "body": "", "relates_to": ["map-c"]}, {"title": "C two", "summary": "", "body": "", "relates_to": ["practice-zzz"]}]}]}`,
			[]string{
				`/operations/0/children/0/relates_to/0: a child cannot relate to the leaf being split; edges to map-c reach the children through the redirect`,
				`/operations/0/children/1/relates_to/0: no leaf has the id "practice-zzz"`,
			}},
		{"split retired", `{"operations": [
			{"operation": "split-leaf", "leafId": "map-c", "folder": "g", "summary": "", "children": [{"title": "C one", "summary": "", "body": ""}, {"title": "C two", "summary": "", "body": ""}]},
			{"operation": "create-branch", "folder": "h", "summary": "", "ids": ["map-c"]}]}`,
			[]string{`/operations/1/ids/0: leaf map-c was retired by a split; it redirects to map-c-one, map-c-two`}},
		{"child title", `{"operations": [{"operation": "split-leaf", "leafId": "map-c", "folder": "g", "summary": "multi\nline", "children": [{"title": "C\none", "summary": "", "body": ""}, {"title": "C two", "summary": "", "body": ""}]}]}`,
			[]string{`/operations/0/children/0/title: a title is one line`}},
		{"summary line", `{"operations": [{"operation": "create-branch", "folder": "x", "summary": "two\nlines", "ids": ["practice-a"]}]}`,
			[]string{`/operations/0/summary: a folder summary is one line`}},
		// Two children of one title (or of titles giving one id) would be two
		// notes a reader cannot tell apart, ids numbered by kk.
		{"duplicate child titles", `{"operations": [{"operation": "split-leaf", "leafId": "map-c", "folder": "g", "summary": "", "children": [
			{"title": "C part", "summary": "", "body": "1"}, {"title": "C two", "summary": "", "body": "2"}, {"title": "C Part", "summary": "", "body": "3"}, {"title": "C part", "summary": "", "body": "4"}]}]}`,
			[]string{
				`/operations/0/children/2/title: "C Part" names the same note as /operations/0/children/0 ("C part", id map-c-part); give each child its own title`,
				`/operations/0/children/3/title: "C part" names the same note as /operations/0/children/0 ("C part", id map-c-part); give each child its own title`,
			}},
	} {
		t.Run(c.name, func(t *testing.T) {
			k := simTree(t, "practice-a.md||", "f/map-c.md||", "p/q/map-d.md||")
			// Something that is not a leaf where practice-a would land in f.
			if err := os.MkdirAll(k.NodePath("f/practice-a.md"), 0o755); err != nil {
				t.Fatal(err)
			}
			before := treeSnapshot(t, k)
			_, err := applyJSON(t, k, c.plan)
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
			if !strings.Contains(err.Error(), "nothing was written") {
				t.Errorf("message does not say nothing was written: %v", err)
			}
			if after := treeSnapshot(t, k); !maps.Equal(before, after) {
				t.Fatal("a rejected plan changed the tree")
			}
		})
	}
}

// TestRebalanceRefusesV2 checks that a tree still holding v2 leaves is not
// rebalanced (its folder summaries live in the old index files).
func TestRebalanceRefusesV2(t *testing.T) {
	k := store.New(t.TempDir())
	if err := os.MkdirAll(k.NodePath("a"), 0o755); err != nil {
		t.Fatal(err)
	}
	v2 := "---\nschema_version: 2\nid: practice-a\ntitle: A\nkind: practice\nsummary: s\nconfidence: high\n---\nBody.\n"
	if err := os.WriteFile(k.NodePath("a/practice-a.md"), []byte(v2), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := applyJSON(t, k, `{"operations": [{"operation": "merge", "branch": "a", "into": ""}]}`)
	if !errors.Is(err, store.ErrNeedsMigration) {
		t.Fatalf("err = %v, want ErrNeedsMigration", err)
	}
}

func TestRebalanceUnknownOperation(t *testing.T) {
	k := simTree(t, "practice-a.md||")
	_, err := reorg.ApplyRebalance(context.Background(), k, contracts.RebalancePlan{Operations: []contracts.RebalanceOperation{{Operation: "explode"}}}, "test")
	if err == nil || !strings.Contains(err.Error(), `/operations/0/operation: unknown operation "explode"`) {
		t.Fatalf("err = %v", err)
	}
}

// TestRebalanceSplitMintsFreshIDs checks that a split never reuses an id the
// tree or the redirect ledger already knows.
func TestRebalanceSplitMintsFreshIDs(t *testing.T) {
	k := simTree(t, "practice-a.md||", "practice-a-part.md||")
	if err := os.WriteFile(k.RedirectsPath(), []byte(`{"practice-old": ["practice-a-part-2"]}`), 0o644); err != nil {
		t.Fatal(err)
	}
	// "A part" would be practice-a-part (a leaf) or -2 (in the ledger);
	// "A part 2" would be practice-a-part-2 (in the ledger).
	res, err := applyJSON(t, k, `{"operations": [{"operation": "split-leaf", "leafId": "practice-a", "folder": ".", "summary": "", "children": [
		{"title": "A part", "summary": "", "body": ""}, {"title": "A part 2", "summary": "", "body": ""}]}]}`)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"practice-a-part-3", "practice-a-part-2-2"}
	if len(res.Moves) != 1 || !slices.Equal(res.Moves[0].NewIDs, want) {
		t.Fatalf("moves %+v, want new ids %v", res.Moves, want)
	}
	ledger := readFile(t, k, ".redirects.json")
	wantLedger := "{\n  \"practice-a\": [\n    \"practice-a-part-3\",\n    \"practice-a-part-2-2\"\n  ],\n  \"practice-old\": [\n    \"practice-a-part-2\"\n  ]\n}\n"
	if ledger != wantLedger {
		t.Fatalf("ledger:\n%s\nwant\n%s", ledger, wantLedger)
	}
}

func actionsString(actions []contracts.RebalanceAction) string {
	var b strings.Builder
	for _, a := range actions {
		fmt.Fprintf(&b, "%s %s", a.Operation, a.Branch)
		if a.Topic != "" {
			fmt.Fprintf(&b, " #%s %v", a.Topic, a.Branches)
		}
		b.WriteString("\n")
	}
	return b.String()
}

// TestRebalanceTrigger checks every threshold at and across its edge.
func TestRebalanceTrigger(t *testing.T) {
	k := store.New(t.TempDir())
	if err := os.MkdirAll(k.StateDir(), 0o755); err != nil {
		t.Fatal(err)
	}
	// add writes a leaf whose title, description and body hold size
	// characters in all (the body gets a trailing newline).
	add := func(p string, tags []string, rel []string, size int) {
		id := strings.TrimSuffix(filepath.Base(p), ".md")
		n := &node.Node{Format: node.SchemaVersion, Type: strings.SplitN(id, "-", 2)[0], Title: id, Description: "",
			Tags: tags, ID: id, DerivedFrom: []string{}, RelatesTo: rel, DependsOn: []string{}, Confidence: "high",
			Body: []byte(strings.Repeat("x", size-len(id)-1)), Path: p}
		writeLeaf(t, k, n, nil)
	}
	// 13 leaves in "crowded" (split), 12 in "full" (no split).
	for i := range 13 {
		add(fmt.Sprintf("crowded/practice-c%02d.md", i), []string{"t"}, []string{"practice-f00"}, 100)
	}
	for i := range 12 {
		add(fmt.Sprintf("full/practice-f%02d.md", i), []string{"t"}, []string{"practice-c00"}, 100)
	}
	// One leaf and no subfolder: merge. One leaf with a subfolder: none.
	add("sparse/practice-s.md", nil, []string{"practice-c00"}, 100)
	add("parent/practice-p.md", nil, []string{"practice-c00"}, 100)
	add("parent/child/practice-q.md", nil, []string{"practice-c00"}, 100)
	add("parent/child/practice-r.md", nil, []string{"practice-c00"}, 100)
	// Leaf size: 6001 characters are 1501 tokens (split), 6000 are 1500
	// (no split); three distinct tags are needed as well.
	add("full2/practice-big.md", []string{"a", "b", "c", "a"}, nil, 6001)
	add("full2/practice-edge.md", []string{"a", "b", "c"}, nil, 6000)
	add("full2/practice-two-tags.md", []string{"a", "b", "b"}, nil, 9000)
	// Homeless root leaves: two share "ops" (most shared; "zz" ties and
	// loses in locale order), one is alone, one has an edge.
	add("map-h1.md", []string{"zz", "ops"}, nil, 100)
	add("map-h2.md", []string{"ops"}, nil, 100)
	add("map-h3.md", []string{"zz"}, nil, 100)
	add("map-h4.md", []string{"solo"}, nil, 100)
	add("map-linked.md", []string{"ops"}, []string{"map-h1"}, 100)
	actions, err := reorg.RebalanceTrigger(k)
	if err != nil {
		t.Fatal(err)
	}
	want := `split-folder crowded
split-leaf full2/practice-big.md
create-branch map-h1.md #ops [map-h1.md map-h2.md]
create-branch map-h3.md
create-branch map-h4.md
merge sparse
`
	if got := actionsString(actions); got != want {
		t.Fatalf("actions:\n%s\nwant\n%s", got, want)
	}
}

func TestRebalanceTriggerEmptyTree(t *testing.T) {
	k := store.New(t.TempDir())
	if err := os.MkdirAll(k.NodesDir(), 0o755); err != nil {
		t.Fatal(err)
	}
	actions, err := reorg.RebalanceTrigger(k)
	if err != nil {
		t.Fatal(err)
	}
	if actions == nil || len(actions) != 0 {
		t.Fatalf("actions = %#v, want an empty list", actions)
	}
}

// BenchmarkRebalanceTrigger10k times `kk rebalance trigger` at 10k leaves
// (budget: 0.5 s): reading the tree through the leaf cache and deciding.
func BenchmarkRebalanceTrigger10k(b *testing.B) {
	k := benchkb.Cached(b, 10000)
	if _, err := k.ReadTree(store.LoadOptions{}); err != nil {
		b.Fatal(err)
	}
	benchkb.Settle()
	for b.Loop() {
		if _, err := reorg.RebalanceTrigger(k); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkDecideRebalance10k times the decision alone.
func BenchmarkDecideRebalance10k(b *testing.B) {
	k := benchkb.Cached(b, 10000)
	t, err := k.ReadTree(store.LoadOptions{})
	if err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		reorg.DecideRebalance(t)
	}
}

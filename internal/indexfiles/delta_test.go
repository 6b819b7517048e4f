package indexfiles

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/kk-project/kk/internal/benchtree"
	"github.com/kk-project/kk/internal/index"
	"github.com/kk-project/kk/internal/node"
	"github.com/kk-project/kk/internal/store"
)

// TestBringForwardMatchesFull: a plan of a tree changed by a few leaves
// (written, rewritten with other tags, titles and links, moved, removed)
// brings the recorded generation forward instead of generating in full,
// and the files it gives are exactly a full generation's, whether it is
// planned on the tree, on the snapshot a handle keeps or on a view of the
// leaf state read on demand.
func TestBringForwardMatchesFull(t *testing.T) {
	ctx := context.Background()
	k, err := benchtree.Generate(t.TempDir(), benchtree.Options{Nodes: 400, Seed: 11})
	if err != nil {
		t.Fatal(err)
	}
	if err := benchtree.Age(k); err != nil {
		t.Fatal(err)
	}
	db, _, err := index.Open(ctx, k, "main")
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = db.Close() }()
	apply := func(p *Plan) {
		t.Helper()
		for name, data := range p.Write {
			path := filepath.Join(k.Dir, filepath.FromSlash(name))
			if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(path, data, 0o644); err != nil {
				t.Fatal(err)
			}
		}
		for _, name := range p.Remove {
			_ = os.Remove(filepath.Join(k.Dir, filepath.FromSlash(name)))
		}
		p.Written()
	}
	tree, _, err := db.Tree(ctx, k.NodesDir(), nil)
	if err != nil {
		t.Fatal(err)
	}
	p, err := PlanFor(ctx, k, db, tree, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	apply(p)
	rng := rand.New(rand.NewPCG(11, 3))
	tags := []string{"api", "cache", "http", "retry", "fresh-tag", "search", "timeout"}
	folders := []string{"", "api-0", "cache-2", "new/deep", "solo"}
	delta := 0
	viewed := 0
	for step := range 40 {
		// The same tree twice: as the snapshot the handle keeps (read
		// through its views by PlanChange) and as a copy to change.
		_, snap, _, err := db.TreeOrSnapshot(ctx, k.NodesDir(), nil)
		if err != nil {
			t.Fatal(err)
		}
		t0, st, err := db.Tree(ctx, k.NodesDir(), nil)
		if err != nil {
			t.Fatal(err)
		}
		// A handle of its own, asked for the tree once.
		fresh, _, err := index.Open(ctx, k, "main")
		if err != nil {
			t.Fatal(err)
		}
		t1, view, _, err := fresh.TreeOrSnapshot(ctx, k.NodesDir(), nil)
		if err != nil {
			t.Fatal(err)
		}
		if _, kept := view.(*store.Snapshot); t1 != nil || view == nil || kept {
			t.Fatalf("step %d: a handle asked for the tree once gave %T, not a view of its leaf state", step, view)
		}
		d := &Delta{Before: st.Hash}
		hashes := map[string]string{}
		var written []string
		for range 1 + rng.IntN(3) {
			var old *node.Node
			if rng.IntN(3) > 0 {
				old = t0.Leaves[rng.IntN(len(t0.Leaves))]
				if slices.ContainsFunc(d.Changes, func(c LeafChange) bool { return c.Old == old }) {
					continue
				}
			}
			if old != nil && rng.IntN(5) == 0 { // removed
				if err := os.Remove(k.NodePath(old.Path)); err != nil {
					t.Fatal(err)
				}
				t0.Remove(old)
				d.Changes = append(d.Changes, LeafChange{Old: old})
				written = append(written, old.Path)
				continue
			}
			id := fmt.Sprintf("practice-step-%d-%d", step, rng.IntN(1000))
			if old != nil {
				id = old.ID
			}
			folder := folders[rng.IntN(len(folders))]
			path := id + ".md"
			if folder != "" {
				path = folder + "/" + path
			}
			if old != nil && rng.IntN(2) == 0 {
				path = old.Path // in place
			}
			if _, taken := t0.Hashes[path]; taken && (old == nil || old.Path != path) {
				continue
			}
			relates := ""
			if rng.IntN(2) == 0 {
				relates = t0.Leaves[rng.IntN(len(t0.Leaves))].ID
			}
			src := fmt.Sprintf("---\ntype: practice\ntitle: Step %d title %d\ndescription: d%d\ntags: [%s, %s]\nkk_schema_version: 3\nkk_id: %s\nkk_derived_from: []\nkk_relates_to: [%s]\nkk_depends_on: []\nkk_confidence: high\n---\nbody\n",
				step, rng.IntN(4), rng.IntN(3), tags[rng.IntN(len(tags))], tags[rng.IntN(len(tags))], id, relates)
			n, err := node.Parse(path, []byte(src))
			if err != nil {
				t.Fatal(err)
			}
			n.Release(false)
			if old != nil {
				if err := os.Remove(k.NodePath(old.Path)); err != nil {
					t.Fatal(err)
				}
				t0.Remove(old)
				written = append(written, old.Path)
			}
			if err := os.MkdirAll(filepath.Dir(k.NodePath(path)), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(k.NodePath(path), []byte(src), 0o644); err != nil {
				t.Fatal(err)
			}
			sum := sha256.Sum256([]byte(src))
			t0.Put(nil, n, hex.EncodeToString(sum[:]))
			hashes[path] = hex.EncodeToString(sum[:])
			d.Changes = append(d.Changes, LeafChange{Old: old, New: n})
			written = append(written, path)
		}
		if len(d.Changes) == 0 {
			_ = fresh.Close()
			continue
		}
		p, err := PlanFor(ctx, k, db, t0, nil, d)
		if err != nil {
			t.Fatal(err)
		}
		if p.delta {
			delta++
		}
		if snap != nil {
			// The plan read from the snapshot and the change is the
			// plan of the changed tree, file for file; the whole tree is
			// asked for only when the plan generates in full.
			asked := false
			pv, err := PlanChange(ctx, k, db, snap, nil, d, hashes, func() *store.Tree { asked = true; return t0 })
			if err != nil {
				t.Fatal(err)
			}
			if pv.delta != p.delta || asked == pv.delta || !slices.Equal(pv.Names(), p.Names()) || !slices.Equal(pv.Remove, p.Remove) {
				t.Fatalf("step %d: the plan on the snapshot (delta %v, whole tree asked %v) writes %v, removes %v; on the tree (delta %v) %v, %v",
					step, pv.delta, asked, pv.Names(), pv.Remove, p.delta, p.Names(), p.Remove)
			}
			for name, data := range p.Write {
				if !bytes.Equal(pv.Write[name], data) {
					t.Fatalf("step %d: %s planned on the snapshot differs from the tree's", step, name)
				}
			}
			viewed++
		}
		// And on a view of the leaf state read on demand (made before
		// the change), as a process's first write reads the tree.
		pl, err := PlanChange(ctx, k, fresh, view, nil, d, hashes, func() *store.Tree { return t0 })
		if err != nil {
			t.Fatal(err)
		}
		if pl.delta != p.delta || !slices.Equal(pl.Names(), p.Names()) || !slices.Equal(pl.Remove, p.Remove) {
			t.Fatalf("step %d: the plan on the view (delta %v) writes %v, removes %v; on the tree (delta %v) %v, %v",
				step, pl.delta, pl.Names(), pl.Remove, p.delta, p.Names(), p.Remove)
		}
		for name, data := range p.Write {
			if !bytes.Equal(pl.Write[name], data) {
				t.Fatalf("step %d: %s planned on the view differs from the tree's", step, name)
			}
		}
		if err := fresh.Close(); err != nil {
			t.Fatal(err)
		}
		summaries, err := os.ReadFile(k.SummariesPath())
		if err != nil && !os.IsNotExist(err) {
			t.Fatal(err)
		}
		parsed, err := store.ParseSummaries(k.SummariesPath(), summaries)
		if err != nil {
			t.Fatal(err)
		}
		if s := k.EntrySummary(); s != "" {
			parsed[""] = s
		}
		want, err := Generate(t0, parsed)
		if err != nil {
			t.Fatal(err)
		}
		apply(p)
		for name, data := range want.Files {
			got, err := os.ReadFile(filepath.Join(k.Dir, filepath.FromSlash(name)))
			if err != nil || !bytes.Equal(got, data) {
				t.Fatalf("step %d (delta %v): %s differs from a full generation (%v)", step, p.delta, name, err)
			}
		}
		if _, err := db.SyncPaths(ctx, k.NodesDir(), nil, written); err != nil {
			t.Fatal(err)
		}
	}
	if delta < 30 {
		t.Fatalf("only %d of 40 plans brought the generation forward", delta)
	}
	if viewed < 30 {
		t.Fatalf("only %d of 40 plans were also made on the snapshot", viewed)
	}
}

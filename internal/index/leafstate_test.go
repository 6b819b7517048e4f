package index

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"maps"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/kk-project/kk/internal/node"
	"github.com/kk-project/kk/internal/store"
)

// TestLeafState checks that a sync of an unchanged tree is answered from
// the leaf state without writing the database, that any change is seen,
// and that a damaged row of the state only makes the sync read that
// folder's files again.
func TestLeafState(t *testing.T) {
	ctx := context.Background()
	k := seedKB(t)
	db, _, err := Open(ctx, k, "main")
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = db.Close() }()
	ex, err := ExtractionFor(k)
	if err != nil {
		t.Fatal(err)
	}
	// The first sync wrote synced_at_ns just now; the leaves are an hour old.
	lastSync := func() string {
		t.Helper()
		v, err := db.Meta(ctx, "last_sync")
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	before := lastSync()
	time.Sleep(5 * time.Millisecond)
	st, err := db.SyncWith(ctx, k.NodesDir(), ex)
	if err != nil || st.Unchanged != 3 || st.Leaves != 3 || st.Changed() {
		t.Fatalf("unchanged sync = %+v, %v", st, err)
	}
	if lastSync() != before {
		t.Fatal("a sync of an unchanged tree wrote the database")
	}

	// An edit is seen.
	writeLeaf(t, k, "auth/login-flow.md", leaf("map-login-flow", "Login flow v2", "Pages and handlers of the login", []string{"auth"}, "", "Changed."))
	age(t, k, "auth/login-flow.md")
	if st, err := db.SyncWith(ctx, k.NodesDir(), ex); err != nil || st.Updated != 1 {
		t.Fatalf("edit: %+v, %v", st, err)
	}
	// A removed leaf is seen.
	if err := os.Remove(k.NodePath("cache/render-cache.md")); err != nil {
		t.Fatal(err)
	}
	if st, err := db.SyncWith(ctx, k.NodesDir(), ex); err != nil || st.Removed != 1 || st.Leaves != 2 {
		t.Fatalf("removal: %+v, %v", st, err)
	}
	// A damaged row (of another process, or a torn disk) is read as
	// unknown: the folder's leaves are read again, found unchanged, and
	// the row written anew.
	if _, err := db.w.ExecContext(ctx, `UPDATE folders SET stat = x'ff00' WHERE dir = 'auth'`); err != nil {
		t.Fatal(err)
	}
	if _, err := db.w.ExecContext(ctx, `UPDATE meta SET value = 'other' WHERE key = 'stat_gen'`); err != nil {
		t.Fatal(err)
	}
	if st, err := db.SyncWith(ctx, k.NodesDir(), ex); err != nil || st.Changed() || st.Leaves != 2 || st.Unchanged != 0 {
		t.Fatalf("damaged row: %+v, %v; want the folder's 2 leaves read again and found unchanged", st, err)
	}
	if st, err := db.SyncWith(ctx, k.NodesDir(), ex); err != nil || st.Unchanged != 2 {
		t.Fatalf("after the damaged row was written anew: %+v, %v", st, err)
	}
}

// TestLeafStateMatchesAFullSync: whatever happens to the tree between
// syncs (leaves written by a transaction and synced by SyncPaths, edited
// by hand, removed, made unreadable, folders added and removed, symlinks
// broken), the state a handle keeps, the state read back from the
// database, and the state a sync of a new index makes from the files are
// the same, and the tree read from it is the one ReadTree parses.
func TestLeafStateMatchesAFullSync(t *testing.T) {
	ctx := context.Background()
	k := seedKB(t)
	db, _, err := Open(ctx, k, "main")
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = db.Close() }()
	rng := rand.New(rand.NewPCG(7, 7))
	names := []string{"a.md", "auth/b.md", "auth/c.md", "x/y/d.md", "x/e.md", "z/f.md"}
	for step := range 120 {
		rel := names[rng.IntN(len(names))]
		var written []string
		switch op := rng.IntN(10); {
		case op < 4: // a transaction's write, synced by SyncPaths
			writeLeaf(t, k, rel, leaf(fmt.Sprintf("practice-w%d", step), fmt.Sprintf("W %d", step), "d", []string{"t"}, "kk_phrasings:\n  - how is w done\n", "b"))
			written = append(written, rel)
		case op < 6: // a hand edit, maybe aged
			writeLeaf(t, k, rel, leaf(fmt.Sprintf("practice-h%d", step), fmt.Sprintf("H %d", step), "d", nil, "", "b"))
			if rng.IntN(2) == 0 {
				age(t, k, rel)
			}
		case op < 7:
			_ = os.Remove(k.NodePath(rel))
			if rng.IntN(2) == 0 {
				written = append(written, rel)
			}
		case op < 8: // a leaf kk cannot read: broken, many problems, v1, an id another leaf has
			switch rng.IntN(4) {
			case 0:
				writeLeaf(t, k, rel, "---\ntitle: [broken\n---\n")
			case 1:
				writeLeaf(t, k, rel, "---\ntype: practice\ntitle: Hand note\nkk_id: practice-hand\n---\nbody\n")
			case 2:
				writeLeaf(t, k, rel, "---\nschema_version: 1\nid: old-one\n---\nbody\n")
			default:
				writeLeaf(t, k, rel, strings.Replace(leaf("practice-twin", "Twin", "d", nil, "", "b"), "kk_id: practice-twin", "kk_id: Practice-Twin", 1))
			}
		case op < 9:
			_ = os.RemoveAll(filepath.Dir(k.NodePath(rel)))
		default:
			_ = os.Symlink("nowhere.md", k.NodePath(strings.TrimSuffix(rel, ".md")+"-link.md"))
		}
		if len(written) > 0 && rng.IntN(2) == 0 {
			// The hash a writer computes of the tree after its change
			// is the one the sync of the change records.
			var gone []string
			put := map[string]string{}
			for _, rel := range written {
				data, err := os.ReadFile(k.NodePath(rel))
				if err != nil {
					gone = append(gone, rel)
					continue
				}
				sum := sha256.Sum256(data)
				put[rel] = hex.EncodeToString(sum[:])
			}
			after, known := "", false
			if s := db.kept.s; s != nil {
				after, known = db.HashAfter(s.hash, gone, put)
			}
			if _, err := db.SyncPaths(ctx, k.NodesDir(), nil, written); err != nil {
				t.Fatalf("step %d: SyncPaths: %v", step, err)
			}
			if s := db.kept.s; known && s.invalid == 0 && after != s.hash {
				t.Fatalf("step %d: HashAfter %s, the sync recorded %s", step, after, s.hash)
			}
			// The summary SyncPaths brought forward is the state's.
			s := db.kept.s
			if hash, invalid, lines := s.summaryLines(); s.hash != hash || s.invalid != invalid || s.lines != nil && !slices.Equal(s.lines, lines) {
				t.Fatalf("step %d: summary after SyncPaths %q %d, want %q %d", step, s.hash, s.invalid, hash, invalid)
			}
			continue
		}
		if _, err := db.Sync(ctx, k.NodesDir()); err != nil {
			t.Fatalf("step %d: sync: %v", step, err)
		}
		checkDF(t, ctx, db, fmt.Sprintf("step %d", step))
		kept := db.kept.s
		db.keep(nil)
		read, err := db.state(ctx, db.r, true)
		if err != nil {
			t.Fatal(err)
		}
		fresh, err := openFile(ctx, filepath.Join(t.TempDir(), "fresh.db"), "main")
		if err != nil {
			t.Fatal(err)
		}
		_, want, err := fresh.sync(ctx, k.NodesDir(), nil, false)
		if err == nil {
			want, err = fresh.state(ctx, fresh.r, true)
		}
		_ = fresh.Close()
		if err != nil {
			t.Fatal(err)
		}
		for _, s := range []*treeState{kept, read} {
			if d := stateDiff(s, want); d != "" {
				t.Fatalf("step %d: %s", step, d)
			}
			if hash, invalid := want.summary(); s.hash != hash || s.invalid != invalid {
				t.Fatalf("step %d: summary %q %d, want %q %d", step, s.hash, s.invalid, hash, invalid)
			}
		}
		got := read.tree(k.NodesDir())
		ref, err := k.ReadTree(store.LoadOptions{})
		if err != nil {
			t.Fatalf("step %d: ReadTree: %v", step, err)
		}
		if d := treeDiff(got, ref); d != "" {
			t.Fatalf("step %d: %s", step, d)
		}
		// A handle that read the state without the leaves' facts (a
		// sync) reads only the facts for a tree.
		db.keep(nil)
		if _, err := db.state(ctx, db.r, false); err != nil {
			t.Fatal(err)
		}
		viaSync, _, err := db.Tree(ctx, k.NodesDir(), nil)
		if err != nil {
			t.Fatal(err)
		}
		if d := treeDiff(viaSync, ref); d != "" {
			t.Fatalf("step %d, facts read after the state: %s", step, d)
		}
		// A sync asked for the facts that finds the tree as recorded
		// reads them with the stats, in one pass.
		db.keep(nil)
		st, withFacts, err := db.sync(ctx, k.NodesDir(), nil, true)
		if err != nil {
			t.Fatal(err)
		}
		if st.Changed() || !withFacts.facts() {
			t.Fatalf("step %d: a sync of the tree as recorded changed %+v, or returned the state without facts", step, st)
		}
		if d := stateDiff(withFacts, want); d != "" {
			t.Fatalf("step %d, facts read with the stats: %s", step, d)
		}
	}
}

// stateDiff tells how state a differs from b, "" when it does not (the
// mtimes of files read only by b's sync aside, which are the same files).
func stateDiff(a, b *treeState) string {
	if !slices.Equal(slices.Sorted(maps.Keys(a.folders)), slices.Sorted(maps.Keys(b.folders))) {
		return fmt.Sprintf("folders %v, want %v", slices.Sorted(maps.Keys(a.folders)), slices.Sorted(maps.Keys(b.folders)))
	}
	for dir, f := range a.folders {
		g := b.folders[dir]
		if !f.sameShape(g) {
			return fmt.Sprintf("folder %q: %+v, want %+v", dir, f, g)
		}
		if len(f.leaves) != len(g.leaves) {
			return fmt.Sprintf("folder %q: leaves %v, want %v", dir, f.leaves, g.leaves)
		}
		for i := range f.leaves {
			if !f.leaves[i].equal(&g.leaves[i]) {
				return fmt.Sprintf("folder %q: leaf %+v, want %+v", dir, f.leaves[i], g.leaves[i])
			}
		}
	}
	return ""
}

// treeDiff tells how tree a differs from b, "" when it does not.
func treeDiff(a, b *store.Tree) string {
	switch {
	case !maps.Equal(a.Hashes, b.Hashes):
		return fmt.Sprintf("hashes %v, want %v", a.Hashes, b.Hashes)
	case !slices.Equal(a.Dirs, b.Dirs) || !maps.Equal(a.IndexDirs, b.IndexDirs):
		return fmt.Sprintf("folders %v %v, want %v %v", a.Dirs, a.IndexDirs, b.Dirs, b.IndexDirs)
	case !slices.Equal(a.Leftovers, b.Leftovers) || !slices.Equal(a.Irregular, b.Irregular):
		return fmt.Sprintf("leftovers %v %v, want %v %v", a.Leftovers, a.Irregular, b.Leftovers, b.Irregular)
	case len(a.Leaves) != len(b.Leaves):
		return fmt.Sprintf("%d leaves, want %d", len(a.Leaves), len(b.Leaves))
	case fmt.Sprint(a.Problems) != fmt.Sprint(b.Problems) || !slices.Equal(a.SkippedPaths(), b.SkippedPaths()):
		return fmt.Sprintf("problems %v, want %v", a.Problems, b.Problems)
	}
	for _, p := range b.Problems {
		if ne, ok := errors.AsType[*node.Error](p); ok && ne.ID != "" {
			if _, claimed := a.Claimed(ne.ID); !claimed {
				return fmt.Sprintf("id %s is not claimed", ne.ID)
			}
		}
		want, _ := errors.AsType[*node.Error](p)
		for _, q := range a.Problems {
			if got, ok := errors.AsType[*node.Error](q); ok && want != nil && got.Path == want.Path && !reflect.DeepEqual(got, want) {
				return fmt.Sprintf("problem %#v, want %#v", got, want)
			}
		}
	}
	for i, n := range b.Leaves {
		m := a.Leaves[i]
		m2, n2 := *m, *n
		n2.Generated, n2.Verified, n2.Sources = nil, nil, nil // not part of a tree's facts
		if fmt.Sprintf("%+v", m2) != fmt.Sprintf("%+v", n2) {
			return fmt.Sprintf("leaf %d: %+v, want %+v", i, m2, n2)
		}
		if got, ok := a.ByID(n.ID); !ok || got != m {
			return fmt.Sprintf("id %s does not lead to %s", n.ID, n.Path)
		}
	}
	return ""
}

// TestBulkSyncKeepsSearch: a sync of many files rebuilds the full-text
// table in one pass; search then finds every leaf, and later small syncs
// (row by row again) keep it current.
func TestBulkSyncKeepsSearch(t *testing.T) {
	ctx := context.Background()
	k := newKB(t)
	var rels []string
	for i := range bulkRows + 20 {
		rel := fmt.Sprintf("bulk/practice-item-%d.md", i)
		writeLeaf(t, k, rel, leaf(fmt.Sprintf("practice-item-%d", i), fmt.Sprintf("Item %d", i), "d", nil, "", fmt.Sprintf("Body word%d here.", i)))
		rels = append(rels, rel)
	}
	age(t, k, rels...)
	db, st, err := Open(ctx, k, "main")
	if err != nil || st.Added != bulkRows+20 {
		t.Fatalf("first sync: %+v, %v", st, err)
	}
	defer func() { _ = db.Close() }()
	for _, q := range []string{"word0", fmt.Sprintf("word%d", bulkRows+19)} {
		if hits, err := holders(ctx, db, q, 5); err != nil || len(hits) != 1 {
			t.Fatalf("%s after the bulk sync: %v, %v", q, ids(hits), err)
		}
	}
	writeLeaf(t, k, rels[3], leaf("practice-item-3", "Item 3", "d", nil, "", "Body replaced."))
	age(t, k, rels[3])
	if st, err := db.Sync(ctx, k.NodesDir()); err != nil || st.Updated != 1 {
		t.Fatalf("small sync: %+v, %v", st, err)
	}
	if hits, _ := holders(ctx, db, "word3", 5); len(hits) != 0 {
		t.Fatalf("word3 still found after the edit: %v", ids(hits))
	}
	if hits, _ := holders(ctx, db, "replaced", 5); len(hits) != 1 || hits[0].ID != "practice-item-3" {
		t.Fatalf("the edit is not searchable: %v", ids(hits))
	}
}

// TestKeptStateFollowsOtherSyncs: a handle keeps the leaf state it
// wrote, and must drop it once another handle (another process) has
// synced: here the other sync records a change that is then undone with
// the original size and mtime, which the kept state would take for
// "unchanged".
func TestKeptStateFollowsOtherSyncs(t *testing.T) {
	ctx := context.Background()
	k := seedKB(t)
	a, _, err := Open(ctx, k, "main")
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = a.Close() }()
	b, _, err := Open(ctx, k, "main")
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = b.Close() }()
	ex, err := ExtractionFor(k)
	if err != nil {
		t.Fatal(err)
	}
	// a writes and keeps its state.
	writeLeaf(t, k, "cache/new-leaf.md", leaf("practice-new-leaf", "New leaf", "d", nil, "", "b"))
	if st, err := a.SyncPaths(ctx, k.NodesDir(), ex, []string{"cache/new-leaf.md"}); err != nil || st.Added != 1 {
		t.Fatalf("SyncPaths: %+v, %v", st, err)
	}
	rel := "auth/login-flow.md"
	fi, err := os.Stat(k.NodePath(rel))
	if err != nil {
		t.Fatal(err)
	}
	v1, _ := os.ReadFile(k.NodePath(rel))
	// b syncs a same-size edit with another mtime.
	v2 := []byte(strings.Replace(string(v1), "Login flow", "Login flaw", 1))
	writeLeaf(t, k, rel, string(v2))
	age(t, k, rel)
	_ = os.Chtimes(k.NodePath(rel), fi.ModTime().Add(time.Minute), fi.ModTime().Add(time.Minute))
	if st, err := b.SyncWith(ctx, k.NodesDir(), ex); err != nil || st.Updated != 1 {
		t.Fatalf("b: %+v, %v", st, err)
	}
	// The edit is undone, with the stat a's kept state recorded.
	writeLeaf(t, k, rel, string(v1))
	_ = os.Chtimes(k.NodePath(rel), fi.ModTime(), fi.ModTime())
	if st, err := a.SyncWith(ctx, k.NodesDir(), ex); err != nil || st.Updated != 1 {
		t.Fatalf("a after b's sync: %+v, %v (the handle trusted the state it kept)", st, err)
	}
	if hits, err := holders(ctx, a, "flaw", 5); err != nil || len(hits) != 0 {
		t.Fatalf("the undone edit is still indexed: %v, %v", ids(hits), err)
	}
}

// DB.Problems gives the problems of a tree read of the committed leaf
// state: none when the summary counts none, else the tree's own.
func TestProblemsAreTheTrees(t *testing.T) {
	ctx := context.Background()
	k := seedKB(t)
	db, _, err := Open(ctx, k, "main")
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = db.Close() }()
	check := func(want int) {
		t.Helper()
		if _, err := db.Sync(ctx, k.NodesDir()); err != nil {
			t.Fatal(err)
		}
		got, err := db.Problems(ctx, k.NodesDir())
		if err != nil {
			t.Fatal(err)
		}
		ref, err := k.ReadTree(store.LoadOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if len(got) != want || fmt.Sprint(got) != fmt.Sprint(ref.Problems) {
			t.Fatalf("problems %v, want %d: %v", got, want, ref.Problems)
		}
	}
	check(0)
	writeLeaf(t, k, "bad/broken.md", "---\ntitle: [\n---\n")
	writeLeaf(t, k, "bad/twin-1.md", leaf("practice-twin", "Twin", "d", nil, "", "b"))
	writeLeaf(t, k, "bad/twin-2.md", strings.Replace(leaf("practice-twin", "Twin", "d", nil, "", "b"), "kk_id: practice-twin", "kk_id: Practice-Twin", 1))
	check(3)
	if err := os.RemoveAll(filepath.Join(k.NodesDir(), "bad")); err != nil {
		t.Fatal(err)
	}
	check(0)
}

// TestKeptTreeFollowsTheState: a handle asked for trees again and again
// (kk serve's) keeps the last one as a snapshot and patches it by the
// folders whose state changed; whatever happens between the reads (a
// transaction's writes synced by SyncPaths, hand edits, leaves kk cannot
// read, ids used twice, folders removed), each tree it hands out is the
// one ReadTree parses, and it is its caller's own: changing one (its
// lists, maps and leaves) changes neither the next nor the snapshot.
func TestKeptTreeFollowsTheState(t *testing.T) {
	ctx := context.Background()
	k := seedKB(t)
	db, _, err := Open(ctx, k, "main")
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = db.Close() }()
	rng := rand.New(rand.NewPCG(3, 9))
	names := []string{"a.md", "auth/b.md", "auth/c.md", "x/y/d.md", "x/e.md", "z/f.md", "z/g.md"}
	for step := range 150 {
		rel := names[rng.IntN(len(names))]
		var written []string
		switch op := rng.IntN(12); {
		case op < 6: // a transaction's write
			writeLeaf(t, k, rel, leaf(fmt.Sprintf("practice-w%d", step), fmt.Sprintf("W %d", step), "d", []string{"t", fmt.Sprint(step % 3)}, "kk_phrasings:\n  - how is w done\n", "b"))
			written = append(written, rel)
		case op < 7: // a hand edit
			writeLeaf(t, k, rel, leaf(fmt.Sprintf("practice-h%d", step), fmt.Sprintf("H %d", step), "d", nil, "kk_relates_to:\n  - practice-w1\n", "b"))
		case op < 8:
			_ = os.Remove(k.NodePath(rel))
			written = append(written, rel)
		case op < 9: // a leaf kk cannot read, or an id another leaf has
			if rng.IntN(2) == 0 {
				writeLeaf(t, k, rel, "---\ntitle: [broken\n---\n")
			} else {
				writeLeaf(t, k, rel, leaf("practice-twin", "Twin", "d", nil, "", "b"))
			}
		case op < 10:
			_ = os.RemoveAll(filepath.Dir(k.NodePath(rel)))
		default:
			if err := os.MkdirAll(k.NodePath("empty/"+fmt.Sprint(step)), 0o755); err != nil {
				t.Fatal(err)
			}
		}
		if len(written) > 0 && rng.IntN(3) > 0 {
			if _, err := db.SyncPaths(ctx, k.NodesDir(), nil, written); err != nil {
				t.Fatalf("step %d: SyncPaths: %v", step, err)
			}
		}
		got, _, err := db.Tree(ctx, k.NodesDir(), nil)
		if err != nil {
			t.Fatal(err)
		}
		ref, err := k.ReadTree(store.LoadOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if d := treeDiff(got, ref); d != "" {
			t.Fatalf("step %d: %s", step, d)
		}
		// The caller's own: change everything it can.
		for _, n := range got.Leaves {
			n.Title = "changed"
			if len(n.Tags) > 0 {
				n.Tags[0] = "changed"
			}
			n.Tags = append(n.Tags, "more")
		}
		if len(got.Leaves) > 0 {
			got.Remove(got.Leaves[0])
		}
		got.Put(nil, &node.Node{Path: "zz/new.md", ID: "practice-new"}, "00")
		got.Hashes["x"], got.IndexDirs["x"] = "y", true
		got.Dirs = append(got.Dirs[:0], "x")
		for _, p := range got.Problems {
			if ne, ok := errors.AsType[*node.Error](p); ok {
				ne.Msg = "changed"
			}
		}
		again, _, err := db.Tree(ctx, k.NodesDir(), nil)
		if err != nil {
			t.Fatal(err)
		}
		if d := treeDiff(again, ref); d != "" {
			t.Fatalf("step %d, after the caller changed its tree: %s", step, d)
		}
	}
	if patched := db.kept.patches; patched < 15 {
		t.Fatalf("the kept tree was patched %d times in 150 steps; want most writes patched", patched)
	}
	// A transaction's write of a leaf is a patch of the kept tree.
	if err := os.RemoveAll(k.NodesDir()); err != nil {
		t.Fatal(err)
	}
	writeLeaf(t, k, "p/one.md", leaf("practice-one", "One", "d", []string{"t"}, "", "b"))
	if _, _, err := db.Tree(ctx, k.NodesDir(), nil); err != nil {
		t.Fatal(err)
	}
	for i := range 3 {
		rel := fmt.Sprintf("p/new-%d.md", i)
		writeLeaf(t, k, rel, leaf(fmt.Sprintf("practice-new-%d", i), "New", "d", []string{"t"}, "", "b"))
		if _, err := db.SyncPaths(ctx, k.NodesDir(), nil, []string{rel}); err != nil {
			t.Fatal(err)
		}
		before := db.kept.patches
		got, _, err := db.Tree(ctx, k.NodesDir(), nil)
		if err != nil {
			t.Fatal(err)
		}
		if db.kept.patches != before+1 || len(got.Leaves) != i+2 {
			t.Fatalf("write %d: %d leaves, patches %d -> %d; want the kept tree patched", i, len(got.Leaves), before, db.kept.patches)
		}
	}
}

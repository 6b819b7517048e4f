package store_test

import (
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"runtime"
	"slices"
	"testing"
	"time"

	"github.com/kk-project/kk/internal/optest"
	"github.com/kk-project/kk/internal/store"
)

// watchOrSkip watches k's tree. Watching needs Linux's inotify; on
// another system reads walk the tree and there is nothing to compare.
// On Linux a watch that cannot be set fails the test.
func watchOrSkip(t *testing.T, k *store.KB) {
	t.Helper()
	if runtime.GOOS != "linux" {
		t.Skip("watching the tree uses Linux's inotify; " + runtime.GOOS + " walks the tree")
	}
	if !store.WatchTree(k) {
		t.Fatal("inotify could not be set up on Linux")
	}
}

// leafText is a leaf kk reads.
func leafText(id, title string) string {
	return fmt.Sprintf("---\ntype: practice\ntitle: %s\ndescription: d\ntags: []\nkk_schema_version: 3\nkk_id: %s\nkk_derived_from: []\nkk_relates_to: []\nkk_depends_on: []\nkk_confidence: high\n---\nbody\n", title, id)
}

// summary is what a tree read is compared by: every leaf's path, title
// and hash, the folders, the folders with an index file, and what else
// the listing names.
func summary(t *testing.T, k *store.KB) string {
	t.Helper()
	tr, err := k.ReadTree(store.LoadOptions{NoSave: true})
	if err != nil {
		t.Fatal(err)
	}
	var leaves []string
	for _, n := range tr.Leaves {
		leaves = append(leaves, n.Path+"|"+n.Title+"|"+tr.Hash(n.Path))
	}
	var index []string
	for d := range tr.IndexDirs {
		index = append(index, d)
	}
	slices.Sort(index)
	return fmt.Sprintf("leaves %q\ndirs %q\nindex %q\nleftovers %q\nirregular %q", leaves, tr.Dirs, index, tr.Leftovers, tr.Irregular)
}

// A watched tree reads exactly as a walked one after every kind of
// change made behind kk's back: leaves written, edited in place (same
// size), removed and renamed; folders made (and filled at once), moved,
// removed; index files, temporary files, symlinks to leaves whose
// target changes elsewhere.
func TestWatchedTreeReadsAsAWalk(t *testing.T) {
	k := optest.NewKB(t)
	watchOrSkip(t, k)
	defer func() { _ = k.Close() }()
	nodes := k.NodesDir()
	r := rand.New(rand.NewPCG(7, 11))
	stamp := 0
	put := func(rel, content string) {
		t.Helper()
		p := filepath.Join(nodes, filepath.FromSlash(rel))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
		// Older than the racy window, so that reads trust the stat
		// instead of reading the file again: a change missed would show.
		stamp++
		old := time.Now().Add(-time.Hour).Add(time.Duration(stamp) * time.Second)
		if err := os.Chtimes(p, old, old); err != nil {
			t.Fatal(err)
		}
	}
	var live []string // leaves made
	seq := 0
	newLeaf := func(dir string) string {
		seq++
		rel := fmt.Sprintf("%sleaf-%d.md", dir, seq)
		put(rel, leafText(fmt.Sprintf("leaf-%d", seq), fmt.Sprintf("Title %03d", seq)))
		live = append(live, rel)
		return rel
	}
	for _, d := range []string{"", "a/", "a/b/", "c/"} {
		newLeaf(d)
	}
	check := func(step string) {
		t.Helper()
		got, want := summary(t, k), summary(t, store.New(k.Root))
		if got != want {
			t.Fatalf("after %s:\nwatched:\n%s\nwalked:\n%s", step, got, want)
		}
	}
	check("the first read")
	ops := []struct {
		name string
		do   func()
	}{
		{"a new leaf", func() { newLeaf([]string{"", "a/", "a/b/", "c/"}[r.IntN(4)]) }},
		{"an edit of the same size", func() {
			if len(live) == 0 {
				return
			}
			rel := live[r.IntN(len(live))]
			p := filepath.Join(nodes, filepath.FromSlash(rel))
			data, _ := os.ReadFile(p)
			if i := slices.Index(data, 'T'); i >= 0 {
				data[i+6] = byte('0' + r.IntN(10))
				put(rel, string(data))
			}
		}},
		{"a removed leaf", func() {
			if len(live) == 0 {
				return
			}
			i := r.IntN(len(live))
			_ = os.Remove(filepath.Join(nodes, filepath.FromSlash(live[i])))
			live = slices.Delete(live, i, i+1)
		}},
		{"a new folder, filled at once", func() {
			seq++
			d := fmt.Sprintf("new-%d/deeper/", seq)
			newLeaf(d)
			newLeaf(d)
			put(d+"index.md", "generated\n")
		}},
		{"a moved folder", func() {
			seq++
			to := fmt.Sprintf("moved-%d", seq)
			if err := os.Rename(filepath.Join(nodes, "a"), filepath.Join(nodes, to)); err == nil {
				_ = os.Rename(filepath.Join(nodes, to), filepath.Join(nodes, "a"))
				_ = os.Rename(filepath.Join(nodes, "a"), filepath.Join(nodes, to))
				for i, rel := range live {
					if len(rel) > 2 && rel[:2] == "a/" {
						live[i] = to + rel[1:]
					}
				}
				newLeaf(to + "/b/")
				_ = os.Rename(filepath.Join(nodes, to), filepath.Join(nodes, "a"))
				for i, rel := range live {
					if len(rel) > len(to) && rel[:len(to)+1] == to+"/" {
						live[i] = "a" + rel[len(to):]
					}
				}
			}
		}},
		{"a removed folder", func() {
			seq++
			d := fmt.Sprintf("gone-%d/", seq)
			newLeaf(d)
			check("a folder made to be removed")
			_ = os.RemoveAll(filepath.Join(nodes, d))
			live = slices.DeleteFunc(live, func(rel string) bool { return len(rel) > len(d) && rel[:len(d)] == d })
		}},
		{"a folder removed and made again between reads", func() {
			seq++
			d := fmt.Sprintf("again-%d/", seq)
			first := newLeaf(d)
			newLeaf(d + "sub/")
			check("a folder made to be made again")
			_ = os.RemoveAll(filepath.Join(nodes, d))
			live = slices.DeleteFunc(live, func(rel string) bool { return len(rel) > len(d) && rel[:len(d)] == d })
			newLeaf(d + "sub/")
			put(first, leafText("again-"+first, "Made again"))
			live = append(live, first)
		}},
		{"a temporary file", func() { put(fmt.Sprintf("a/.x.md.tmp-%d", r.IntN(1000)), "half") }},
		{"a symlink whose target changes", func() {
			// The target is a hidden file (no leaf of its own), in another
			// folder than the link: its change is reported there.
			seq++
			target := fmt.Sprintf("a/.target-%d.md", seq)
			put(target, leafText(fmt.Sprintf("linked-%d", seq), "Before"))
			link := filepath.Join(nodes, "c", fmt.Sprintf("link-%d.md", seq))
			if os.Symlink(fmt.Sprintf("../a/.target-%d.md", seq), link) != nil {
				return
			}
			check("a new symlink")
			put(target, leafText(fmt.Sprintf("linked-%d", seq), "After, longer"))
			check("a symlink's target changed")
			_ = os.Remove(link)
			_ = os.Remove(filepath.Join(nodes, filepath.FromSlash(target)))
		}},
	}
	for i := range 120 {
		op := ops[r.IntN(len(ops))]
		op.do()
		check(fmt.Sprintf("step %d (%s)", i, op.name))
	}
	// After the watch is gone (the KB closed), reads walk again.
	if err := k.Close(); err != nil {
		t.Fatal(err)
	}
	newLeaf("a/")
	if !reflect.DeepEqual(summary(t, k), summary(t, store.New(k.Root))) {
		t.Fatal("a closed KB reads differently from a walk")
	}
}

// A leaf rewritten with the same size and mtime right after a read (the
// racy case the leaf cache re-reads by content) reads anew in a watched
// tree, while a leaf nothing happened to is taken from the cache.
func TestWatchedTreeRacyEdit(t *testing.T) {
	k := optest.NewKB(t)
	watchOrSkip(t, k)
	defer func() { _ = k.Close() }()
	p := filepath.Join(k.NodesDir(), "f", "racy.md")
	other := filepath.Join(k.NodesDir(), "f", "other.md")
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	for _, f := range []struct{ path, id string }{{p, "racy"}, {other, "other"}} {
		if err := os.WriteFile(f.path, []byte(leafText(f.id, "Title AAAA")), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	title := func() string {
		t.Helper()
		tr, err := k.ReadTree(store.LoadOptions{NoSave: true})
		if err != nil {
			t.Fatal(err)
		}
		n, _ := tr.ByID("racy")
		return n.Title
	}
	for _, want := range []string{"Title AAAA", "Title BBBB", "Title CCCC"} {
		if want != "Title AAAA" {
			fi, err := os.Stat(p)
			if err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(p, []byte(leafText("racy", want)), 0o644); err != nil {
				t.Fatal(err)
			}
			if err := os.Chtimes(p, fi.ModTime(), fi.ModTime()); err != nil {
				t.Fatal(err)
			}
		}
		if got := title(); got != want {
			t.Fatalf("read %q after writing %q with the same size and mtime", got, want)
		}
		if got := title(); got != want {
			t.Fatalf("read %q on the read after, want %q", got, want)
		}
	}
}

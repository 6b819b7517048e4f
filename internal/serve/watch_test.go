//go:build linux

// kk serve watches the tree on Linux only (internal/treewatch).

package serve

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/kk-project/kk/internal/contracts"
	"github.com/kk-project/kk/internal/curate"
	"github.com/kk-project/kk/internal/gitx"
	"github.com/kk-project/kk/internal/httpapi"
	"github.com/kk-project/kk/internal/index"
	"github.com/kk-project/kk/internal/store"
	"github.com/kk-project/kk/internal/treewatch"
)

// handLeaf is a leaf as a person writes it.
func handLeaf(id, title, body string) string {
	return fmt.Sprintf("---\ntype: map\ntitle: %s\ndescription: written by hand\ntags: [hand]\nkk_schema_version: 3\nkk_id: %s\nkk_derived_from: []\nkk_relates_to: []\nkk_depends_on: []\nkk_confidence: high\n---\n%s\n", title, id, body)
}

// indexRows renders what db holds of every leaf, and the problems it
// records, without syncing it.
func indexRows(t *testing.T, db *index.DB, k *store.KB) []string {
	t.Helper()
	rows, err := db.GraphRows(ctx, true)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, r := range rows {
		out = append(out, fmt.Sprintf("%s %s %s %q %q", r.Path, r.ID, r.Type, r.Title, r.Body))
	}
	slices.Sort(out)
	problems, err := db.Problems(ctx, k.NodesDir())
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range problems {
		out = append(out, "problem: "+p.Error())
	}
	return out
}

// checkIndexLikeAWalk checks that the served branch's index, as the last
// job left it, is what a full sync of the tree makes of it: a copy of it
// (a new branch's index is seeded from the default branch's) synced by a
// walk holds the same rows.
func checkIndexLikeAWalk(t *testing.T, s *server, what string) {
	t.Helper()
	branch := s.Backend.Branch()
	db, err := index.OpenShared(ctx, s.KB, branch)
	if err != nil {
		t.Fatal(err)
	}
	got := indexRows(t, db, s.KB)
	other := store.New(s.KB.Root) // another process's view: no watch
	defer func() { _ = other.Close() }()
	ref := "watch-reference"
	defer func() { _ = os.RemoveAll(filepath.Dir(index.Path(other, ref))) }()
	walked, _, err := index.Open(ctx, other, ref)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = walked.Close() }()
	if want := indexRows(t, walked, other); !slices.Equal(got, want) {
		t.Fatalf("%s: the served index differs from a walk's:\n%s", what, lineDiff(got, want))
	}
}

// lineDiff lists the lines only one of a and b has.
func lineDiff(a, b []string) string {
	var out []string
	for _, l := range a {
		if !slices.Contains(b, l) {
			out = append(out, "- "+l)
		}
	}
	for _, l := range b {
		if !slices.Contains(a, l) {
			out = append(out, "+ "+l)
		}
	}
	return strings.Join(out, "\n")
}

// TestWatchedJobsMatchAWalk runs jobs through the real server, whose
// index learns where the tree changed from the kernel, between random
// changes made behind it: hand edits and removals, folders made full,
// removed and renamed by hand, git checkouts of other leaves, a person's
// commits, and writes through a second knowledge base value (another
// process's kk node write). After each job the served index equals what
// a walk of the tree makes of it, and a clone of the branch checks clean
// (kk index rebuild --check).
func TestWatchedJobsMatchAWalk(t *testing.T) {
	k := newRepo(t, 40)
	s := start(t, k, nil)
	if s.Backend.watch == nil {
		t.Fatal("kk serve does not watch the tree on Linux; its log says why")
	}
	other := store.New(k.Root)
	defer func() { _ = other.Close() }()
	first := git(t, k, "rev-parse", "HEAD")
	rng := rand.New(rand.NewPCG(5, 8))
	leaves := func() []string {
		var out []string
		_ = filepath.WalkDir(k.NodesDir(), func(p string, d os.DirEntry, err error) error {
			if err == nil && !d.IsDir() && strings.HasSuffix(p, ".md") && d.Name() != "index.md" {
				out = append(out, store.RelTo(k.NodesDir(), p))
			}
			return nil
		})
		return out
	}
	folders := func() []string {
		var out []string
		_ = filepath.WalkDir(k.NodesDir(), func(p string, d os.DirEntry, err error) error {
			if err == nil && d.IsDir() && p != k.NodesDir() {
				out = append(out, store.RelTo(k.NodesDir(), p))
			}
			return nil
		})
		return out
	}
	var posted []string
	ops := map[string]int{}
	for step := range 20 {
		var op string
		switch x := rng.IntN(9); x {
		case 0:
			op = "hand edit"
			if ls := leaves(); len(ls) > 0 {
				p := k.NodePath(ls[rng.IntN(len(ls))])
				if data, err := os.ReadFile(p); err == nil {
					_ = os.WriteFile(p, append(data, fmt.Sprintf("Edited by hand at step %d.\n", step)...), 0o644)
				}
			}
		case 1:
			op = "hand removal"
			if ls := leaves(); len(ls) > 0 {
				_ = os.Remove(k.NodePath(ls[rng.IntN(len(ls))]))
			}
		case 2:
			op = "folder made by hand"
			d := fmt.Sprintf("hand%d", step)
			for i, rel := range []string{d + "/a.md", d + "/deep/b.md"} {
				p := k.NodePath(rel)
				_ = os.MkdirAll(filepath.Dir(p), 0o755)
				_ = os.WriteFile(p, []byte(handLeaf(fmt.Sprintf("map-hand-%d-%d", step, i), fmt.Sprintf("Hand %d %d", step, i), "By hand.")), 0o644)
			}
		case 3:
			op = "folder renamed"
			if fs := folders(); len(fs) > 0 {
				from := fs[rng.IntN(len(fs))]
				_ = os.Rename(k.NodePath(from), k.NodePath(fmt.Sprintf("renamed%d", step)))
			}
		case 4:
			op = "folder removed"
			if fs := folders(); len(fs) > 0 {
				_ = os.RemoveAll(k.NodePath(fs[rng.IntN(len(fs))]))
			}
		case 5:
			op = "git checkout of other leaves"
			if fs := folders(); len(fs) > 0 {
				d := store.DirName + "/nodes/" + fs[rng.IntN(len(fs))]
				// The folder as the first commit had it, if it had it.
				_, _ = gitx.Run(ctx, k.Root, "checkout", first, "--", d)
			}
		case 6:
			op = "another process's write"
			in := contracts.NodeInput{Type: "map", Title: fmt.Sprintf("Other process %d", step), Description: "d", Body: "Written by kk node write.\n", Folder: fmt.Sprintf("other%d", step%3)}
			if _, err := curate.WriteNode(ctx, other, in, curate.WriteOptions{Command: "kk node write"}); err != nil {
				t.Fatal(err)
			}
		case 7:
			op = "a person's commit"
			git(t, k, "add", "-A")
			if git(t, k, "status", "--porcelain") != "" {
				git(t, k, "-c", "user.name=p", "-c", "user.email=p@p", "commit", "-qm", fmt.Sprintf("person %d", step))
			}
		default:
			op = "nothing"
		}
		ops[op]++
		var j httpapi.JobStatus
		if len(posted) > 0 && rng.IntN(3) == 0 {
			p := posted[rng.IntN(len(posted))]
			if _, err := os.Stat(k.NodePath(p)); err == nil {
				j = s.edit(t, httpapi.EditRequest{Path: p, Content: fmt.Sprintf("Edited through the API at step %d.\n", step)})
			}
		}
		if j.JobID == "" {
			j = s.post(t, httpapi.PostRequest{Title: fmt.Sprintf("Watched note %d", step), Content: fmt.Sprintf("Step %d.\n", step), Tags: []string{"watch"}})
			posted = append(posted, j.Path)
		}
		if j.Status != "done" {
			t.Fatalf("step %d (%s): %+v", step, op, j)
		}
		checkIndexLikeAWalk(t, s, fmt.Sprintf("step %d (%s)", step, op))
		headChecks(t, k)
	}
	st := s.Backend.watch.Stats()
	t.Logf("ops %v; watcher %+v", ops, st)
	if st.Watched < 15 {
		t.Fatalf("the watcher answered %d of %d syncs: the test does not test it", st.Watched, st.Barriers)
	}
}

// TestWatchFallbackJobs: a server whose watcher never vouches (as after
// an overflow), and one told not to watch, walk the tree at every job and
// see every hand edit; the first answers with All each time.
func TestWatchFallbackJobs(t *testing.T) {
	for _, tc := range []struct {
		name string
		o    func(k *store.KB) Options
	}{
		{"doubting", func(k *store.KB) Options {
			return Options{KB: k, Watch: treewatch.Options{Doubt: func() bool { return true }}}
		}},
		{"no-watch", func(k *store.KB) Options { return Options{KB: k, NoWatch: true} }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			k := newRepo(t, 10)
			s := startOpts(t, context.Background(), tc.o(k))
			var posted []string
			for step := range 6 {
				if len(posted) > 0 {
					p := k.NodePath(posted[step%len(posted)])
					data, err := os.ReadFile(p)
					if err != nil {
						t.Fatal(err)
					}
					if err := os.WriteFile(p, append(data, fmt.Sprintf("By hand %d.\n", step)...), 0o644); err != nil {
						t.Fatal(err)
					}
				}
				j := s.post(t, httpapi.PostRequest{Title: fmt.Sprintf("Fallback %d", step), Content: "Body.\n"})
				if j.Status != "done" {
					t.Fatalf("step %d: %+v", step, j)
				}
				posted = append(posted, j.Path)
				checkIndexLikeAWalk(t, s, fmt.Sprintf("step %d", step))
			}
			headChecks(t, k)
			w := s.Backend.watch
			switch tc.name {
			case "no-watch":
				if w != nil {
					t.Fatal("told not to watch, the server watches")
				}
			default:
				if w == nil {
					t.Fatal("kk serve does not watch the tree on Linux; its log says why")
				}
				if st := w.Stats(); st.Watched != 0 || st.All[treewatch.ReasonDoubt] < 6 {
					t.Fatalf("the doubting watcher answered %+v", st)
				}
			}
		})
	}
}

//go:build linux

// The watched path's fault suite: people and git acting on the work tree
// while kk serve runs (hand edits, editors' saves, folders made, removed
// and moved, git's checkouts, stashes, resets, merges and rebases, nodes/
// and .state/ removed, bursts that overflow the kernel's queue, symlinks,
// watches refused). After each act, and the barrier of the next search or
// job, the served index must be what a walk of the tree makes of it, a
// search must see the change, the next job must be done with exactly one
// commit, and every byte a person wrote must still be there.

package serve

import (
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/kk-project/kk/internal/gitx"
	"github.com/kk-project/kk/internal/httpapi"
	"github.com/kk-project/kk/internal/index"
	"github.com/kk-project/kk/internal/store"
	"github.com/kk-project/kk/internal/treewatch"
)

// actor is a person working in a served work tree.
type actor struct {
	t *testing.T
	s *server
	k *store.KB
	// kept are the leaves a person wrote (relative to nodes/) with the
	// bytes each must hold; "" for a leaf the person removed.
	kept map[string]string
	jobs int
}

// newActor serves a new repository of n generated leaves, watched.
func newActor(t *testing.T, n int, o Options) *actor {
	t.Helper()
	k := newRepo(t, n)
	o.KB = k
	s := startOpts(t, ctx, o)
	if s.Backend.watch == nil && !o.NoWatch && o.Watch.AddFault == nil {
		t.Fatal("kk serve does not watch the tree on Linux; its log says why")
	}
	return &actor{t: t, s: s, k: k, kept: map[string]string{}}
}

// word is a word no other leaf holds.
func word(n int) string {
	var b []byte
	for n++; n > 0; n /= 26 {
		b = append(b, byte('a'+n%26))
	}
	return "zq" + string(b) + "marker"
}

// leaf returns a person's leaf about w, with an id of its own.
func (a *actor) leaf(w string) string {
	return handLeaf("map-"+w, "Hand "+w, "About "+w+" and nothing else.")
}

// write writes a person's leaf about w at rel (its folders made).
func (a *actor) write(rel, w string) {
	a.t.Helper()
	p := a.k.NodePath(rel)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		a.t.Fatal(err)
	}
	c := a.leaf(w)
	if err := os.WriteFile(p, []byte(c), 0o644); err != nil {
		a.t.Fatal(err)
	}
	a.kept[rel] = c
}

// sh runs a shell command line in the repository's root, as a person
// does.
func (a *actor) sh(line string) {
	a.t.Helper()
	cmd := exec.Command("sh", "-ec", line)
	cmd.Dir = a.k.Root
	cmd.Env = append(os.Environ(), "GIT_AUTHOR_NAME=p", "GIT_AUTHOR_EMAIL=p@p", "GIT_COMMITTER_NAME=p", "GIT_COMMITTER_EMAIL=p@p", "GIT_EDITOR=true")
	if out, err := cmd.CombinedOutput(); err != nil {
		a.t.Fatalf("%s: %v\n%s", line, err, out)
	}
}

// moved records that the person's leaf at from is now at to.
func (a *actor) moved(from, to string) {
	for rel, c := range a.kept {
		if rel == from || strings.HasPrefix(rel, from+"/") {
			delete(a.kept, rel)
			a.kept[to+strings.TrimPrefix(rel, from)] = c
		}
	}
}

// gone records that the person removed the leaves at or under rel.
func (a *actor) gone(rel string) {
	for r := range a.kept {
		if r == rel || strings.HasPrefix(r, rel+"/") {
			a.kept[r] = ""
		}
	}
}

// search returns the paths GET /search answers for w.
func (a *actor) search(w string) []string {
	a.t.Helper()
	docs, err := a.s.Client.Search(ctx, w, 20)
	if err != nil {
		a.t.Fatal(err)
	}
	var out []string
	for _, d := range docs {
		out = append(out, d.Path)
	}
	slices.Sort(out)
	return out
}

// indexed returns the paths kk's search of the served index answers for
// w, before the HTTP face reads them (it reads no symlinked note).
func (a *actor) indexed(w string) []string {
	a.t.Helper()
	paths, err := a.s.Backend.Search(ctx, w, 20)
	if err != nil {
		a.t.Fatal(err)
	}
	slices.Sort(paths)
	return paths
}

// after is the barrier and the checks after an act: a search for each
// word of find answers exactly the paths given (none: the word is gone),
// the served index is a walk's, the next job is done with one commit
// and leaves the index a walk's, and every leaf a person wrote holds its
// bytes.
func (a *actor) after(what string, find map[string][]string) {
	a.t.Helper()
	if len(find) == 0 {
		find = map[string][]string{word(99999): nil} // the search is the barrier
	}
	for w, want := range find {
		got := a.search(w)
		slices.Sort(want)
		if !slices.Equal(got, want) {
			a.t.Fatalf("%s: GET /search?query=%s answers %v, want %v", what, w, got, want)
		}
	}
	checkIndexLikeAWalk(a.t, a.s, what+": after the search")
	a.job(what)
	checkIndexLikeAWalk(a.t, a.s, what+": after the job")
	a.checkKept(what)
}

// job posts a note and checks that it is done with exactly one commit.
func (a *actor) job(what string) httpapi.JobStatus {
	a.t.Helper()
	a.jobs++
	j := a.s.post(a.t, httpapi.PostRequest{Title: fmt.Sprintf("Job %d", a.jobs), Content: fmt.Sprintf("Posted after %s.\n", what)})
	if j.Status != "done" {
		a.t.Fatalf("%s: the job after it: %+v", what, j)
	}
	jobCommit(a.t, a.k, "store", j)
	return j
}

// checkKept checks that every leaf a person wrote holds its bytes, and
// every one removed is gone.
func (a *actor) checkKept(what string) {
	a.t.Helper()
	for rel, want := range a.kept {
		if strings.HasPrefix(rel, "away/") {
			continue // out of the tree for now
		}
		got, err := os.ReadFile(a.k.NodePath(rel))
		switch {
		case want == "" && err == nil:
			a.t.Fatalf("%s: %s, removed by the person, is back", what, rel)
		case want == "":
		case err != nil:
			a.t.Fatalf("%s: the person's %s: %v", what, rel, err)
		case string(got) != want:
			a.t.Fatalf("%s: the person's %s changed:\n%s\nwant\n%s", what, rel, got, want)
		}
	}
}

// TestWatchFaultEditorSaves: a leaf saved in place, appended to by a
// shell, saved the way editors save (a temporary file renamed over it;
// vim's rename of the original to a backup, its 4913 probe, and a new
// file), and edited by sed -i: a search right after sees the new word and
// not the old one.
func TestWatchFaultEditorSaves(t *testing.T) {
	a := newActor(t, 20, Options{})
	rel := "hand/editor.md"
	a.write(rel, word(0))
	a.after("a leaf written", map[string][]string{word(0): {rel}})
	p := a.k.NodePath(rel)
	saves := []struct {
		name string
		save func(content string)
	}{
		{"in place", func(c string) {
			if err := os.WriteFile(p, []byte(c), 0o644); err != nil {
				t.Fatal(err)
			}
		}},
		{"a shell's redirection", func(c string) {
			if err := os.WriteFile(p+".new", []byte(c), 0o644); err != nil {
				t.Fatal(err)
			}
			a.sh(fmt.Sprintf("cat %q > %q && rm %q", p+".new", p, p+".new"))
		}},
		{"a temporary file renamed over it", func(c string) {
			tmp := filepath.Join(filepath.Dir(p), ".editor.md.tmp1234")
			if err := os.WriteFile(tmp, []byte(c), 0o644); err != nil {
				t.Fatal(err)
			}
			if err := os.Rename(tmp, p); err != nil {
				t.Fatal(err)
			}
		}},
		{"vim's backup and new file", func(c string) {
			dir := filepath.Dir(p)
			probe := filepath.Join(dir, "4913")
			if err := os.WriteFile(probe, nil, 0o644); err != nil {
				t.Fatal(err)
			}
			if err := os.Remove(probe); err != nil {
				t.Fatal(err)
			}
			if err := os.Rename(p, p+"~"); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(p, []byte(c), 0o644); err != nil {
				t.Fatal(err)
			}
			if err := os.Remove(p + "~"); err != nil {
				t.Fatal(err)
			}
		}},
		{"sed -i", func(c string) {
			old, err := os.ReadFile(p)
			if err != nil {
				t.Fatal(err)
			}
			// The new word in place of the old one, by a real sed.
			oldWord := strings.TrimPrefix(strings.Split(string(old), "\n")[2], "title: Hand ")
			newWord := strings.TrimPrefix(strings.Split(c, "\n")[2], "title: Hand ")
			a.sh(fmt.Sprintf("sed -i 's/%s/%s/g' %q", oldWord, newWord, p))
		}},
	}
	for i, sv := range saves {
		w := word(i + 1)
		c := a.leaf(w)
		sv.save(c)
		a.kept[rel] = c
		// A search at once, and again after a job: each sees the save.
		a.after(sv.name, map[string][]string{w: {rel}, word(i): nil})
	}
	// Saves with no job between them, each searched at once.
	for i := range 10 {
		w := word(100 + i)
		a.write(rel, w)
		if got := a.search(w); !slices.Equal(got, []string{rel}) {
			t.Fatalf("save %d, searched at once: %v", i, got)
		}
	}
	a.after("saves searched at once", nil)
	headChecks(t, a.k)
}

// TestWatchFaultNewFoldersFilledAtOnce: folders made and filled before a
// watch can be set on them (the new-folder race), nested several levels,
// by this process, by a shell in one go, by cp -r and by tar from outside
// the tree, and a folder moved in from outside.
func TestWatchFaultNewFoldersFilledAtOnce(t *testing.T) {
	a := newActor(t, 20, Options{})
	find := map[string][]string{}
	n := 0
	next := func() string { n++; return word(200 + n) }
	// Go: mkdir -p and a leaf at every level at once, ten times.
	for i := range 10 {
		d := fmt.Sprintf("made%d/b/c/d", i)
		if err := os.MkdirAll(a.k.NodePath(d), 0o755); err != nil {
			t.Fatal(err)
		}
		for _, rel := range []string{fmt.Sprintf("made%d/top.md", i), fmt.Sprintf("made%d/b/mid.md", i), d + "/deep.md"} {
			w := next()
			a.write(rel, w)
			find[w] = []string{rel}
		}
	}
	a.after("folders made by this process", find)
	// A shell: mkdir -p and the leaves in one process.
	clear(find)
	w1, w2 := next(), next()
	a.sh(fmt.Sprintf("cd %s && mkdir -p sh/x/y/z && printf '%%b' %q > sh/x/y/z/leaf.md && printf '%%b' %q > sh/x/leaf.md",
		a.k.NodesDir(), a.leaf(w1), a.leaf(w2)))
	a.kept["sh/x/y/z/leaf.md"], a.kept["sh/x/leaf.md"] = a.leaf(w1), a.leaf(w2)
	find[w1], find[w2] = []string{"sh/x/y/z/leaf.md"}, []string{"sh/x/leaf.md"}
	a.after("folders made by a shell", find)
	// cp -r, tar, and mv of a tree prepared outside.
	clear(find)
	outside := t.TempDir()
	for _, rel := range []string{"t/a.md", "t/u/b.md", "t/u/v/c.md"} {
		p := filepath.Join(outside, rel)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		w := next()
		if err := os.WriteFile(p, []byte(a.leaf(w)), 0o644); err != nil {
			t.Fatal(err)
		}
		for _, how := range []string{"copied", "untarred", "moved"} {
			find[w] = append(find[w], how+"/"+strings.TrimPrefix(rel, "t/"))
		}
	}
	// Each way puts its own copy of the three leaves, with the same ids:
	// the ids clash, and the index must say so as a walk does.
	a.sh(fmt.Sprintf("cp -r %s/t %s/copied", outside, a.k.NodesDir()))
	a.sh(fmt.Sprintf("tar -C %s -cf %s/t.tar t && mkdir %s/untarred && tar -C %s/untarred --strip-components=1 -xf %s/t.tar",
		outside, outside, a.k.NodesDir(), a.k.NodesDir(), outside))
	a.sh(fmt.Sprintf("mv %s/t %s/moved", outside, a.k.NodesDir()))
	// The three copies' ids clash: the index says so, as a walk does.
	a.after("folders copied, untarred and moved in", nil)
	// The clash undone: two of the three ways removed.
	a.sh(fmt.Sprintf("rm -rf %s/copied %s/untarred", a.k.NodesDir(), a.k.NodesDir()))
	clear(find)
	for _, rel := range []string{"a.md", "u/b.md", "u/v/c.md"} {
		data, err := os.ReadFile(a.k.NodePath("moved/" + rel))
		if err != nil {
			t.Fatal(err)
		}
		a.kept["moved/"+rel] = string(data)
		w := strings.TrimPrefix(strings.Split(string(data), "\n")[2], "title: Hand ")
		find[w] = []string{"moved/" + rel}
	}
	a.after("the copies removed", find)
	headChecks(t, a.k)
}

// TestWatchFaultFoldersRemovedAndMoved: rm -rf of a folder of leaves, mv
// of a folder to another name and of a leaf between folders, a folder
// moved out of the tree, edited there and moved back, and a folder
// replaced by another of the same name.
func TestWatchFaultFoldersRemovedAndMoved(t *testing.T) {
	a := newActor(t, 20, Options{})
	w := func(i int) string { return word(300 + i) }
	a.write("f1/one.md", w(1))
	a.write("f1/sub/two.md", w(2))
	a.write("f2/three.md", w(3))
	a.write("f3/four.md", w(4))
	a.write("f3/deep/five.md", w(5))
	a.after("leaves written", map[string][]string{w(1): {"f1/one.md"}, w(2): {"f1/sub/two.md"}, w(5): {"f3/deep/five.md"}})

	a.sh("rm -rf " + a.k.NodePath("f1"))
	a.gone("f1")
	a.after("rm -rf", map[string][]string{w(1): nil, w(2): nil, w(3): {"f2/three.md"}})

	a.sh(fmt.Sprintf("mv %s %s", a.k.NodePath("f3"), a.k.NodePath("renamed")))
	a.moved("f3", "renamed")
	a.after("a folder renamed", map[string][]string{w(4): {"renamed/four.md"}, w(5): {"renamed/deep/five.md"}})

	a.sh(fmt.Sprintf("mv %s %s", a.k.NodePath("f2/three.md"), a.k.NodePath("renamed/deep/three.md")))
	a.moved("f2/three.md", "renamed/deep/three.md")
	a.after("a leaf moved between folders", map[string][]string{w(3): {"renamed/deep/three.md"}})

	// Out of the tree, edited there (no watch sees it), and back.
	out := filepath.Join(t.TempDir(), "away")
	a.sh(fmt.Sprintf("mv %s %s", a.k.NodePath("renamed"), out))
	a.moved("renamed", "away")
	a.after("a folder moved out", map[string][]string{w(4): nil, w(3): nil})
	c := a.leaf(w(6))
	if err := os.WriteFile(filepath.Join(out, "deep", "five.md"), []byte(c), 0o644); err != nil {
		t.Fatal(err)
	}
	a.kept["away/deep/five.md"] = c
	a.sh(fmt.Sprintf("mv %s %s", out, a.k.NodePath("renamed")))
	a.moved("away", "renamed")
	a.after("a folder moved back, edited while out", map[string][]string{w(4): {"renamed/four.md"}, w(5): nil, w(6): {"renamed/deep/five.md"}})

	// A folder replaced by another of the same name: the old one moved
	// aside (its watches with it), a new one made in its place.
	a.sh(fmt.Sprintf("mv %s %s", a.k.NodePath("renamed"), a.k.NodePath("aside")))
	a.moved("renamed", "aside")
	a.write("renamed/new.md", w(7))
	if err := os.WriteFile(a.k.NodePath("aside/four.md"), []byte(a.leaf(w(8))), 0o644); err != nil {
		t.Fatal(err)
	}
	a.kept["aside/four.md"] = a.leaf(w(8))
	a.after("a folder replaced", map[string][]string{w(7): {"renamed/new.md"}, w(8): {"aside/four.md"}, w(4): nil})
	headChecks(t, a.k)
}

// TestWatchFaultGitOperations: git switching branches and back, stashing
// and popping a person's uncommitted leaves, resetting the branch a job
// back, merging and pulling many leaves, and rebasing. kk serve commits
// on the branch it serves only (a job posted while another is checked out
// waits); each act ends with the served index a walk's.
func TestWatchFaultGitOperations(t *testing.T) {
	a := newActor(t, 20, Options{})
	w := func(i int) string { return word(400 + i) }
	git(t, a.k, "config", "user.name", "p")
	git(t, a.k, "config", "user.email", "p@p")
	a.write("mine/committed.md", w(1))
	git(t, a.k, "add", "-A")
	git(t, a.k, "commit", "-qm", "a person's leaf")
	a.after("a person's commit", map[string][]string{w(1): {"mine/committed.md"}})

	// Another branch with many leaves of its own, and the person's leaf
	// edited there.
	git(t, a.k, "switch", "-q", "-c", "other")
	many := map[string][]string{}
	for i := range 60 {
		rel := fmt.Sprintf("branch/f%d/leaf%d.md", i%12, i)
		p := a.k.NodePath(rel)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(a.leaf(w(100+i))), 0o644); err != nil {
			t.Fatal(err)
		}
		if i%10 == 0 {
			many[w(100+i)] = []string{rel}
		}
	}
	if err := os.WriteFile(a.k.NodePath("mine/committed.md"), []byte(a.leaf(w(2))), 0o644); err != nil {
		t.Fatal(err)
	}
	git(t, a.k, "add", "-A")
	git(t, a.k, "commit", "-qm", "other's leaves")
	// On the other branch: its leaves are searched (its own index); a job
	// waits for the served branch.
	for wd, ps := range many {
		if got := a.search(wd); !slices.Equal(got, ps) {
			t.Fatalf("on the other branch, %s: %v, want %v", wd, got, ps)
		}
	}
	id := a.s.postAsync(t, "Posted on the other branch")
	a.s.waitHealth(t, "other")
	git(t, a.k, "switch", "-q", "main")
	j := a.s.waitJob(t, id, 30*time.Second)
	if j.Status != "done" {
		t.Fatalf("the job posted while on the other branch: %+v", j)
	}
	jobCommit(t, a.k, "store", j)
	gone := map[string][]string{w(2): nil, w(1): {"mine/committed.md"}}
	for wd := range many {
		gone[wd] = nil
	}
	a.after("git switch to another branch and back", gone)

	// git checkout (the old way) there and back, with a person's
	// uncommitted leaf carried along.
	a.write("mine/carried.md", w(3))
	git(t, a.k, "checkout", "-q", "other")
	git(t, a.k, "checkout", "-q", "main")
	a.after("git checkout there and back", map[string][]string{w(3): {"mine/carried.md"}, w(2): nil})

	// git stash -u and pop: the person's leaves go and come back.
	a.write("mine/stashed.md", w(4))
	if err := os.WriteFile(a.k.NodePath("mine/committed.md"), []byte(a.leaf(w(5))), 0o644); err != nil {
		t.Fatal(err)
	}
	a.kept["mine/committed.md"] = a.leaf(w(5))
	git(t, a.k, "stash", "push", "-q", "-u", "--", store.DirName+"/nodes/mine")
	saved := map[string]string{}
	for _, rel := range []string{"mine/stashed.md", "mine/carried.md", "mine/committed.md"} {
		saved[rel] = a.kept[rel]
		delete(a.kept, rel)
	}
	a.after("git stash", map[string][]string{w(4): nil, w(3): nil, w(5): nil, w(1): {"mine/committed.md"}})
	git(t, a.k, "stash", "pop", "-q")
	copyInto(a.kept, saved)
	a.after("git stash pop", map[string][]string{w(4): {"mine/stashed.md"}, w(3): {"mine/carried.md"}, w(5): {"mine/committed.md"}, w(1): nil})

	// git reset --hard HEAD~1 takes the last job's commit back, by the
	// person's choice: the job's note goes with it.
	git(t, a.k, "add", "-A")
	git(t, a.k, "commit", "-qm", "the person's leaves")
	last := a.job("before the reset")
	git(t, a.k, "reset", "-q", "--hard", "HEAD~1")
	if _, err := os.Stat(a.k.NodePath(last.Path)); err == nil {
		t.Fatalf("the reset job's note %s is still there", last.Path)
	}
	a.after("git reset --hard HEAD~1", map[string][]string{w(4): {"mine/stashed.md"}})

	// git merge of the other branch: its many leaves come in.
	git(t, a.k, "merge", "-q", "--no-edit", "-X", "theirs", "other")
	for rel, c := range map[string]string{"mine/committed.md": a.leaf(w(2))} {
		a.kept[rel] = c
	}
	a.after("git merge of many leaves", many)

	// git pull from a clone that wrote more leaves.
	clone := filepath.Join(t.TempDir(), "clone")
	if _, err := gitx.Run(ctx, a.k.Root, "clone", "-q", a.k.Root, clone); err != nil {
		t.Fatal(err)
	}
	pulled := map[string][]string{}
	for i := range 30 {
		rel := fmt.Sprintf("pulled/p%d/l%d.md", i%5, i)
		p := filepath.Join(clone, store.DirName, "nodes", rel)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(a.leaf(w(200+i))), 0o644); err != nil {
			t.Fatal(err)
		}
		if i%7 == 0 {
			pulled[w(200+i)] = []string{rel}
		}
	}
	for _, args := range [][]string{{"add", "-A"}, {"-c", "user.name=c", "-c", "user.email=c@c", "commit", "-qm", "from the clone"}} {
		if _, err := gitx.Run(ctx, clone, args...); err != nil {
			t.Fatal(err)
		}
	}
	git(t, a.k, "pull", "-q", "--no-rebase", "--no-edit", clone, "main")
	a.after("git pull of many leaves", pulled)

	// git rebase: the person's commit on a side branch rebased onto main
	// while kk serve commits on main.
	git(t, a.k, "switch", "-q", "-c", "side", "HEAD~1")
	a.write("side/rebased.md", w(6))
	git(t, a.k, "add", "-A")
	git(t, a.k, "commit", "-qm", "a side leaf")
	git(t, a.k, "rebase", "-q", "main")
	git(t, a.k, "switch", "-q", "main")
	delete(a.kept, "side/rebased.md")
	a.after("git rebase on a side branch", map[string][]string{w(6): nil})
	git(t, a.k, "merge", "-q", "--no-edit", "side")
	a.kept["side/rebased.md"] = a.leaf(w(6))
	a.after("the rebased branch merged", map[string][]string{w(6): {"side/rebased.md"}})
	// Rebasing main itself, over a commit made on a branch behind it.
	git(t, a.k, "switch", "-q", "-c", "base", "HEAD~2")
	a.write("base/under.md", w(7))
	git(t, a.k, "add", "-A")
	git(t, a.k, "commit", "-qm", "a leaf under main")
	git(t, a.k, "switch", "-q", "main")
	delete(a.kept, "base/under.md")
	git(t, a.k, "rebase", "-q", "base")
	a.kept["base/under.md"] = a.leaf(w(7))
	a.after("git rebase of main", map[string][]string{w(7): {"base/under.md"}, w(6): {"side/rebased.md"}})
	headChecks(t, a.k)
}

// copyInto copies src into dst.
func copyInto(dst, src map[string]string) {
	for k, v := range src {
		dst[k] = v
	}
}

// TestWatchFaultNodesAndStateRemoved: the whole nodes/ folder removed
// (and a job posted meanwhile), then restored from git; .state/ removed
// while serving; .ai/kenkeep moved aside and copied back.
func TestWatchFaultNodesAndStateRemoved(t *testing.T) {
	a := newActor(t, 20, Options{})
	w := func(i int) string { return word(500 + i) }
	a.write("mine/a.md", w(1))
	git(t, a.k, "add", "-A")
	git(t, a.k, "-c", "user.name=p", "-c", "user.email=p@p", "commit", "-qm", "a person's leaf")
	a.after("a committed leaf", map[string][]string{w(1): {"mine/a.md"}})

	a.sh("rm -rf " + a.k.NodesDir())
	a.gone("mine")
	a.after("nodes/ removed", map[string][]string{w(1): nil})
	a.sh("git checkout HEAD -- " + store.DirName + "/nodes")
	a.kept["mine/a.md"] = a.leaf(w(1))
	a.after("nodes/ restored from git", map[string][]string{w(1): {"mine/a.md"}})
	a.sh("rm -rf " + a.k.NodesDir() + " && git checkout HEAD -- " + store.DirName + "/nodes")
	a.after("nodes/ removed and restored at once", map[string][]string{w(1): {"mine/a.md"}})

	a.sh("rm -rf " + a.k.StateDir())
	a.write("mine/b.md", w(2))
	a.after(".state/ removed", map[string][]string{w(2): {"mine/b.md"}})
	a.write("mine/c.md", w(3))
	a.after("after .state/ removed", map[string][]string{w(3): {"mine/c.md"}})

	// .ai/kenkeep moved aside and a copy put back in its place: the
	// watches follow the folders moved aside.
	kb := filepath.Join(a.k.Root, store.DirName)
	aside := filepath.Join(t.TempDir(), "aside")
	a.sh(fmt.Sprintf("mv %s %s && cp -a %s %s", kb, aside, aside, kb))
	a.write("mine/d.md", w(4))
	if err := os.WriteFile(filepath.Join(aside, "nodes", "mine", "a.md"), []byte(a.leaf(w(5))), 0o644); err != nil {
		t.Fatal(err)
	}
	a.after(".ai/kenkeep moved aside and copied back", map[string][]string{w(4): {"mine/d.md"}, w(5): nil, w(1): {"mine/a.md"}})
	// Again, with kk's .state/ (its index, queue and locks) moved back
	// into the copy: the cookie's folder is still the one watched.
	aside2 := filepath.Join(t.TempDir(), "aside")
	a.sh(fmt.Sprintf("mv %s %s && mkdir %s && mv %s/.state %s/ && cp -a %s/. %s/", kb, aside2, kb, aside2, kb, aside2, kb))
	a.write("theirs/e.md", w(6))
	if err := os.WriteFile(filepath.Join(aside2, "nodes", "mine", "a.md"), []byte(a.leaf(w(7))), 0o644); err != nil {
		t.Fatal(err)
	}
	a.after(".ai/kenkeep replaced by a copy, .state/ moved back", map[string][]string{w(6): {"theirs/e.md"}, w(7): nil, w(1): {"mine/a.md"}})
	// git clean: the untracked leaves go (-d), then everything git
	// ignores too, kk's .state/ with it (-x).
	a.sh("git clean -q -fd -- " + store.DirName + "/nodes")
	for rel := range a.kept {
		if out, _ := gitx.Run(ctx, a.k.Root, "ls-files", "--", store.DirName+"/nodes/"+rel); len(out) == 0 {
			a.gone(rel)
		}
	}
	a.after("git clean -fd", map[string][]string{w(6): nil, w(1): {"mine/a.md"}})
	a.write("mine/f.md", w(8))
	a.sh("git clean -q -fdx -- " + store.DirName)
	a.gone("mine/f.md")
	a.after("git clean -fdx", map[string][]string{w(8): nil, w(1): {"mine/a.md"}})
	a.write("mine/g.md", w(9))
	a.after("a leaf after git clean -fdx", map[string][]string{w(9): {"mine/g.md"}})
	// nodes/ made a symlink to the folder moved elsewhere: not watched
	// (every sync walks), and followed as every command follows it.
	real := filepath.Join(a.k.Root, "nodes-real")
	a.sh(fmt.Sprintf("mv %s %s && ln -s ../../nodes-real %s", a.k.NodesDir(), real, a.k.NodesDir()))
	a.write("mine/h.md", w(10))
	a.after("nodes/ a symlink", map[string][]string{w(10): {"mine/h.md"}, w(9): {"mine/g.md"}})
	a.write("mine/h.md", w(11))
	a.after("an edit through the symlinked nodes/", map[string][]string{w(11): {"mine/h.md"}, w(10): nil})
	a.sh(fmt.Sprintf("rm %s && mv %s %s", a.k.NodesDir(), real, a.k.NodesDir()))
	a.write("mine/i.md", w(12))
	a.after("nodes/ a folder again", map[string][]string{w(12): {"mine/i.md"}, w(11): {"mine/h.md"}})
	a.write("mine/j.md", w(13))
	a.after("a leaf in nodes/ watched again", map[string][]string{w(13): {"mine/j.md"}})
	headChecks(t, a.k)
}

// TestWatchFaultBurstChmodSymlinks: more hand changes at once than the
// kernel's queue holds (the overflow falls back to a walk), a folder
// made unreadable, and symlinked leaves and folders.
func TestWatchFaultBurstChmodSymlinks(t *testing.T) {
	a := newActor(t, 20, Options{})
	w := func(i int) string { return word(600 + i) }
	a.write("burst/a.md", w(1))
	a.write("burst/b.md", w(2))
	a.after("leaves written", nil)
	max := 16384
	if b, err := os.ReadFile("/proc/sys/fs/inotify/max_queued_events"); err == nil {
		_, _ = fmt.Sscan(string(b), &max)
	}
	ps := []string{a.k.NodePath("burst/a.md"), a.k.NodePath("burst/b.md")}
	for i := range max + 10 {
		ts := time.Now().Add(-time.Duration(i) * time.Second)
		if err := os.Chtimes(ps[i%2], ts, ts); err != nil {
			t.Fatal(err)
		}
	}
	a.write("burst/a.md", w(3))
	a.write("elsewhere/c.md", w(4))
	a.after("a burst over the kernel's queue", map[string][]string{w(1): nil, w(3): {"burst/a.md"}, w(4): {"elsewhere/c.md"}})
	if st := a.s.Backend.watch.Stats(); st.All[treewatch.ReasonOverflow] == 0 {
		t.Fatalf("no overflow reported after %d changes: %+v", max+10, st)
	}

	// A folder's mode changed (unreadable to a user, a problem of the
	// tree: index.TestWatchedSyncBesideAnUnreadableFolder runs that as
	// nobody; root reads it all the same, as a walk does), then back.
	if err := os.Chmod(a.k.NodePath("burst"), 0); err != nil {
		t.Fatal(err)
	}
	a.write("elsewhere/d.md", w(5))
	checkIndexLikeAWalk(t, a.s, "unreadable: before the search")
	if err := os.Chmod(a.k.NodePath("burst"), 0o755); err != nil {
		t.Fatal(err)
	}
	a.after("a folder unreadable, then readable", map[string][]string{w(5): {"elsewhere/d.md"}, w(3): {"burst/a.md"}})

	// A leaf that is a symlink to a file in a dot folder of the tree
	// (where nothing is watched), edited through its target.
	a.write(".drafts/target.md", w(6))
	delete(a.kept, ".drafts/target.md")
	if err := os.MkdirAll(a.k.NodePath("links"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("../.drafts/target.md", a.k.NodePath("links/link.md")); err != nil {
		t.Fatal(err)
	}
	// GET /search reads no symlinked note; kk's search of the index
	// finds it.
	if got := a.indexed(w(6)); !slices.Equal(got, []string{"links/link.md"}) {
		t.Fatalf("a symlinked leaf: the index's search answers %v", got)
	}
	a.after("a symlinked leaf", map[string][]string{w(6): nil})
	if err := os.WriteFile(a.k.NodePath(".drafts/target.md"), []byte(a.leaf(w(7))), 0o644); err != nil {
		t.Fatal(err)
	}
	if got := a.indexed(w(7)); !slices.Equal(got, []string{"links/link.md"}) {
		t.Fatalf("a symlinked leaf edited through its target: the index's search answers %v", got)
	}
	if got := a.indexed(w(6)); len(got) > 0 {
		t.Fatalf("a symlinked leaf edited through its target: its old word is still found in %v", got)
	}
	a.after("a symlinked leaf edited through its target", nil)
	// A symlink to a folder of the tree (not followed), and one that
	// leads out of it (a problem of the tree, as for a walk).
	if err := os.Symlink("../burst", a.k.NodePath("links/folder")); err != nil {
		t.Fatal(err)
	}
	a.after("a symlinked folder", map[string][]string{w(3): {"burst/a.md"}})
	a.write("burst/e.md", w(8))
	a.after("a leaf added behind a symlinked folder", map[string][]string{w(8): {"burst/e.md"}})
	outside := filepath.Join(t.TempDir(), "out.md")
	if err := os.WriteFile(outside, []byte(a.leaf(w(9))), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(outside, a.k.NodePath("links/out.md")); err != nil {
		t.Fatal(err)
	}
	a.after("a symlink out of the tree", map[string][]string{w(9): nil})
	if err := os.Remove(a.k.NodePath("links/out.md")); err != nil {
		t.Fatal(err)
	}
	a.after("the symlink out of the tree removed", nil)
	headChecks(t, a.k)
}

// TestWatchFaultRefusedWatches: a watch the kernel refuses (as when
// fs.inotify.max_user_watches is reached) on a folder made while serving
// stops the watch and every later sync walks; a watch refused at the
// start leaves the tree unwatched. Hand edits are seen either way. (A
// tree not watched is walked by a search at most once per RecheckWithin,
// 2 s by default: these servers walk at every search.)
func TestWatchFaultRefusedWatches(t *testing.T) {
	refuse := func(dir string) error {
		if strings.HasPrefix(dir, "refused") {
			return fmt.Errorf("no space left on device (for the test)")
		}
		return nil
	}
	a := newActor(t, 20, Options{RecheckWithin: -1, Watch: treewatch.Options{AddFault: refuse}})
	w := func(i int) string { return word(700 + i) }
	a.write("fine/a.md", w(1))
	a.after("a leaf in a watched folder", map[string][]string{w(1): {"fine/a.md"}})
	a.write("refused/deep/b.md", w(2))
	a.after("a folder whose watch is refused", map[string][]string{w(2): {"refused/deep/b.md"}})
	if why := a.s.Backend.watch; why != nil && why.Broken() == "" {
		t.Fatal("the watcher did not give up")
	}
	a.write("fine/a.md", w(3))
	a.write("refused/deep/b.md", w(4))
	a.after("edits after the watch stopped", map[string][]string{w(1): nil, w(3): {"fine/a.md"}, w(4): {"refused/deep/b.md"}})

	// Refused from the start: nodes/ itself.
	b := newActor(t, 20, Options{RecheckWithin: -1, Watch: treewatch.Options{AddFault: func(dir string) error {
		return fmt.Errorf("inotify unavailable (for the test)")
	}}})
	if b.s.Backend.watch != nil {
		t.Fatal("a tree whose first watch is refused is watched")
	}
	b.write("x/a.md", w(5))
	b.after("a tree never watched", map[string][]string{w(5): {"x/a.md"}})
	b.write("x/a.md", w(6))
	b.after("an edit in a tree never watched", map[string][]string{w(5): nil, w(6): {"x/a.md"}})
}

// TestWatchFaultAnotherIndexWriter: another process syncing the served
// branch's index (a hook's or a kk command's walk) while a person adds
// and removes leaves and jobs run: whichever sync lands last, the served
// index ends as a walk's.
func TestWatchFaultAnotherIndexWriter(t *testing.T) {
	a := newActor(t, 20, Options{})
	other := store.New(a.k.Root)
	defer func() { _ = other.Close() }()
	db, _, err := index.Open(ctx, other, "main")
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = db.Close() }()
	stop, done := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(done)
		for {
			select {
			case <-stop:
				return
			default:
			}
			_, _ = db.Sync(ctx, a.k.NodesDir())
		}
	}()
	defer func() { close(stop); <-done }()
	for i := range 15 {
		wd := word(800 + i)
		rel := fmt.Sprintf("busy/f%d/l%d.md", i%3, i)
		a.write(rel, wd)
		find := map[string][]string{wd: {rel}}
		if i > 0 {
			prev := fmt.Sprintf("busy/f%d/l%d.md", (i-1)%3, i-1)
			if err := os.Remove(a.k.NodePath(prev)); err != nil {
				t.Fatal(err)
			}
			a.gone(prev)
			find[word(800+i-1)] = nil
		}
		a.after(fmt.Sprintf("round %d beside another writer", i), find)
	}
}

// TestWatchFaultJobDuringAStoppedRebase: a rebase of the served branch
// stopped by a conflict in a leaf (a detached HEAD, the leaf holding
// conflict markers) holds the jobs posted meanwhile; once the person
// aborts it, they run on the branch as it was, and the leaf is back.
func TestWatchFaultJobDuringAStoppedRebase(t *testing.T) {
	a := newActor(t, 20, Options{})
	w := func(i int) string { return word(900 + i) }
	git(t, a.k, "config", "user.name", "p")
	git(t, a.k, "config", "user.email", "p@p")
	a.write("conflict/leaf.md", w(1))
	git(t, a.k, "add", "-A")
	git(t, a.k, "commit", "-qm", "the leaf")
	git(t, a.k, "switch", "-q", "-c", "base")
	if err := os.WriteFile(a.k.NodePath("conflict/leaf.md"), []byte(a.leaf(w(2))), 0o644); err != nil {
		t.Fatal(err)
	}
	git(t, a.k, "commit", "-qam", "the leaf on base")
	git(t, a.k, "switch", "-q", "main")
	a.write("conflict/leaf.md", w(3))
	git(t, a.k, "commit", "-qam", "the leaf on main")
	a.after("the leaf committed on main", map[string][]string{w(3): {"conflict/leaf.md"}})
	if _, err := gitx.Run(ctx, a.k.Root, "rebase", "base"); err == nil {
		t.Fatal("the rebase did not stop at the conflict")
	}
	id := a.s.postAsync(t, "Posted during the rebase")
	a.s.waitHealth(t, "checked out")
	// Searched meanwhile through the detached HEAD's own index: the
	// leaf with conflict markers does not parse, and is skipped.
	if got := a.search(w(3)); len(got) > 0 {
		t.Fatalf("during the rebase, the leaf with conflict markers is found: %v", got)
	}
	git(t, a.k, "rebase", "--abort")
	j := a.s.waitJob(t, id, 30*time.Second)
	if j.Status != "done" {
		t.Fatalf("the job posted during the rebase: %+v", j)
	}
	jobCommit(t, a.k, "store", j)
	a.after("the rebase aborted", map[string][]string{w(3): {"conflict/leaf.md"}, w(2): nil})
	headChecks(t, a.k)
}

// TestWatchFaultBusyPerson: a person (a goroutine) writing, saving over,
// renaming and removing leaves and folders, with spaces and non-ASCII in
// their names, without pause, while jobs and searches run beside: every
// job is done with one commit, and once the person stops, the next
// search's barrier leaves the served index a walk's.
func TestWatchFaultBusyPerson(t *testing.T) {
	a := newActor(t, 30, Options{})
	stop, done := make(chan struct{}), make(chan struct{})
	dirs := []string{"busy", "busy/sub dir", "büsy", "busy/sub dir/ünter", "x y"}
	go func() {
		defer close(done)
		rng := rand.New(rand.NewPCG(3, 4))
		for i := 0; ; i++ {
			select {
			case <-stop:
				return
			default:
			}
			d := dirs[rng.IntN(len(dirs))]
			p := a.k.NodePath(fmt.Sprintf("%s/n %d.md", d, rng.IntN(6)))
			switch rng.IntN(7) {
			case 0, 1:
				_ = os.MkdirAll(filepath.Dir(p), 0o755)
				_ = os.WriteFile(p, []byte(handLeaf(fmt.Sprintf("map-busy-%d", i), fmt.Sprintf("Busy %d", i), "Busy.")), 0o644)
			case 2:
				tmp := filepath.Join(filepath.Dir(p), fmt.Sprintf(".save.tmp-%d", i))
				if os.WriteFile(tmp, []byte(handLeaf(fmt.Sprintf("map-busy-%d", i), fmt.Sprintf("Saved %d", i), "Saved.")), 0o644) == nil {
					_ = os.Rename(tmp, p)
				}
			case 3:
				_ = os.Remove(p)
			case 4:
				_ = os.Rename(p, a.k.NodePath(fmt.Sprintf("%s/n %d.md", dirs[rng.IntN(len(dirs))], rng.IntN(6))))
			case 5:
				if rng.IntN(4) == 0 {
					_ = os.RemoveAll(a.k.NodePath(d))
				}
			case 6:
				if rng.IntN(4) == 0 {
					_ = os.Rename(a.k.NodePath(d), a.k.NodePath(dirs[rng.IntN(len(dirs))]+" moved"))
				}
			}
		}
	}()
	stopped := false
	halt := func() {
		if !stopped {
			stopped = true
			close(stop)
			<-done
		}
	}
	defer halt()
	var ids []string
	for i := range 12 {
		ids = append(ids, a.s.postAsync(t, fmt.Sprintf("Beside the busy person %d", i)))
		_ = a.search("busy")
	}
	failed := 0
	for _, id := range ids {
		j := a.s.waitJob(t, id, 60*time.Second)
		switch j.Status {
		case "done":
			jobCommit(t, a.k, "store", j)
		case "failed":
			// Its folder removed by the person while it wrote there: it
			// fails alone, without a commit.
			failed++
			if log := git(t, a.k, "log", "--format=%s", "--grep", "("+j.JobID+")", "--fixed-strings"); log != "" {
				t.Fatalf("a failed job has a commit: %+v\n%s", j, log)
			}
			t.Logf("failed beside the busy person: %s", j.Error)
		default:
			t.Fatalf("a job beside the busy person: %+v", j)
		}
	}
	halt()
	// The service goes on: the jobs after are done.
	a.after("the busy person stopped", nil)
	a.after("again", nil)
	t.Logf("%d of %d jobs failed beside the busy person", failed, len(ids))
	if st := a.s.Backend.watch.Stats(); st.Watched == 0 {
		t.Fatalf("no sync was answered by the watch: %+v", st)
	}
	headChecks(t, a.k)
}

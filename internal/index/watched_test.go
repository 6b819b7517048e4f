//go:build linux

// The tree is watched on Linux only (internal/treewatch).

package index

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/kk-project/kk/internal/nobodytest"
	"github.com/kk-project/kk/internal/store"
	"github.com/kk-project/kk/internal/treewatch"
)

func newWatcher(t *testing.T, k *store.KB, o treewatch.Options) *treewatch.Watcher {
	t.Helper()
	w, err := treewatch.New(k.NodesDir(), k.StateDir(), o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = w.Close() })
	return w
}

// watchedDB opens k's index with w as its change source; the handle is
// closed when the test ends.
func watchedDB(t *testing.T, k *store.KB, w *treewatch.Watcher) *DB {
	t.Helper()
	db, _, err := Open(context.Background(), k, "main")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = db.Close() })
	db.Watch(w)
	return db
}

// nodeRows lists the leaves' rows of db: path, id, sha256, title.
func nodeRows(t *testing.T, db *DB) []string {
	t.Helper()
	rows, err := db.r.Query(`SELECT path, id, sha256, title FROM nodes WHERE origin = '' ORDER BY path`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var p, id, sha, title string
		if err := rows.Scan(&p, &id, &sha, &title); err != nil {
			t.Fatal(err)
		}
		out = append(out, p+" "+id+" "+sha+" "+title)
	}
	return out
}

// checkLikeAWalk checks that db's leaf state (kept and read back) and
// rows are those a fresh index's full sync of the tree makes, and its
// tree ReadTree's.
func checkLikeAWalk(t *testing.T, db *DB, k *store.KB, what string) {
	t.Helper()
	ctx := context.Background()
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
	defer func() { _ = fresh.Close() }()
	_, want, err := fresh.sync(ctx, k.NodesDir(), nil, false)
	if err == nil {
		want, err = fresh.state(ctx, fresh.r, true)
	}
	if err != nil {
		t.Fatal(err)
	}
	for i, s := range []*treeState{kept, read} {
		if d := stateDiff(s, want); d != "" {
			t.Fatalf("%s: state %s: %s", what, [...]string{"kept", "read back"}[i], d)
		}
		if hash, invalid := want.summary(); s.hash != hash || s.invalid != invalid {
			t.Fatalf("%s: summary %q %d, want %q %d", what, s.hash, s.invalid, hash, invalid)
		}
	}
	if got, want := nodeRows(t, db), nodeRows(t, fresh); !slices.Equal(got, want) {
		t.Fatalf("%s: rows\n%s\nwant\n%s", what, strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	ref, err := k.ReadTree(store.LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if d := treeDiff(read.tree(k.NodesDir()), ref); d != "" {
		t.Fatalf("%s: %s", what, d)
	}
}

// TestWatchedSyncMatchesAFullSync makes random changes of every kind a
// person, git or another process makes under nodes/ (writes, edits
// within the racy window keeping size and mtime, removals, folders made
// full, removed, renamed, replaced by a file, symlinks, hard links) and,
// after each, syncs a handle that watches the tree (a real inotify
// watcher) through each of its entry points: the state, the rows and the
// tree must be those of a full walk of a fresh index.
func TestWatchedSyncMatchesAFullSync(t *testing.T) {
	ctx := context.Background()
	k := seedKB(t)
	w := newWatcher(t, k, treewatch.Options{})
	db := watchedDB(t, k, w)
	if _, err := db.Sync(ctx, k.NodesDir()); err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(21, 22))
	dirs := []string{"", "auth", "cache", "x", "x/y", "x/y/z", "new"}
	pick := func() string {
		d := dirs[rng.IntN(len(dirs))]
		return store.JoinRel(d, fmt.Sprintf("n%d.md", rng.IntN(4)))
	}
	content := func(step int, tag string) string {
		return leaf(fmt.Sprintf("practice-%s%d", tag, step), fmt.Sprintf("%s %d", tag, step), "d", []string{"t"}, "", "b")
	}
	// put writes a leaf, making its folders; a path through a file is
	// left alone.
	put := func(rel, content string) {
		p := k.NodePath(rel)
		if os.MkdirAll(filepath.Dir(p), 0o755) == nil {
			_ = os.WriteFile(p, []byte(content), 0o644)
		}
	}
	ops := map[string]int{}
	for step := range 150 {
		var op string
		switch n := rng.IntN(16); {
		case n < 4:
			op = "write"
			put(pick(), content(step, "w"))
		case n < 5:
			// Same size, same mtime, within the racy window: only the
			// bytes differ. The leaf is touched and synced first, so
			// that the state records it within the window however long
			// the steps before took (a loaded machine).
			op = "racy"
			rel := pick()
			if _, err := os.Stat(k.NodePath(rel)); err == nil {
				now := time.Now()
				if err := os.Chtimes(k.NodePath(rel), now, now); err != nil {
					t.Fatal(err)
				}
				if _, err := db.Sync(ctx, k.NodesDir()); err != nil {
					t.Fatal(err)
				}
				old, _ := os.ReadFile(k.NodePath(rel))
				b := []byte(strings.Replace(string(old), "b\n", "c\n", 1))
				if len(b) == len(old) {
					if err := os.WriteFile(k.NodePath(rel), b, 0o644); err != nil {
						t.Fatal(err)
					}
					if err := os.Chtimes(k.NodePath(rel), now, now); err != nil {
						t.Fatal(err)
					}
				}
			}
		case n < 6:
			op = "aged write"
			rel := pick()
			put(rel, content(step, "a"))
			age(t, k, rel)
		case n < 7:
			op = "remove"
			_ = os.Remove(k.NodePath(pick()))
		case n < 8:
			op = "unreadable"
			put(pick(), "---\ntitle: [broken\n---\n")
		case n < 9:
			op = "remove folder"
			if d := dirs[1+rng.IntN(len(dirs)-1)]; true {
				_ = os.RemoveAll(k.NodePath(d))
			}
		case n < 10:
			// A folder made and filled at once (its watch comes after
			// its first leaves), nested.
			op = "new folder"
			d := fmt.Sprintf("made%d", step)
			put(d+"/deep/l1.md", content(step, "d"))
			put(d+"/l2.md", content(step, "e"))
			dirs = append(dirs, d)
		case n < 11:
			op = "rename folder"
			from := dirs[1+rng.IntN(len(dirs)-1)]
			to := fmt.Sprintf("moved%d", step)
			if err := os.Rename(k.NodePath(from), k.NodePath(to)); err == nil {
				dirs = append(dirs, to)
			}
		case n < 12:
			op = "folder to file"
			d := dirs[1+rng.IntN(len(dirs)-1)]
			_ = os.RemoveAll(k.NodePath(d))
			_ = os.MkdirAll(filepath.Dir(k.NodePath(d)), 0o755)
			_ = os.WriteFile(k.NodePath(d), []byte("not a folder"), 0o644)
			defer func() { _ = os.Remove(k.NodePath(d)) }()
			if rng.IntN(2) == 0 {
				_ = os.Remove(k.NodePath(d))
			}
		case n < 13:
			op = "symlink"
			rel := pick()
			_ = os.MkdirAll(filepath.Dir(k.NodePath(rel)), 0o755)
			target := pick()
			rt, _ := filepath.Rel(filepath.Dir(k.NodePath(rel)), k.NodePath(target))
			_ = os.Remove(k.NodePath(rel))
			_ = os.Symlink(rt, k.NodePath(rel))
		case n < 14:
			// A target a symlink names, changed in its own folder.
			op = "hard link"
			from, to := pick(), pick()
			_ = os.MkdirAll(filepath.Dir(k.NodePath(to)), 0o755)
			if _, err := os.Stat(k.NodePath(from)); err == nil && from != to {
				_ = os.Remove(k.NodePath(to))
				_ = os.Link(k.NodePath(from), k.NodePath(to))
			}
		case n < 15:
			op = "index.md and leftovers"
			d := dirs[rng.IntN(len(dirs))]
			_ = os.MkdirAll(k.NodePath(d), 0o755)
			if rng.IntN(2) == 0 {
				_ = os.WriteFile(filepath.Join(k.NodePath(d), "index.md"), []byte("# index\n"), 0o644)
			} else {
				_ = os.WriteFile(filepath.Join(k.NodePath(d), ".x.md.tmp-1"), []byte("half"), 0o644)
			}
		default:
			op = "nothing"
		}
		ops[op]++
		// A write through the transaction syncs its paths (SyncPaths);
		// every other sync is one of these.
		var err error
		switch rng.IntN(4) {
		case 0:
			_, err = db.Sync(ctx, k.NodesDir())
		case 1:
			_, _, err = db.Tree(ctx, k.NodesDir(), nil)
		case 2:
			_, _, err = db.SyncShape(ctx, k.NodesDir(), nil)
		default:
			_, _, _, err = db.TreeOrSnapshot(ctx, k.NodesDir(), nil)
		}
		if err != nil {
			t.Fatalf("step %d (%s): %v", step, op, err)
		}
		checkLikeAWalk(t, db, k, fmt.Sprintf("step %d (%s)", step, op))
	}
	watched, walked := db.WatchCounts()
	st := w.Stats()
	t.Logf("ops %v; syncs watched %d, walked %d; watcher %+v", ops, watched, walked, st)
	if watched < 80 || st.All[treewatch.ReasonMoved] == 0 {
		t.Fatalf("the watcher answered %d syncs of 150 (%+v): the test does not test it", watched, st)
	}
}

// TestWatchedSyncSeesEveryWriteBeforeIt: a leaf written (by anyone) just
// before a sync is in it, every time: the barrier.
func TestWatchedSyncSeesEveryWriteBeforeIt(t *testing.T) {
	ctx := context.Background()
	k := seedKB(t)
	w := newWatcher(t, k, treewatch.Options{})
	db := watchedDB(t, k, w)
	if _, err := db.Sync(ctx, k.NodesDir()); err != nil {
		t.Fatal(err)
	}
	for i := range 200 {
		rel := fmt.Sprintf("f%d/n.md", i%7)
		title := fmt.Sprintf("Barrier %d", i)
		writeLeaf(t, k, rel, leaf(fmt.Sprintf("practice-b%d", i), title, "d", nil, "", "b"))
		if i%3 == 0 {
			age(t, k, rel) // trusted by its stat, were it not named
		}
		if _, err := db.Sync(ctx, k.NodesDir()); err != nil {
			t.Fatal(err)
		}
		var got string
		if err := db.r.QueryRow(`SELECT title FROM nodes WHERE path = ?`, rel).Scan(&got); err != nil || got != title {
			t.Fatalf("write %d: the sync after it has %q (%v), want %q", i, got, err, title)
		}
	}
	if watched, walked := db.WatchCounts(); walked != 1 || watched != 200 {
		t.Fatalf("watched %d, walked %d syncs; want 200 and the first", watched, walked)
	}
}

// TestWatchedSyncFallsBack: whenever the watcher cannot vouch (told to
// doubt, its queue overflowed, a watch refused, a sync that failed), the
// sync walks, and finds what the kernel's lost reports would have named.
func TestWatchedSyncFallsBack(t *testing.T) {
	ctx := context.Background()
	k := seedKB(t)
	doubt := false
	refuse := ""
	w := newWatcher(t, k, treewatch.Options{
		Doubt: func() bool { return doubt },
		AddFault: func(dir string) error {
			if refuse != "" && dir == refuse {
				return fmt.Errorf("refused for the test")
			}
			return nil
		},
	})
	db := watchedDB(t, k, w)
	sync := func(what string) {
		t.Helper()
		if _, err := db.Sync(ctx, k.NodesDir()); err != nil {
			t.Fatal(err)
		}
		checkLikeAWalk(t, db, k, what)
	}
	sync("first")
	_, walked0 := db.WatchCounts()

	// Told to doubt.
	doubt = true
	writeLeaf(t, k, "auth/doubt.md", leaf("practice-doubt", "Doubt", "d", nil, "", "b"))
	sync("doubt")
	doubt = false

	// A real overflow of the kernel's queue: more reports than it holds
	// (fs.inotify.max_queued_events) between two syncs.
	max := 16384
	if b, err := os.ReadFile("/proc/sys/fs/inotify/max_queued_events"); err == nil {
		_, _ = fmt.Sscan(string(b), &max)
	}
	if max <= 1<<17 {
		// Two files in turn: the kernel merges a report with the one
		// before it when they are the same.
		ps := []string{k.NodePath("cache/render-cache.md"), k.NodePath("auth/login-flow.md")}
		for i := range max + 10 {
			ts := time.Now().Add(-time.Duration(i) * time.Second)
			if err := os.Chtimes(ps[i%2], ts, ts); err != nil {
				t.Fatal(err)
			}
		}
		writeLeaf(t, k, "cache/render-cache.md", leaf("practice-render-cache", "After the overflow", "d", nil, "", "b"))
		age(t, k, "cache/render-cache.md")
		sync("overflow")
		if w.Stats().All[treewatch.ReasonOverflow] == 0 {
			t.Fatalf("no overflow reported: %+v", w.Stats())
		}
	} else {
		t.Logf("max_queued_events is %d: the overflow is not tried", max)
	}

	// A failed sync: the next one walks.
	writeLeaf(t, k, "auth/fail.md", leaf("practice-fail", "Fail", "d", nil, "", "b"))
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	if _, err := db.Sync(cctx, k.NodesDir()); err == nil {
		t.Fatal("a sync with a cancelled context succeeded")
	}
	sync("after a failed sync")

	// A folder the kernel refuses to watch: the watcher gives up, every
	// sync walks.
	refuse = "refused"
	writeLeaf(t, k, "refused/r.md", leaf("practice-refused", "Refused", "d", nil, "", "b"))
	sync("refused")
	writeLeaf(t, k, "refused/r2.md", leaf("practice-refused2", "Refused 2", "d", nil, "", "b"))
	age(t, k, "refused/r2.md")
	sync("after the refusal")
	if w.Broken() == "" {
		t.Fatal("the watcher did not give up")
	}
	st := w.Stats()
	_, walked := db.WatchCounts()
	if st.All[treewatch.ReasonDoubt] != 1 || st.All[treewatch.ReasonUnsure] == 0 || walked-walked0 < 5 {
		t.Fatalf("walked %d syncs after the first; watcher %+v", walked-walked0, st)
	}
}

// TestWatchedSyncAfterAStaleWriter: another writer of the index (a hook's
// or a kk command's sync, or the served process's own transaction) that
// read the tree before a person's change and commits after the watched
// handle's sync has already applied it records the tree as it was. The
// kernel reported the change to the watched handle once, and will not
// again: its next sync must still end with the tree as it is, whichever
// handle wrote the stale state.
func TestWatchedSyncAfterAStaleWriter(t *testing.T) {
	ctx := context.Background()
	for _, who := range []string{"another handle", "the same handle"} {
		t.Run(who, func(t *testing.T) {
			k := seedKB(t)
			w := newWatcher(t, k, treewatch.Options{})
			db := watchedDB(t, k, w)
			if _, err := db.Sync(ctx, k.NodesDir()); err != nil {
				t.Fatal(err)
			}
			writeLeaf(t, k, "old/deeper/gone.md", leaf("practice-gone", "Gone soon", "d", nil, "", "b"))
			if _, err := db.Sync(ctx, k.NodesDir()); err != nil {
				t.Fatal(err)
			}
			stale := db
			if who == "another handle" {
				other, _, err := Open(ctx, store.New(k.Root), "main")
				if err != nil {
					t.Fatal(err)
				}
				defer func() { _ = other.Close() }()
				stale = other
			}
			// The stale writer lists the tree...
			start := time.Now()
			old, err := store.ScanDir(ctx, k.NodesDir())
			if err != nil {
				t.Fatal(err)
			}
			// ... a person adds a leaf and removes another meanwhile, and
			// the watched handle's sync applies both ...
			writeLeaf(t, k, "auth/added.md", leaf("practice-added", "Added by hand", "d", nil, "", "b"))
			if err := os.Remove(k.NodePath("cache/render-cache.md")); err != nil {
				t.Fatal(err)
			}
			// Folders made and removed too.
			writeLeaf(t, k, "fresh/deep/made.md", leaf("practice-made", "Made by hand", "d", nil, "", "b"))
			if err := os.RemoveAll(k.NodePath("old")); err != nil {
				t.Fatal(err)
			}
			if _, err := db.Sync(ctx, k.NodesDir()); err != nil {
				t.Fatal(err)
			}
			checkLikeAWalk(t, db, k, "after the person's change")
			// ... and the stale writer commits what it listed.
			if _, _, err := stale.syncListed(ctx, k.NodesDir(), start, nil, old, nil, "", false); err != nil {
				t.Fatal(err)
			}
			_, walked := db.WatchCounts()
			if _, err := db.Sync(ctx, k.NodesDir()); err != nil {
				t.Fatal(err)
			}
			checkLikeAWalk(t, db, k, "after the stale write")
			// Read where the stale writer wrote, not walked.
			if _, w := db.WatchCounts(); w != walked {
				t.Errorf("the sync after the stale write walked")
			}
		})
	}
}

// TestWatchedSyncBesideAChurn: a leaf made and removed again and again
// by someone else in a folder while the watched handle syncs (a file
// listed, then gone before its stat) is the folder's change, not the
// folder's disappearance: every sync keeps the folder's other leaves, and
// none fails for it.
func TestWatchedSyncBesideAChurn(t *testing.T) {
	ctx := context.Background()
	k := seedKB(t)
	w := newWatcher(t, k, treewatch.Options{})
	db := watchedDB(t, k, w)
	if _, err := db.Sync(ctx, k.NodesDir()); err != nil {
		t.Fatal(err)
	}
	want := nodeRows(t, db)
	stop := make(chan struct{})
	done := make(chan struct{})
	go func() {
		defer close(done)
		p := k.NodePath("auth/churn.md")
		body := []byte(leaf("practice-churn", "Churn", "d", nil, "", "b"))
		for {
			select {
			case <-stop:
				_ = os.Remove(p)
				return
			default:
			}
			_ = os.WriteFile(p, body, 0o644)
			_ = os.Remove(p)
		}
	}()
	for i := range 300 {
		_, err := db.Sync(ctx, k.NodesDir())
		if err != nil {
			close(stop)
			<-done
			t.Fatalf("sync %d beside the churn: %v", i, err)
		}
		got := nodeRows(t, db)
		got = slices.DeleteFunc(got, func(r string) bool { return strings.HasPrefix(r, "auth/churn.md ") })
		if !slices.Equal(got, want) {
			close(stop)
			<-done
			t.Fatalf("sync %d beside the churn: rows\n%s\nwant\n%s", i, strings.Join(got, "\n"), strings.Join(want, "\n"))
		}
	}
	close(stop)
	<-done
	if _, err := db.Sync(ctx, k.NodesDir()); err != nil {
		t.Fatal(err)
	}
	checkLikeAWalk(t, db, k, "after the churn")
}

// TestWatchedSyncFolderRemadeAtOnce: a folder removed and made again
// between two syncs (git's checkouts and stashes do so) is reported both
// as changed (its old watch reports its files removed) and as made, and
// so is one under it: each is read once, and no leaf is listed twice
// (which the index took for a leaf claiming its own id twice).
func TestWatchedSyncFolderRemadeAtOnce(t *testing.T) {
	ctx := context.Background()
	k := seedKB(t)
	writeLeaf(t, k, "auth/deep/under.md", leaf("practice-under", "Under", "d", nil, "", "b"))
	w := newWatcher(t, k, treewatch.Options{})
	db := watchedDB(t, k, w)
	if _, err := db.Sync(ctx, k.NodesDir()); err != nil {
		t.Fatal(err)
	}
	for i := range 3 {
		saved := map[string][]byte{}
		for _, rel := range []string{"auth/login-flow.md", "auth/session-tokens.md", "auth/deep/under.md"} {
			data, err := os.ReadFile(k.NodePath(rel))
			if err != nil {
				t.Fatal(err)
			}
			saved[rel] = data
		}
		if err := os.RemoveAll(k.NodePath("auth")); err != nil {
			t.Fatal(err)
		}
		// Watched again at the sync before, the folders made again
		// this time get their files after the watches of the old ones
		// reported them removed.
		for rel, data := range saved {
			writeLeaf(t, k, rel, string(data))
		}
		if i == 1 {
			writeLeaf(t, k, "auth/deep/more.md", leaf("practice-more", "More", "d", nil, "", "b"))
		}
		if _, err := db.Sync(ctx, k.NodesDir()); err != nil {
			t.Fatal(err)
		}
		checkLikeAWalk(t, db, k, fmt.Sprintf("auth/ made again (%d)", i))
	}
}

// TestWatchedSyncBesideAnUnreadableFolder: a folder a person made
// unreadable (chmod 000, or 444: listed but not entered), and one made
// unreadable from the start, are problems of the tree with their leaves
// left out, for a watched sync as for a walk: no sync fails for them,
// the watcher does not give up, and the leaves are back once the folder
// can be read again.
func TestWatchedSyncBesideAnUnreadableFolder(t *testing.T) {
	if !nobodytest.Unprivileged(t) {
		return
	}
	ctx := context.Background()
	k := seedKB(t)
	writeLeaf(t, k, "locked/deep/x.md", leaf("practice-x", "X", "d", nil, "", "b"))
	w := newWatcher(t, k, treewatch.Options{})
	db := watchedDB(t, k, w)
	sync := func(what string) {
		t.Helper()
		if _, err := db.Sync(ctx, k.NodesDir()); err != nil {
			t.Fatalf("%s: %v", what, err)
		}
		checkLikeAWalk(t, db, k, what)
	}
	sync("first")
	problems := func() []string {
		t.Helper()
		ps, err := db.Problems(ctx, k.NodesDir())
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, p := range ps {
			out = append(out, p.Error())
		}
		return out
	}
	for _, mode := range []os.FileMode{0, 0o444, 0o311} {
		if err := os.Chmod(k.NodePath("locked"), mode); err != nil {
			t.Fatal(err)
		}
		sync(fmt.Sprintf("locked/ made %o", mode))
		if ps := problems(); len(ps) != 1 || !strings.Contains(ps[0], "locked") {
			t.Fatalf("locked/ made %o: problems %q", mode, ps)
		}
		writeLeaf(t, k, "auth/beside.md", leaf("practice-beside", fmt.Sprintf("Beside %o", mode), "d", nil, "", "b"))
		sync(fmt.Sprintf("a leaf beside locked/ made %o", mode))
		if err := os.Chmod(k.NodePath("locked"), 0o755); err != nil {
			t.Fatal(err)
		}
		sync(fmt.Sprintf("locked/ readable again after %o", mode))
		if ps := problems(); len(ps) != 0 {
			t.Fatalf("locked/ readable again: problems %q", ps)
		}
	}
	// A folder made unreadable from the start: it cannot be watched; the
	// watcher sets its watches again at each sync until it can.
	if err := os.Mkdir(k.NodePath("shut"), 0o755); err != nil {
		t.Fatal(err)
	}
	writeLeaf(t, k, "shut/y.md", leaf("practice-y", "Y", "d", nil, "", "b"))
	if err := os.Chmod(k.NodePath("shut"), 0); err != nil {
		t.Fatal(err)
	}
	sync("shut/ made unreadable before it was watched")
	if err := os.Chmod(k.NodePath("shut"), 0o755); err != nil {
		t.Fatal(err)
	}
	sync("shut/ readable")
	writeLeaf(t, k, "shut/z.md", leaf("practice-z", "Z", "d", nil, "", "b"))
	sync("a leaf written in shut/")
	if w.Broken() != "" {
		t.Fatalf("the watcher gave up: %s", w.Broken())
	}
	if st := w.Stats(); st.All[treewatch.ReasonUnread] == 0 {
		t.Fatalf("an unwatched folder never made the watcher set its watches again: %+v", st)
	}
	_ = os.Chmod(k.NodePath("shut"), 0o755)
}

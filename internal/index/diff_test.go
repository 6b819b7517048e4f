package index

import (
	"maps"
	"path"
	"slices"
	"testing"

	"github.com/kk-project/kk/internal/store"
)

// TestDiffFollowsAFoldersFilesAcrossItsSubfolders: a listing in root
// collation puts a subfolder's files between its parent's (a/b.md,
// a/m/x.md, a/z.md); the comparison finds the one that changed and gives
// its folder all of its files, in order (the folders that did not change
// get none: a sync keeps their state as it is).
func TestDiffFollowsAFoldersFilesAcrossItsSubfolders(t *testing.T) {
	const synced = int64(10_000_000_000_000)
	old := synced - 10*int64(store.RacyWindow)
	entry := func(name string) leafEntry {
		return leafEntry{name: name, size: 10, mtime: old, sha: "s-" + name, id: name}
	}
	s := &treeState{synced: synced, folders: map[string]*folderState{
		"":    {leaves: []leafEntry{entry("top.md")}},
		"a":   {leaves: []leafEntry{entry("b.md"), entry("z.md")}},
		"a/m": {leaves: []leafEntry{entry("x.md")}},
	}}
	l := &store.Listing{Dirs: []string{"", "a", "a/m"}, IndexDirs: map[string]bool{}}
	for _, rel := range []string{"a/b.md", "a/m/x.md", "a/z.md", "top.md"} {
		size := int64(10)
		if rel == "a/z.md" {
			size = 11 // written since
		}
		l.Files = append(l.Files, store.NewLeafFile(rel, "/nodes/"+rel, size, old))
	}
	d := s.diff(l)
	names := func(dir string) []string {
		var out []string
		for _, ld := range d.files[dir] {
			out = append(out, path.Base(ld.f.rel))
		}
		return out
	}
	for dir, want := range map[string][]string{"": nil, "a": {"b.md", "z.md"}, "a/m": nil} {
		if got := names(dir); !slices.Equal(got, want) {
			t.Errorf("files of %q: %v, want %v", dir, got, want)
		}
	}
	if len(d.work) != 1 || d.work[0].f.rel != "a/z.md" || d.unchanged != 3 {
		t.Errorf("work %d (want a/z.md alone), unchanged %d (want 3)", len(d.work), d.unchanged)
	}
	if !d.dirty["a"] || d.dirty["a/m"] || d.dirty[""] || len(d.gone) > 0 || d.reshaped {
		t.Errorf("dirty %v, gone %v, reshaped %v: want folder a alone dirty", d.dirty, d.gone, d.reshaped)
	}
}

// TestDiffFindsWhatIsGone: an entry no file matches (a/old.md) makes its
// folder change, and a folder no longer listed (b) is gone with its
// leaves, though no folder the walk found changed otherwise.
func TestDiffFindsWhatIsGone(t *testing.T) {
	const synced = int64(10_000_000_000_000)
	old := synced - 10*int64(store.RacyWindow)
	entry := func(name string) leafEntry {
		return leafEntry{name: name, size: 10, mtime: old, sha: "s-" + name, id: name}
	}
	for _, tc := range []struct {
		name      string
		state     map[string]*folderState
		wantGone  []string
		wantDirty []string
	}{
		{"an entry gone", map[string]*folderState{
			"":  {},
			"a": {leaves: []leafEntry{entry("b.md"), entry("old.md")}},
		}, []string{"a/old.md"}, []string{"a"}},
		{"a folder gone", map[string]*folderState{
			"":  {},
			"a": {leaves: []leafEntry{entry("b.md")}},
			"b": {leaves: []leafEntry{entry("gone.md")}},
		}, []string{"b/gone.md"}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := &treeState{synced: synced, folders: tc.state}
			l := &store.Listing{Dirs: []string{"", "a"}, IndexDirs: map[string]bool{},
				Files: []store.LeafFile{store.NewLeafFile("a/b.md", "/nodes/a/b.md", 10, old)}}
			d := s.diff(l)
			var gone []string
			for _, e := range d.gone {
				gone = append(gone, e.name)
			}
			slices.Sort(gone)
			dirty := slices.Sorted(maps.Keys(d.dirty))
			if !slices.Equal(gone, tc.wantGone) || !slices.Equal(dirty, tc.wantDirty) || !d.reshaped || len(d.work) > 0 || d.unchanged != 1 {
				t.Errorf("gone %v dirty %v reshaped %v work %d unchanged %d; want gone %v dirty %v, reshaped, no work, 1 unchanged",
					gone, dirty, d.reshaped, len(d.work), d.unchanged, tc.wantGone, tc.wantDirty)
			}
		})
	}
}

package serve

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kk-project/kk/internal/httpapi"
	"github.com/kk-project/kk/internal/indexfiles"
	"github.com/kk-project/kk/internal/store"
)

// The server keeps one KB, and with it the tree, the generation state and
// the ranking between jobs. Whatever happens between two jobs (a hand edit
// of a note's tags and title, a note removed), what the jobs leave must be
// what a full rebuild gives: kk index rebuild --check, run as a new
// command (a new KB value, no caches), finds nothing to change.
func TestKeptStateMatchesFullRebuild(t *testing.T) {
	k := newRepo(t, 200)
	s := start(t, k, nil)
	tags := [][]string{{"bench"}, {"api", "cache"}, {"release"}, {"api"}, nil}
	var paths []string
	for i := range 12 {
		j := s.post(t, httpapi.PostRequest{
			Title:   fmt.Sprintf("Kept state note %d", i%5),
			Content: fmt.Sprintf("Note %d about the release queue and the api cache.\n", i),
			Tags:    tags[i%len(tags)],
		})
		if j.Status != "done" {
			t.Fatalf("job %d: %+v", i, j)
		}
		paths = append(paths, j.Path)
		switch i {
		case 4: // a hand edit of a written note: other tags, other title
			p := k.NodePath(paths[1])
			data, err := os.ReadFile(p)
			if err != nil {
				t.Fatal(err)
			}
			var out []string
			skip := false
			for _, l := range strings.Split(string(data), "\n") {
				if skip && strings.HasPrefix(l, "  - ") {
					continue
				}
				skip = false
				switch {
				case strings.HasPrefix(l, "tags:"):
					l, skip = "tags: [hand-edited, release]", true
				case strings.HasPrefix(l, "title:"):
					l = "title: Edited by hand"
				}
				out = append(out, l)
			}
			if err := os.WriteFile(p, []byte(strings.Join(out, "\n")), 0o644); err != nil {
				t.Fatal(err)
			}
		case 8: // a note removed by hand
			if err := os.Remove(k.NodePath(paths[2])); err != nil {
				t.Fatal(err)
			}
		}
		// No caches either: every leaf parsed, every file generated.
		for _, c := range []string{"leaves.cache", "index.cache"} {
			_ = os.Rename(filepath.Join(k.StateDir(), c), filepath.Join(k.StateDir(), c+".bak")) // gone since the caches are the index's
		}
		res, err := indexfiles.Check(ctx, store.New(k.Root))
		if err != nil {
			t.Fatal(err)
		}
		for _, c := range []string{"leaves.cache", "index.cache"} {
			_ = os.Rename(filepath.Join(k.StateDir(), c+".bak"), filepath.Join(k.StateDir(), c))
		}
		// Between a hand edit and the next job the index files are stale,
		// as after any hand edit; every job must bring them back.
		if len(res.Changed)+len(res.Removed) > 0 && i != 4 && i != 8 {
			t.Fatalf("after job %d the index files differ from a full rebuild: %v %v", i, res.Changed, res.Removed)
		}
	}
}

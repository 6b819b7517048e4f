package store

import (
	"os"
	"path/filepath"
	"reflect"
	"testing"
	"time"

	"github.com/kk-project/kk/internal/node"
)

func TestLeafCacheRoundTrip(t *testing.T) {
	k := New(t.TempDir())
	files := []LeafFile{{Rel: "a/practice-x.md", Size: 120, mtime: 5}, {Rel: "map-y.md", Size: 1, mtime: -3}}
	leaves := []*node.Node{
		{Path: "a/practice-x.md", Format: 3, Type: "practice", Title: "X é", Description: "d", Tags: []string{"t1", "t2"}, ID: "practice-x",
			DerivedFrom: []string{}, RelatesTo: []string{"map-y"}, DependsOn: []string{}, Confidence: "high", Status: "draft", StaleAfter: "2030-01-01", BodySize: 42,
			GraphLinks: []string{"molecule-m", "req-7"}},
		{Path: "map-y.md", Format: 2, Type: "map", Title: "", ID: "map-y", Tags: []string{}, DerivedFrom: []string{}, RelatesTo: []string{}, DependsOn: []string{}},
	}
	k.saveCache(files, leaves, []string{"h1", "h2"})
	c := k.loadCache()
	if c == nil {
		t.Fatal("cache did not load")
	}
	c.written = time.Now().Add(time.Hour).UnixNano()
	for i, f := range files {
		n, h, ok := c.lookup(f)
		if !ok || h != []string{"h1", "h2"}[i] || !reflect.DeepEqual(n, leaves[i]) {
			t.Fatalf("entry %d: ok=%v hash=%q node=%+v", i, ok, h, n)
		}
	}
	if _, _, ok := c.lookup(LeafFile{Rel: "map-y.md", Size: 2, mtime: -3}); ok {
		t.Fatal("a size change was served from the cache")
	}
	// A truncated or foreign file is ignored, never trusted.
	data, _ := os.ReadFile(k.CachePath())
	if err := os.WriteFile(k.CachePath(), data[:len(data)/2], 0o644); err != nil {
		t.Fatal(err)
	}
	if k.loadCache() != nil {
		t.Fatal("truncated cache loaded")
	}
	if err := os.WriteFile(filepath.Join(k.StateDir(), "leaves.cache"), []byte("junk"), 0o644); err != nil {
		t.Fatal(err)
	}
	if k.loadCache() != nil {
		t.Fatal("junk cache loaded")
	}
}

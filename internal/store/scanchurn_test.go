package store

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// TestScanBesideAChurn: files and folders made and removed again and
// again by someone else while the tree is listed (an entry listed, then
// gone before its stat or its own listing) are as if listed after: no
// listing fails for them, and every other leaf and folder is in each.
func TestScanBesideAChurn(t *testing.T) {
	root := filepath.Join(t.TempDir(), "nodes")
	stable := []string{"a/one.md", "a/two.md", "b/c/three.md", "four.md"}
	for _, rel := range stable {
		p := filepath.Join(root, filepath.FromSlash(rel))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte("x"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	stop, done := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(done)
		leaf, dir := filepath.Join(root, "a", "churn.md"), filepath.Join(root, "b", "churn")
		for {
			select {
			case <-stop:
				return
			default:
			}
			_ = os.WriteFile(leaf, []byte("x"), 0o644)
			_ = os.MkdirAll(filepath.Join(dir, "deep"), 0o755)
			_ = os.WriteFile(filepath.Join(dir, "deep", "x.md"), []byte("x"), 0o644)
			_ = os.Remove(leaf)
			_ = os.RemoveAll(dir)
		}
	}()
	defer func() { close(stop); <-done }()
	ctx := context.Background()
	for i := range 400 {
		var l *Listing
		var err error
		if i%2 == 0 {
			l, err = ScanDir(ctx, root)
		} else {
			l, err = ScanPart(ctx, root, []string{"", "a", "b"}, func(map[string][]string) ([]string, error) { return []string{"b/c", "b/churn"}, nil })
		}
		if err != nil {
			t.Fatalf("listing %d beside the churn: %v", i, err)
		}
		var files []string
		for _, f := range l.Files {
			files = append(files, f.Rel)
		}
		for _, rel := range stable {
			if !slices.Contains(files, rel) {
				t.Fatalf("listing %d beside the churn lacks %s: %v", i, rel, files)
			}
		}
		for _, d := range []string{"", "a", "b", "b/c"} {
			if !slices.Contains(l.Dirs, d) {
				t.Fatalf("listing %d beside the churn lacks folder %q: %v", i, d, l.Dirs)
			}
		}
	}
}

package gitx

import (
	"context"
	"os"
	"path/filepath"
	"testing"
)

func TestBlobs(t *testing.T) {
	dir := gitRepo(t)
	ctx := context.Background()
	// Before the first commit no name names anything.
	got, err := Blobs(ctx, dir, []string{"HEAD:./a.md"})
	if err != nil || len(got) != 0 {
		t.Fatalf("before any commit: %q, %v", got, err)
	}
	commit(t, dir, map[string]string{"a.md": "first\n", "sub/b.md": "", "sub/c.md": "with\nlines\n"}, "one")
	commit(t, dir, map[string]string{"a.md": "second\n"}, "two")
	if err := os.MkdirAll(filepath.Join(dir, "sub"), 0o755); err != nil {
		t.Fatal(err)
	}
	names := []string{"HEAD:./a.md", "HEAD~1:./a.md", "HEAD^2:./a.md", "HEAD:./missing.md", "HEAD:./sub", "HEAD:./sub/b.md", "HEAD:./sub/c.md"}
	got, err = Blobs(ctx, dir, names)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{"HEAD:./a.md": "second\n", "HEAD~1:./a.md": "first\n", "HEAD:./sub/b.md": "", "HEAD:./sub/c.md": "with\nlines\n"}
	if len(got) != len(want) {
		t.Errorf("got %d blobs %q, want %d", len(got), got, len(want))
	}
	for n, w := range want {
		if b, ok := got[n]; !ok || string(b) != w {
			t.Errorf("%s: %q (%v), want %q", n, b, ok, w)
		}
	}
	// ./ is relative to the folder asked from.
	got, err = Blobs(ctx, filepath.Join(dir, "sub"), []string{"HEAD:./c.md"})
	if err != nil || string(got["HEAD:./c.md"]) != "with\nlines\n" {
		t.Errorf("from sub/: %q, %v", got, err)
	}
	if _, err := Blobs(ctx, dir, []string{"HEAD:a\nb"}); err == nil {
		t.Error("a name with a newline was asked")
	}
}

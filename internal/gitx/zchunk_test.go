package gitx

import (
	"bytes"
	"compress/zlib"
	"context"
	"fmt"
	"hash/adler32"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestAdler32Combine(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for range 200 {
		a := make([]byte, r.IntN(200000))
		b := make([]byte, r.IntN(200000))
		for i := range a {
			a[i] = byte(r.UintN(256))
		}
		for i := range b {
			b[i] = byte(r.UintN(256))
		}
		want := adler32.Checksum(append(bytes.Clone(a), b...))
		if got := adler32Combine(adler32.Checksum(a), adler32.Checksum(b), len(b)); got != want {
			t.Fatalf("combine(%d, %d bytes) = %08x, want %08x", len(a), len(b), got, want)
		}
	}
}

// graphLike is a GRAPH.md-shaped text of n sections.
func graphLike(n int, extra map[int]string) []byte {
	var b strings.Builder
	fmt.Fprintf(&b, "---\nnode_count: %d\n---\n# kenkeep Graph\n\nTotal nodes: %d\n", n, n)
	for i := range n {
		fmt.Fprintf(&b, "\n## note-%05d\n\n- **kind:** practice\n- **title:** Note %d about the release queue\n- **path:** area-%d/note-%05d.md\n- **tags:** bench, t%d\n", i, i, i%40, i, i%7)
		if s, ok := extra[i]; ok {
			b.WriteString(s)
		}
	}
	return []byte(b.String())
}

// readLoose inflates a loose object the way git does and returns its
// content after the header.
func readLoose(t *testing.T, gitDir string, id []byte) []byte {
	t.Helper()
	hexID := fmt.Sprintf("%x", id)
	f, err := os.Open(filepath.Join(gitDir, "objects", hexID[:2], hexID[2:]))
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = f.Close() }()
	zr, err := zlib.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	data, err := io.ReadAll(zr) // checks the Adler-32 at the end
	if err != nil {
		t.Fatalf("inflating %s: %v", hexID, err)
	}
	_, body, ok := bytes.Cut(data, []byte{0})
	if !ok {
		t.Fatalf("object %s has no header", hexID)
	}
	return body
}

// Large objects are compressed in pieces, the next version reusing the
// pieces that did not change; git reads them (cat-file, fsck) and so
// does compress/zlib, checksum included.
func TestChunkedObjectsReadByGit(t *testing.T) {
	dir := gitRepo(t)
	gitDir := filepath.Join(dir, ".git")
	ctx := context.Background()
	versions := [][]byte{
		graphLike(8000, nil),
		graphLike(8001, nil),
		graphLike(8001, map[int]string{4000: "- **relates_to:** note-00001\n"}),
		graphLike(8001, map[int]string{0: "- **depends_on:** x\n", 8000: "- **derived_from:** y\n"}),
		append(graphLike(3000, nil), 'x'), // no newline at the end
	}
	for i, v := range versions {
		if len(v) < chunkedMin {
			t.Fatalf("version %d is %d bytes, too small to be chunked", i, len(v))
		}
		id, err := (objectStore{dir: filepath.Join(gitDir, "objects"), algo: algoSHA1}).write("blob", v)
		if err != nil {
			t.Fatal(err)
		}
		if got := readLoose(t, gitDir, id); !bytes.Equal(got, v) {
			t.Fatalf("version %d reads back as %d bytes, want %d", i, len(got), len(v))
		}
		out, err := Run(ctx, dir, "cat-file", "blob", fmt.Sprintf("%x", id))
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(out, v) {
			t.Fatalf("git cat-file reads version %d as %d bytes, want %d", i, len(out), len(v))
		}
	}
	if out, err := Run(ctx, dir, "fsck", "--strict", "--unreachable", "--no-dangling"); err != nil {
		t.Fatalf("git fsck: %v\n%s", err, out)
	}
}

// A version that differs from the last by a section compresses only the
// pieces around the change.
func TestChunkedReusesPieces(t *testing.T) {
	old := graphLike(8000, nil)
	next := graphLike(8000, map[int]string{4000: "- **relates_to:** note-00001\n"})
	oldCuts, nextCuts := cutPoints(old), cutPoints(next)
	if len(oldCuts) < 10 {
		t.Fatalf("%d bytes were cut in %d pieces", len(old), len(oldCuts))
	}
	pieces := func(data []byte, cuts []int) map[string]bool {
		m := map[string]bool{}
		start := 0
		for _, end := range cuts {
			m[string(data[start:end])] = true
			start = end
		}
		return m
	}
	was := pieces(old, oldCuts)
	fresh := 0
	for p := range pieces(next, nextCuts) {
		if !was[p] {
			fresh++
		}
	}
	if fresh > 3 {
		t.Errorf("%d of %d pieces changed for one inserted line", fresh, len(nextCuts))
	}
	for i, c := range nextCuts {
		start := 0
		if i > 0 {
			start = nextCuts[i-1]
		}
		if c-start > chunkMax+4096 {
			t.Errorf("piece %d is %d bytes", i, c-start)
		}
	}
}

func BenchmarkWriteLargeObject(b *testing.B) {
	store := objectStore{dir: b.TempDir(), algo: algoSHA1}
	v := graphLike(10000, nil)
	i := 0
	for b.Loop() {
		// Each version differs from the last by its count and one line,
		// as GRAPH.md does after a job.
		i++
		data := append(bytes.Clone(v), fmt.Sprintf("\n## zz-%d\n", i)...)
		if _, err := store.write("blob", data); err != nil {
			b.Fatal(err)
		}
	}
}

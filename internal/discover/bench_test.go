package discover

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kk-project/kk/internal/gitx"
)

// benchRepo generates (once, kept under the temp folder) a committed git
// repository of n files, all markdown, 0.5 to 8 KiB each, in nested
// folders, with a .gitignore and a .kkignore that each exclude a few.
func benchRepo(b *testing.B, n int) string {
	b.Helper()
	dir := filepath.Join(os.TempDir(), fmt.Sprintf("kk-bench-docs-%d", n))
	if _, err := os.Stat(filepath.Join(dir, ".done")); err == nil {
		return dir
	}
	if err := os.RemoveAll(dir); err != nil {
		b.Fatal(err)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		b.Fatal(err)
	}
	initRepo(b, dir)
	rng := rand.New(rand.NewPCG(1, 2))
	para := strings.Repeat("Lorem ipsum dolor sit amet, consectetur adipiscing elit. ", 8) + "\n"
	for i := range n {
		p := filepath.Join(dir, fmt.Sprintf("pkg%02d", i%40), fmt.Sprintf("sub%02d", i/40%25), fmt.Sprintf("doc-%05d.md", i))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			b.Fatal(err)
		}
		size := 512 + rng.IntN(8<<10-512)
		if err := os.WriteFile(p, []byte(strings.Repeat(para, size/len(para)+1)[:size]), 0o644); err != nil {
			b.Fatal(err)
		}
	}
	writeFiles(b, dir, map[string]string{".gitignore": "pkg39/\n", ".kkignore": "pkg38/\n**/doc-000*.md\n"})
	ctx := context.Background()
	for _, args := range [][]string{{"add", "-A"}, {"-c", "user.name=kk", "-c", "user.email=kk@example.invalid", "commit", "-qm", "docs"}} {
		if _, err := gitx.Run(ctx, dir, args...); err != nil {
			b.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(dir, ".done"), nil, 0o644); err != nil {
		b.Fatal(err)
	}
	return dir
}

// BenchmarkFindDocsWithHashes20k times `kk finddocs --with-hashes` over a
// 20,000-file repository (budget: 1 s).
func BenchmarkFindDocsWithHashes20k(b *testing.B) {
	dir := benchRepo(b, 20000)
	ctx := context.Background()
	var docs int
	for b.Loop() {
		res, err := Find(ctx, dir, Options{Hashes: true})
		if err != nil {
			b.Fatal(err)
		}
		docs = len(res.Docs)
	}
	b.ReportMetric(float64(docs), "docs")
}

// BenchmarkFindDocs20k is the same without hashing.
func BenchmarkFindDocs20k(b *testing.B) {
	dir := benchRepo(b, 20000)
	ctx := context.Background()
	for b.Loop() {
		if _, err := Find(ctx, dir, Options{}); err != nil {
			b.Fatal(err)
		}
	}
}

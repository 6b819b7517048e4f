package freshness

import (
	"bufio"
	"context"
	"fmt"
	"io/fs"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kk-project/kk/internal/benchtree"
	"github.com/kk-project/kk/internal/gitx"
	"github.com/kk-project/kk/internal/store"
)

// benchRepo generates (once, kept under the temp folder) a git repository
// holding a synthetic knowledge base of nodes leaves and a history of
// commits made with git fast-import: the first commit adds everything,
// each later one changes one to six files, a mix of leaves, the documents
// the leaves are derived from, and source files.
func benchRepo(b *testing.B, nodes, commits int) *store.KB {
	b.Helper()
	if _, err := exec.LookPath("git"); err != nil {
		b.Skip("git not installed")
	}
	dir := filepath.Join(os.TempDir(), fmt.Sprintf("kk-bench-fresh-%d-%d", nodes, commits))
	k := store.New(dir)
	if _, err := os.Stat(filepath.Join(dir, ".done")); err == nil {
		return k
	}
	if err := os.RemoveAll(dir); err != nil {
		b.Fatal(err)
	}
	if _, err := benchtree.Generate(dir, benchtree.Options{Nodes: nodes, Seed: 1}); err != nil {
		b.Fatal(err)
	}
	t, err := k.ReadTree(store.LoadOptions{})
	if err != nil {
		b.Fatal(err)
	}
	var leaves, sources []string
	seen := map[string]bool{}
	for _, n := range t.Leaves {
		leaves = append(leaves, store.DirName+"/nodes/"+n.Path)
		for _, d := range n.DerivedFrom {
			if !seen[d] {
				seen[d] = true
				sources = append(sources, d)
			}
		}
	}
	for i := range 2000 {
		sources = append(sources, fmt.Sprintf("src/pkg%02d/file%04d.go", i%50, i))
	}
	ctx := context.Background()
	if _, err := gitx.Run(ctx, dir, "init", "-q"); err != nil {
		b.Fatal(err)
	}
	cmd := exec.Command("git", "fast-import", "--quiet")
	cmd.Dir = dir
	stdin, err := cmd.StdinPipe()
	if err != nil {
		b.Fatal(err)
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	w := bufio.NewWriterSize(stdin, 1<<20)
	inline := func(path string, data []byte) {
		fmt.Fprintf(w, "M 100644 inline %s\ndata %d\n%s\n", path, len(data), data)
	}
	when := int64(1_700_000_000)
	header := func(i int) {
		fmt.Fprintf(w, "commit refs/heads/main\ncommitter kk <kk@example.invalid> %d +0000\ndata %d\n%s\n", when+int64(i)*60, len(fmt.Sprint("c", i)), fmt.Sprint("c", i))
	}
	header(0)
	err = filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			if d != nil && d.Name() == ".git" {
				return filepath.SkipDir
			}
			return err
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		inline(filepath.ToSlash(p[len(dir)+1:]), data)
		return nil
	})
	if err != nil {
		b.Fatal(err)
	}
	for _, s := range sources {
		inline(s, []byte(s+" v0\n"))
	}
	rng := rand.New(rand.NewPCG(7, 11))
	for i := 1; i < commits; i++ {
		header(i)
		for range 1 + rng.IntN(6) {
			var p string
			if rng.IntN(3) == 0 {
				p = leaves[rng.IntN(len(leaves))]
				data, err := os.ReadFile(filepath.Join(dir, filepath.FromSlash(p)))
				if err != nil {
					b.Fatal(err)
				}
				inline(p, append(data, fmt.Sprintf("\nRevision %d.\n", i)...))
				continue
			}
			p = sources[rng.IntN(len(sources))]
			inline(p, fmt.Appendf(nil, "%s v%d\n", p, i))
		}
	}
	if err := w.Flush(); err != nil {
		b.Fatal(err)
	}
	if err := stdin.Close(); err != nil {
		b.Fatal(err)
	}
	if err := cmd.Wait(); err != nil {
		b.Fatal(err)
	}
	for _, args := range [][]string{{"symbolic-ref", "HEAD", "refs/heads/main"}, {"reset", "-q", "--hard", "main"}} {
		if _, err := gitx.Run(ctx, dir, args...); err != nil {
			b.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(dir, ".done"), nil, 0o644); err != nil {
		b.Fatal(err)
	}
	return k
}

// BenchmarkCheck10kNodes5kCommits times `kk freshness` on 10,000 nodes
// over a 5,000-commit history (budget: 2 s).
func BenchmarkCheck10kNodes5kCommits(b *testing.B) {
	k := benchRepo(b, 10000, 5000)
	ctx := context.Background()
	var rep *Report
	for b.Loop() {
		rep = Check(ctx, k, Options{})
	}
	if !rep.Available || rep.Commits != 5000 || rep.ConsideredNodes != 10000 {
		b.Fatalf("unexpected report: available %v (%s), %d commits, %d nodes", rep.Available, rep.Reason, rep.Commits, rep.ConsideredNodes)
	}
	b.ReportMetric(float64(rep.FlaggedCount), "flagged")
	if strings.TrimSpace(rep.Reason) != "" {
		b.Fatal(rep.Reason)
	}
}

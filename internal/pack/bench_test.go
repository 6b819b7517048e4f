package pack

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/kk-project/kk/internal/benchtree"
	"github.com/kk-project/kk/internal/store"
	"github.com/kk-project/kk/internal/txn"
)

// benchSource generates a knowledge base of n leaves with its index.
func benchSource(b *testing.B, n int) *store.KB {
	b.Helper()
	root := filepath.Join(b.TempDir(), "src")
	k, err := benchtree.Generate(root, benchtree.Options{Nodes: n, Seed: 1})
	if err != nil {
		b.Fatal(err)
	}
	if _, err := txn.Rebuild(context.Background(), k, txn.Meta{Command: "test"}, txn.RebuildOptions{}); err != nil {
		b.Fatal(err)
	}
	return k
}

var benchManifest = ExportOptions{Manifest: testManifest}

func benchmarkExport(b *testing.B, n int, out string) {
	k := benchSource(b, n)
	opts := benchManifest
	opts.Out = filepath.Join(b.TempDir(), out)
	b.ResetTimer()
	for b.Loop() {
		if _, err := Export(context.Background(), k, opts); err != nil {
			b.Fatal(err)
		}
	}
}

func benchmarkImport(b *testing.B, n int) {
	k := benchSource(b, n)
	opts := benchManifest
	opts.Out = filepath.Join(b.TempDir(), "pack.tar.gz")
	if _, err := Export(context.Background(), k, opts); err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		dst := newKB(b)
		b.StartTimer()
		if _, err := Import(context.Background(), dst, ImportOptions{Source: opts.Out, Command: "bench"}); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkExportDir1k(b *testing.B)      { benchmarkExport(b, 1000, "pack") }
func BenchmarkExportArchive1k(b *testing.B)  { benchmarkExport(b, 1000, "pack.tar.gz") }
func BenchmarkExportArchive10k(b *testing.B) { benchmarkExport(b, 10000, "pack.tar.gz") }
func BenchmarkImport1k(b *testing.B)         { benchmarkImport(b, 1000) }
func BenchmarkImport10k(b *testing.B)        { benchmarkImport(b, 10000) }

package index_test

import (
	"context"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/kk-project/kk/internal/benchtree"
	"github.com/kk-project/kk/internal/index"
	"github.com/kk-project/kk/internal/store"
)

// extractKB generates a tree of n leaves plus 1,000 extracted entities:
// 200 requirement documents (two links each) and a manifest of 800
// symbols (three edges each). Every file is an hour old.
func extractKB(b *testing.B, n int) *store.KB {
	b.Helper()
	k, err := benchtree.Generate(b.TempDir(), benchtree.Options{Nodes: n, Seed: 1})
	if err != nil {
		b.Fatal(err)
	}
	write := func(rel, content string) {
		p := filepath.Join(k.Root, filepath.FromSlash(rel))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			b.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			b.Fatal(err)
		}
	}
	for i := range 200 {
		write(fmt.Sprintf("docs/requirements/area-%d/req-%d.md", i%10, i), fmt.Sprintf(
			"---\nid: REQ-%d\ntype: req\npriority: must\nlinks:\n  specified_by: [SCN-%d]\n  verified_by: [TEST-%d]\n---\n# Requirement %d\n\nThe system does thing %d.\n", i, i, i, i, i))
	}
	var m strings.Builder
	m.WriteString("{\"schema_version\": 1, \"symbols\": [\n")
	for i := range 800 {
		if i > 0 {
			m.WriteString(",\n")
		}
		fmt.Fprintf(&m, `{"id": "sym-%d", "name": "pkg%d.Func%d", "kind": "function", "file": "pkg%d/f.go", "implements": ["REQ-%d"], "covered_by": ["TEST-%d"], "publishes": ["EVENT-%d"]}`, i, i%40, i, i%40, i%200, i, i%30)
	}
	m.WriteString("\n]}\n")
	write(".ai/kenkeep/symbols.json", m.String())
	old := time.Now().Add(-time.Hour)
	err = filepath.WalkDir(k.Root, func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			err = os.Chtimes(p, old, old)
		}
		return err
	})
	if err != nil {
		b.Fatal(err)
	}
	return k
}

// go test ./internal/index -run '^$' -bench Extract -benchtime 20x
func BenchmarkSyncNoChange10kExtracted1k(b *testing.B) {
	ctx := context.Background()
	k := extractKB(b, 10000)
	db, st, err := index.Open(ctx, k, "main")
	if err != nil || st.Extracted.Entities != 1000 || len(st.Skipped) != 0 {
		b.Fatalf("%+v, %v", st, err)
	}
	defer func() { _ = db.Close() }()
	ex, err := index.ExtractionFor(k)
	if err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		st, err := db.SyncWith(ctx, k.NodesDir(), ex)
		if err != nil || st.Unchanged != 10000 || st.Extracted.Unchanged != 201 || st.Changed() {
			b.Fatalf("%+v, %v", st, err)
		}
	}
}

// The same tree and extracted files, open + sync + close as a command
// runs it (config read included).
func BenchmarkOpenSyncNoChange10kExtracted1k(b *testing.B) {
	ctx := context.Background()
	k := extractKB(b, 10000)
	if _, err := index.Sync(ctx, k, "main"); err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		if _, err := index.Sync(ctx, k, "main"); err != nil {
			b.Fatal(err)
		}
	}
}

// Re-reading the 800-symbol manifest after an edit (schema check
// included).
func BenchmarkSyncManifestEdit800(b *testing.B) {
	ctx := context.Background()
	k := extractKB(b, 100)
	db, _, err := index.Open(ctx, k, "main")
	if err != nil {
		b.Fatal(err)
	}
	defer func() { _ = db.Close() }()
	ex, err := index.ExtractionFor(k)
	if err != nil {
		b.Fatal(err)
	}
	p := filepath.Join(k.Root, ".ai", "kenkeep", "symbols.json")
	src, err := os.ReadFile(p)
	if err != nil {
		b.Fatal(err)
	}
	i := 0
	for b.Loop() {
		b.StopTimer()
		i++
		if err := os.WriteFile(p, append(src, strings.Repeat(" ", i%2)...), 0o644); err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
		st, err := db.SyncWith(ctx, k.NodesDir(), ex)
		if err != nil || st.Extracted.Updated != 1 || st.Extracted.Entities != 1000 {
			b.Fatalf("%+v, %v", st.Extracted, err)
		}
	}
}

// The extraction part of a no-change sync alone: 1,000 extracted entities
// next to a 100-leaf tree, with and without the extractors.
func BenchmarkSyncNoChangeExtracted1k(b *testing.B) {
	ctx := context.Background()
	k := extractKB(b, 100)
	db, _, err := index.Open(ctx, k, "main")
	if err != nil {
		b.Fatal(err)
	}
	defer func() { _ = db.Close() }()
	ex, err := index.ExtractionFor(k)
	if err != nil {
		b.Fatal(err)
	}
	b.Run("leaves-only", func(b *testing.B) {
		for b.Loop() {
			if st, err := db.Sync(ctx, k.NodesDir()); err != nil || st.Unchanged != 100 {
				b.Fatalf("%+v, %v", st, err)
			}
		}
	})
	b.Run("with-extractors", func(b *testing.B) {
		for b.Loop() {
			st, err := db.SyncWith(ctx, k.NodesDir(), ex)
			if err != nil || st.Unchanged != 100 || st.Extracted.Unchanged != 201 || st.Extracted.Entities != 1000 {
				b.Fatalf("%+v, %v", st, err)
			}
		}
	})
}

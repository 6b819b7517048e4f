package trace

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/kk-project/kk/internal/benchtree"
)

// BenchmarkCheck is kb_check over 10k nodes, warm.
func BenchmarkCheck(b *testing.B) {
	k, err := benchtree.Generate(filepath.Join(b.TempDir(), "repo"), benchtree.Options{Nodes: 9900, Atoms: 5000, Molecules: 100, Seed: 7})
	if err != nil {
		b.Fatal(err)
	}
	if err := benchtree.Age(k); err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	if _, err := KBCheck(ctx, k, KBCheckParams{}); err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	for b.Loop() {
		if _, err := KBCheck(ctx, k, KBCheckParams{}); err != nil {
			b.Fatal(err)
		}
	}
}

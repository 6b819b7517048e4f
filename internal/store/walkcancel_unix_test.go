//go:build unix

package store

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestWalkStoppedSaysSoOnce: a listing stopped by its context (a person's
// Ctrl-C) fails with the context's error once. It was joined once per
// folder of the depth it stopped at, so kk printed "context canceled" on a
// line of its own for every folder ("kk: reading .ai/kenkeep/nodes: context
// canceled", then the same words again, a line each).
func TestWalkStoppedSaysSoOnce(t *testing.T) {
	root := filepath.Join(t.TempDir(), "nodes")
	var folders []string
	for _, d := range []string{"a", "b", "c", "d", "e"} {
		folders = append(folders, d)
		if err := os.MkdirAll(filepath.Join(root, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	err := walkFrom(ctx, root, root, folders, &Listing{IndexDirs: map[string]bool{}})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("walk of a stopped context: %v, want context.Canceled", err)
	}
	if n := strings.Count(err.Error(), context.Canceled.Error()); n != 1 {
		t.Fatalf("the error says %q %d times, want once:\n%s", context.Canceled.Error(), n, err)
	}
}

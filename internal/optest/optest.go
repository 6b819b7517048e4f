// Package optest helps the tests of the core operations (graph, trace,
// search): a fresh knowledge base, an operation run on raw JSON the way a
// face runs it, and checks of its envelope.
package optest

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/kk-project/kk/internal/op"
	"github.com/kk-project/kk/internal/store"
	"github.com/kk-project/kk/internal/txn"
)

// NewKB initialises a knowledge base in a temporary folder, with a fixed
// clock.
func NewKB(t testing.TB) *store.KB {
	t.Helper()
	k := store.New(filepath.Join(t.TempDir(), "proj"))
	if err := os.MkdirAll(k.Root, 0o755); err != nil {
		t.Fatal(err)
	}
	if _, err := txn.Init(context.Background(), k, store.InitOptions{Version: "test", Now: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC), Command: "test"}); err != nil {
		t.Fatal(err)
	}
	k.Now = func() time.Time { return time.Date(2026, 3, 4, 5, 6, 7, 0, time.UTC) }
	return k
}

// RawOp is an operation run on a raw parameter object.
type RawOp func(context.Context, *store.KB, []byte) op.Envelope

// JSON adapts an operation to raw parameter objects, decoded strictly as a
// face decodes them (the faces also check the registered JSON Schema).
func JSON[P, R any](fn func(context.Context, *store.KB, P) (R, error)) RawOp {
	return func(ctx context.Context, k *store.KB, raw []byte) op.Envelope {
		var p P
		if err := op.DecodeStrict(raw, &p); err != nil {
			return op.Wrap(nil, err)
		}
		return op.Wrap(fn(ctx, k, p))
	}
}

// JSONAs adapts an operation to the raw parameter object of the tool that
// offers it (a query_graph object for graph.Get, say): the object is
// decoded as JSON decodes it, turned into the operation's parameters by
// as (which refuses what the operation does not take), and fn runs.
func JSONAs[P, Q, R any](as func(P) (Q, error), fn func(context.Context, *store.KB, Q) (R, error)) RawOp {
	return JSON(func(ctx context.Context, k *store.KB, p P) (R, error) {
		q, err := as(p)
		if err != nil {
			var zero R
			return zero, err
		}
		return fn(ctx, k, q)
	})
}

// Run runs fn on raw and returns its envelope re-decoded as JSON.
func Run(t testing.TB, k *store.KB, fn RawOp, raw string) map[string]any {
	t.Helper()
	b, err := json.Marshal(fn(context.Background(), k, []byte(raw)))
	if err != nil {
		t.Fatal(err)
	}
	var out map[string]any
	if err := json.Unmarshal(b, &out); err != nil {
		t.Fatal(err)
	}
	return out
}

// MustOK returns the data of a successful envelope and fails the test
// otherwise.
func MustOK(t testing.TB, r map[string]any) map[string]any {
	t.Helper()
	if r["success"] != true {
		t.Fatalf("operation failed: %v", r["error"])
	}
	d, _ := r["data"].(map[string]any)
	return d
}

// ErrCode is the error code of a failed envelope ("" when it succeeded).
func ErrCode(r map[string]any) string {
	if r["success"] != false {
		return ""
	}
	e, _ := r["error"].(map[string]any)
	c, _ := e["code"].(string)
	return c
}

// TreeHash fingerprints every file under the knowledge base folder except
// .state.
func TreeHash(t testing.TB, k *store.KB) string {
	t.Helper()
	h := sha256.New()
	err := filepath.WalkDir(k.Dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && d.Name() == ".state" {
			return filepath.SkipDir
		}
		if !d.IsDir() {
			b, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			fmt.Fprintf(h, "%s\x00%s\x00", p, b)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return fmt.Sprintf("%x", h.Sum(nil))
}

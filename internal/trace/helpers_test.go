package trace

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/kk-project/kk/internal/graph"
	"github.com/kk-project/kk/internal/optest"
	"github.com/kk-project/kk/internal/store"
)

// The operations as the tests call them, on raw JSON.
var (
	KBQueryJSON  = optest.JSON(KBQuery)
	KBCheckJSON  = optest.JSON(KBCheck)
	KBUpsertJSON = optest.JSON(KBUpsert)
	CreateJSON   = optest.JSONAs(graph.ManageGraphParams.AsCreate, graph.Create)
)

func kbDeleteWith(o DeleteOptions) optest.RawOp {
	return optest.JSON(func(ctx context.Context, k *store.KB, p KBDeleteParams) (*DeleteEntitiesResult, error) {
		return KBDelete(ctx, k, p, o)
	})
}

func newKB(t *testing.T) *store.KB { return optest.NewKB(t) }

func run(t *testing.T, k *store.KB, fn optest.RawOp, raw string) map[string]any {
	t.Helper()
	return optest.Run(t, k, fn, raw)
}

func mustOK(t *testing.T, r map[string]any) map[string]any { t.Helper(); return optest.MustOK(t, r) }

func errCode(r map[string]any) string { return optest.ErrCode(r) }

func treeHash(t *testing.T, k *store.KB) string { return optest.TreeHash(t, k) }

func createMolecule(t *testing.T, k *store.KB, name string) map[string]any {
	t.Helper()
	b, _ := json.Marshal(map[string]any{"operation": "create", "entityType": "molecule", "name": name, "knowledge": name + " knowledge"})
	return mustOK(t, run(t, k, CreateJSON, string(b)))
}

package search

import (
	"encoding/json"
	"testing"

	"github.com/kk-project/kk/internal/graph"
	"github.com/kk-project/kk/internal/optest"
	"github.com/kk-project/kk/internal/store"
	"github.com/kk-project/kk/internal/trace"
)

// The operations as the tests call them, on raw JSON.
var (
	ReadNodeJSON        = optest.JSON(ReadNode)
	SearchNodesJSON     = optest.JSON(SearchNodes)
	ReadEntryJSON       = optest.JSON(ReadEntry)
	KBUpsertJSON        = optest.JSON(trace.KBUpsert)
	CreateJSON          = optest.JSONAs(graph.ManageGraphParams.AsCreate, graph.Create)
	AppendChangelogJSON = optest.JSONAs(graph.ManageChangelogParams.AsAppend, graph.AppendChangelog)
)

func newKB(t *testing.T) *store.KB { return optest.NewKB(t) }

func run(t *testing.T, k *store.KB, fn optest.RawOp, raw string) map[string]any {
	t.Helper()
	return optest.Run(t, k, fn, raw)
}

func mustOK(t *testing.T, r map[string]any) map[string]any { t.Helper(); return optest.MustOK(t, r) }

func errCode(r map[string]any) string { return optest.ErrCode(r) }

func createAtom(t *testing.T, k *store.KB, name string, paths []string, molecule string) map[string]any {
	t.Helper()
	p := map[string]any{"operation": "create", "entityType": "atom", "name": name, "paths": paths, "knowledge": name + " knowledge", "createdByTaskId": "T-1"}
	if molecule != "" {
		p["moleculeId"] = molecule
	}
	b, _ := json.Marshal(p)
	return mustOK(t, run(t, k, CreateJSON, string(b)))
}

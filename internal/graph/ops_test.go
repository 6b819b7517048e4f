package graph

import (
	"context"

	"github.com/kk-project/kk/internal/op"
	"github.com/kk-project/kk/internal/store"
)

// jsonOp runs an operation on a raw parameter object as a face does
// (strictly decoded; the faces also check the registered JSON Schema,
// which lives above this package) and returns its envelope.
func jsonOp[P, R any](fn func(context.Context, *store.KB, P) (R, error)) func(context.Context, *store.KB, []byte) op.Envelope {
	return func(ctx context.Context, k *store.KB, raw []byte) op.Envelope {
		var p P
		if err := op.DecodeStrict(raw, &p); err != nil {
			return op.Wrap(nil, err)
		}
		return op.Wrap(fn(ctx, k, p))
	}
}

// The operations as the tests call them, on raw JSON.
var (
	QueryGraphJSON      = jsonOp(QueryGraph)
	ManageGraphJSON     = jsonOp(ManageGraph)
	ManageChangelogJSON = jsonOp(ManageChangelog)
	KBQueryJSON         = jsonOp(KBQuery)
	KBCheckJSON         = jsonOp(KBCheck)
	KBUpsertJSON        = jsonOp(KBUpsert)
	ReadNodeJSON        = jsonOp(ReadNode)
	SearchNodesJSON     = jsonOp(SearchNodes)
	ReadEntryJSON       = jsonOp(ReadEntry)
)

func kbDeleteWith(o DeleteOptions) func(context.Context, *store.KB, []byte) op.Envelope {
	return jsonOp(func(ctx context.Context, k *store.KB, p KBDeleteParams) (*DeleteEntitiesResult, error) {
		return KBDelete(ctx, k, p, o)
	})
}

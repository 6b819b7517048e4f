package graph

import (
	"context"
	"fmt"

	"github.com/kk-project/kk/internal/optest"
	"github.com/kk-project/kk/internal/store"
)

// The tools as the tests call them, on raw JSON: the operation the
// parameter object names runs, as the MCP face runs it (the face's own
// tests cover its choice of operation, and an unknown one).
var (
	QueryGraphJSON      = optest.JSON(queryGraph)
	ManageGraphJSON     = optest.JSON(manageGraph)
	ManageChangelogJSON = optest.JSON(manageChangelog)
)

func queryGraph(ctx context.Context, k *store.KB, p QueryGraphParams) (any, error) {
	switch p.Operation {
	case "get":
		q, err := p.AsGet()
		if err != nil {
			return nil, err
		}
		return Get(ctx, k, q)
	case "search":
		q, err := p.AsSearch()
		if err != nil {
			return nil, err
		}
		return Search(ctx, k, q)
	case "context":
		q, err := p.AsContext()
		if err != nil {
			return nil, err
		}
		return Context(ctx, k, q)
	}
	return nil, fmt.Errorf("test: no query_graph operation %q", p.Operation)
}

func manageGraph(ctx context.Context, k *store.KB, p ManageGraphParams) (any, error) {
	switch p.Operation {
	case "create":
		q, err := p.AsCreate()
		if err != nil {
			return nil, err
		}
		return Create(ctx, k, q)
	case "update":
		q, err := p.AsUpdate()
		if err != nil {
			return nil, err
		}
		return Update(ctx, k, q)
	case "delete":
		q, err := p.AsDelete()
		if err != nil {
			return nil, err
		}
		return Delete(ctx, k, q)
	}
	return nil, fmt.Errorf("test: no manage_graph operation %q", p.Operation)
}

func manageChangelog(ctx context.Context, k *store.KB, p ManageChangelogParams) (any, error) {
	switch p.Operation {
	case "append":
		q, err := p.AsAppend()
		if err != nil {
			return nil, err
		}
		return AppendChangelog(ctx, k, q)
	case "search":
		q, err := p.AsSearch()
		if err != nil {
			return nil, err
		}
		return SearchChangelog(ctx, k, q)
	}
	return nil, fmt.Errorf("test: no manage_changelog operation %q", p.Operation)
}

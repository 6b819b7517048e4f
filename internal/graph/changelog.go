package graph

import (
	"context"

	"github.com/kk-project/kk/internal/node"
	"github.com/kk-project/kk/internal/op"
	"github.com/kk-project/kk/internal/store"
)

// ChangelogPage is the data of a changelog search.
type ChangelogPage struct {
	ParentType string           `json:"parentType"`
	ParentID   string           `json:"parentId"`
	Entries    []ChangelogEntry `json:"entries"`
	Total      int              `json:"total"`
	Limit      int              `json:"limit"`
	Offset     int              `json:"offset"`
}

// AppendResult is the data of a changelog append.
type AppendResult struct {
	ParentType string         `json:"parentType"`
	ParentID   string         `json:"parentId"`
	Entry      ChangelogEntry `json:"entry"`
	Version    int64          `json:"version"` // the parent's version after the append
}

func (g *Graph) entity(kind, id string) *Entity {
	if kind == KindAtom {
		if a, ok := g.Atoms[store.IDKey(id)]; ok {
			return &a.Entity
		}
	} else if m, ok := g.Molecules[store.IDKey(id)]; ok {
		return &m.Entity
	}
	return nil
}

// changelogParent checks the parent a changelog operation names.
func changelogParent(parentType, parentID string) error {
	if err := checkKind("parentType", parentType); err != nil {
		return err
	}
	if parentID == "" {
		return op.Invalid("parentId", "is required")
	}
	return nil
}

// AppendChangelog appends one immutable entry to an atom's or molecule's
// changelog; the parent's version goes up by one (manage_changelog append).
func AppendChangelog(ctx context.Context, k *store.KB, p AppendChangelogParams) (*AppendResult, error) {
	if err := changelogParent(p.ParentType, p.ParentID); err != nil {
		return nil, err
	}
	if err := ValidateTaskID("taskId", p.TaskID, true); err != nil {
		return nil, err
	}
	summary, serr := ValidateSummary("summary", p.Summary)
	if serr != nil {
		return nil, serr
	}
	var res *AppendResult
	var n *node.Node
	_, err := mutate(ctx, k, p.ProjectID, "manage_changelog", func(g *Graph, w *writes) error {
		e := g.entity(p.ParentType, p.ParentID)
		if e == nil {
			return g.notFound(p.ParentType, p.ParentID)
		}
		var err error
		if n, err = g.fresh(e.ID); err != nil {
			return err
		}
		entry := ChangelogEntry{At: w.tx.Timestamp(), Task: p.TaskID, Summary: summary}
		e.Changelog = append(e.Changelog, entry)
		if a, isAtom := g.Atoms[store.IDKey(e.ID)]; isAtom && p.ParentType == KindAtom {
			err = WriteAtom(n, a)
		} else {
			err = WriteMolecule(n, g.Molecules[store.IDKey(e.ID)])
		}
		if err != nil {
			return err
		}
		res = &AppendResult{ParentType: p.ParentType, ParentID: e.ID, Entry: entry}
		return w.put(n)
	})
	if err != nil {
		return nil, err
	}
	res.Version = FileVersion(n)
	return res, nil
}

// SearchChangelog pages through an atom's or molecule's changelog, newest
// first (manage_changelog search).
func SearchChangelog(ctx context.Context, k *store.KB, p SearchChangelogParams) (*ChangelogPage, error) {
	if err := ValidateProjectID(k, p.ProjectID); err != nil {
		return nil, err
	}
	if err := changelogParent(p.ParentType, p.ParentID); err != nil {
		return nil, err
	}
	limit, offset, perr := Page(p.Limit, p.Offset)
	if perr != nil {
		return nil, perr
	}
	g, err := getGraph(ctx, k, p.ParentType, p.ParentID, true)
	if err != nil {
		return nil, err
	}
	e := g.entity(p.ParentType, p.ParentID)
	if e == nil {
		return nil, op.NotFound(p.ParentType, p.ParentID)
	}
	return &ChangelogPage{ParentType: p.ParentType, ParentID: p.ParentID, Entries: NewestFirst(e.Changelog, limit, offset),
		Total: len(e.Changelog), Limit: limit, Offset: offset}, nil
}

package serve

import (
	"context"
	"slices"
	"strings"

	"github.com/kk-project/kk/internal/service"
)

// Notes lists every leaf of the tree with its title and description,
// sorted by path (from the tree kept for reads, as ByTags).
func (b *Backend) Notes(context.Context) ([]service.Note, error) {
	t, err := b.readTree()
	if err != nil {
		return nil, err
	}
	out := make([]service.Note, 0, len(t.Leaves))
	for _, n := range t.Leaves {
		out = append(out, service.Note{Path: n.Path, Title: n.Title, Description: n.Description})
	}
	slices.SortFunc(out, func(a, b service.Note) int { return strings.Compare(a.Path, b.Path) })
	return out, nil
}

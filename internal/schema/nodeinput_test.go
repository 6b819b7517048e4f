package schema_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/kk-project/kk/internal/contracts"
	"github.com/kk-project/kk/internal/curate"
	"github.com/kk-project/kk/internal/node"
	"github.com/kk-project/kk/internal/schema"
	"github.com/kk-project/kk/internal/store"
	"github.com/kk-project/kk/internal/txn"
)

// The node-input schema (kk schema node-input, what an agent reads before
// it calls kk node write --input) refuses what kk node write refuses: a
// description over node.MaxDescriptionChars characters and a title over
// 255 (curate's limit), counted in characters, not bytes; it takes the
// longest of each. Before, it declared neither bound, so an input the
// schema passed was refused by kk.
func TestNodeInputSchemaRefusesWhatNodeWriteRefuses(t *testing.T) {
	t.Parallel()
	k := store.New(t.TempDir())
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	if _, err := txn.Init(context.Background(), k, store.InitOptions{Version: "test", Now: now}); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name, field string
		in          contracts.NodeInput
		refused     bool
	}{
		{"description at the limit", "description", contracts.NodeInput{Title: "Fits", Description: strings.Repeat("é", node.MaxDescriptionChars)}, false},
		{"description over the limit", "description", contracts.NodeInput{Title: "Long", Description: strings.Repeat("x", node.MaxDescriptionChars+1)}, true},
		{"title at the limit", "title", contracts.NodeInput{Slug: "t255", Title: strings.Repeat("é", 255), Description: "d"}, false},
		{"title over the limit", "title", contracts.NodeInput{Slug: "t256", Title: strings.Repeat("x", 256), Description: "d"}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tc.in.Type, tc.in.Body = "practice", "A body.\n"
			err := schema.Validate("node-input", tc.in)
			if tc.refused != (err != nil) {
				t.Fatalf("schema: refused %v, want %v (%v)", err != nil, tc.refused, err)
			}
			if err != nil && !strings.Contains(err.Error(), "/"+tc.field+":") {
				t.Errorf("the schema's refusal does not name /%s: %v", tc.field, err)
			}
			if tc.field != "title" {
				return // kk node write refuses a long description itself (cli), at node.MaxDescriptionChars
			}
			_, werr := curate.WriteNode(context.Background(), k, tc.in, curate.WriteOptions{Command: "test"})
			if tc.refused != (werr != nil) {
				t.Errorf("kk node write: refused %v (%v); the schema: refused %v", werr != nil, werr, tc.refused)
			}
		})
	}
}

package schema

import (
	"reflect"

	"github.com/kk-project/kk/internal/graph"
	"github.com/kk-project/kk/internal/search"
	"github.com/kk-project/kk/internal/trace"
)

// The parameter objects of the graph and knowledge operations: what the
// MCP tools take as arguments and `kk graph|changelog|context --input`
// reads. The MCP server hands these schemas to clients as the tools' input
// schemas, so one Go type is the source for the CLI, MCP and `kk schema`.
var graphEntries = []Entry{
	{Name: "query-graph", Title: "kk query_graph parameters", Description: "The parameter object of query_graph (get, search, context) and `kk graph get|search`, `kk context --input`.", Type: reflect.TypeFor[graph.QueryGraphParams]()},
	{Name: "manage-graph", Title: "kk manage_graph parameters", Description: "The parameter object of manage_graph (create, update, delete an atom or molecule) and `kk graph create|update|delete --input`.", Type: reflect.TypeFor[graph.ManageGraphParams]()},
	{Name: "manage-changelog", Title: "kk manage_changelog parameters", Description: "The parameter object of manage_changelog (append, search) and `kk changelog append|search --input`.", Type: reflect.TypeFor[graph.ManageChangelogParams]()},
	{Name: "kk-read", Title: "kk_read parameters", Description: "The parameter object of kk_read: one node by id or by path.", Type: reflect.TypeFor[search.ReadParams]()},
	{Name: "kk-search", Title: "kk_search parameters", Description: "The parameter object of kk_search: ranked full-text search over the current branch's index.", Type: reflect.TypeFor[search.SearchParams]()},
	{Name: "kk-entry", Title: "kk_entry parameters", Description: "The parameter object of kk_entry, which takes none.", Type: reflect.TypeFor[search.EntryParams]()},
	{Name: "kb-query", Title: "kk kb_query parameters", Description: "The parameter object of kb_query and `kk query --input`: entities and edges by type, id, tags, status and relationship pattern.", Type: reflect.TypeFor[trace.KBQueryParams]()},
	{Name: "kb-upsert", Title: "kk kb_upsert changeset", Description: "The changeset kb_upsert and `kk upsert --input` apply all-or-nothing: entities and edges to create or update.", Type: reflect.TypeFor[trace.KBUpsertParams]()},
	{Name: "kb-delete", Title: "kk kb_delete changeset", Description: "The changeset kb_delete and `kk delete --input` apply all-or-nothing: entities and edges to remove.", Type: reflect.TypeFor[trace.KBDeleteParams]()},
	{Name: "kb-check", Title: "kk kb_check parameters", Description: "The parameter object of kb_check and `kk check --input`: which consistency rules to run.", Type: reflect.TypeFor[trace.KBCheckParams]()},
}

package mcpserver

import (
	"context"
	"reflect"
	"slices"
	"strings"

	"github.com/kk-project/kk/internal/graph"
	"github.com/kk-project/kk/internal/op"
	"github.com/kk-project/kk/internal/schema"
	"github.com/kk-project/kk/internal/search"
	"github.com/kk-project/kk/internal/store"
	"github.com/kk-project/kk/internal/trace"
)

// Tool is one MCP tool, declared as data: its name, what a model reads
// about it, the registered schema of its arguments, and the core operation
// it calls. A tool has no logic of its own.
type Tool struct {
	Name  string
	Title string
	// Description tells a model when to use the tool and what it returns.
	Description string
	// Schema names the argument schema in the schema registry (kk schema
	// <name>).
	Schema string
	// ReadOnly tools never change the tree; Destructive ones may delete.
	ReadOnly    bool
	Destructive bool
	// Idempotent tools give the same tree when called twice with the same
	// arguments.
	Idempotent bool
	// Run is the core operation behind its decode step; the server builds
	// the envelope, and the tool's output schema from the Go types of the
	// operation's results.
	Run Runner
}

// Runner runs a tool's core operation on its raw argument object (checked
// against the tool's Schema by schema.Decode) and knows the Go types its
// result can have.
type Runner struct {
	run     func(ctx context.Context, k *store.KB, raw []byte) (any, error)
	results []reflect.Type
}

// decoded makes the Runner of a core operation taking the parameter object
// registered as schema name: the one decode-and-validate step, then the
// operation.
func decoded[P, R any](name string, fn func(context.Context, *store.KB, P) (R, error)) Runner {
	return Runner{
		run: func(ctx context.Context, k *store.KB, raw []byte) (any, error) {
			var p P
			if err := schema.Decode(name, raw, &p); err != nil {
				return nil, err
			}
			return fn(ctx, k, p)
		},
		results: []reflect.Type{reflect.TypeFor[R]()},
	}
}

// operation is one of the operations of a tool whose parameter object
// names the operation (the graph seed's tools): its name and the typed
// core function it runs on its part of the object.
type operation[P any] struct {
	name   string
	run    func(ctx context.Context, k *store.KB, p P) (any, error)
	result reflect.Type
}

// named is the operation called name of a tool taking P: as takes the
// operation's parameters out of the tool's object (refusing the fields
// the operation does not take), fn is the core operation.
func named[P, Q, R any](name string, as func(P) (Q, error), fn func(context.Context, *store.KB, Q) (R, error)) operation[P] {
	return operation[P]{
		name: name,
		run: func(ctx context.Context, k *store.KB, p P) (any, error) {
			q, err := as(p)
			if err != nil {
				return nil, err
			}
			return fn(ctx, k, q)
		},
		result: reflect.TypeFor[R](),
	}
}

// dispatched makes the Runner of a tool whose parameter object, registered
// as schema name, names one of ops in the field operationOf reads. This is
// the one place an operation is chosen by its name: the core has one
// function per operation, and every other face runs one it knows.
func dispatched[P any](name, tool string, operationOf func(P) string, ops ...operation[P]) Runner {
	r := Runner{}
	names := make([]string, len(ops))
	for i, o := range ops {
		names[i] = o.name
		r.results = append(r.results, o.result)
	}
	list := strings.Join(names[:len(names)-1], ", ") + " or " + names[len(names)-1]
	r.run = func(ctx context.Context, k *store.KB, raw []byte) (any, error) {
		var p P
		if err := schema.Decode(name, raw, &p); err != nil {
			return nil, err
		}
		asked := operationOf(p)
		if i := slices.Index(names, asked); i >= 0 {
			return ops[i].run(ctx, k, p)
		}
		if asked == "" {
			return nil, op.Invalid("operation", "is required: %s", list)
		}
		return nil, op.Invalid("operation", "%q is not a %s operation; use %s", asked, tool, list)
	}
	return r
}

// Names use underscores, never dots: the tool-calling APIs of the model
// providers accept only [a-zA-Z0-9_-] in function names.
var tools = []Tool{
	{
		Name:  "query_graph",
		Title: "Query the knowledge graph",
		Description: `Read atoms (knowledge attached to file path patterns) and molecules (groups of atoms) of the project's knowledge graph.
Use operation "context" with the files you are about to read or change, before working on them: it returns the atoms whose patterns match those files, grouped under their molecules, each with its knowledge, related atoms and newest changelog entries, plus "unmatchedPaths" (files no atom covers yet, a knowledge gap).
Use "search" to find atoms or molecules by words, by molecule, or orphans only (paginated with limit and offset; "total" counts every match), and "get" to fetch one entity by id (a molecule comes with its atoms).
Returns {"success":true,"data":…}; errors carry a code (VALIDATION_ERROR, NOT_FOUND).`,
		Schema:     "query-graph",
		ReadOnly:   true,
		Idempotent: true,
		Run: dispatched("query-graph", "query_graph", func(p graph.QueryGraphParams) string { return p.Operation },
			named("get", graph.QueryGraphParams.AsGet, graph.Get),
			named("search", graph.QueryGraphParams.AsSearch, graph.Search),
			named("context", graph.QueryGraphParams.AsContext, graph.Context)),
	},
	{
		Name:  "manage_graph",
		Title: "Create, update or delete atoms and molecules",
		Description: `Write the knowledge graph: create, update or delete one atom (knowledge owned by path globs such as "src/payments/**") or molecule (a group of atoms).
Use it after learning something about an area of the code that the next agent should know: create an atom when query_graph context reported the files as unmatched, update the atom that matched otherwise (knowledgeMode "append" keeps the existing text).
update and delete need the version you last read; if someone changed the entity since, the call fails with CONFLICT: details.currentVersion is its version now and details.changes lists the writes you missed (version, fields, command). To retry: read the entity again (query_graph get), redo your change on what you read if those fields overlap it, and send it with currentVersion; an append-only change (knowledgeMode "append") can be sent again at once with currentVersion.
Returns {"success":true,"data":<the entity>} with its new version; errors carry a code (VALIDATION_ERROR, NOT_FOUND, CONFLICT, INVARIANT_VIOLATION). Nothing is written when a call fails.`,
		Schema:      "manage-graph",
		Destructive: true,
		Run: dispatched("manage-graph", "manage_graph", func(p graph.ManageGraphParams) string { return p.Operation },
			named("create", graph.ManageGraphParams.AsCreate, graph.Create),
			named("update", graph.ManageGraphParams.AsUpdate, graph.Update),
			named("delete", graph.ManageGraphParams.AsDelete, graph.Delete)),
	},
	{
		Name:  "manage_changelog",
		Title: "Append to or search an entity's changelog",
		Description: `Record or read the history of an atom or molecule.
Use "append" after a significant change to the code an atom covers: a summary of what changed and why, with your task id. Entries are immutable.
Use "search" to page through the whole history, newest first (query_graph already returns the newest few).
Returns {"success":true,"data":…}; errors carry a code (VALIDATION_ERROR, NOT_FOUND).`,
		Schema: "manage-changelog",
		Run: dispatched("manage-changelog", "manage_changelog", func(p graph.ManageChangelogParams) string { return p.Operation },
			named("append", graph.ManageChangelogParams.AsAppend, graph.AppendChangelog),
			named("search", graph.ManageChangelogParams.AsSearch, graph.SearchChangelog)),
	},
	{
		Name:  "kb_query",
		Title: "Query traceability entities and edges",
		Description: `Find traceability entities (req, scenario, test, adr, flag, event, symbol) by type, id, tags and status, and by relationship pattern: {"type":"req","relationship":{"type":"verified_by","missing":true}} lists requirements no test verifies; {"type":"symbol","relationship":{"type":"implements","other":"req-7"}} lists the symbols implementing req-7 (direction "in" matches the edge's target instead of its source).
Use it to answer "what covers / implements / depends on X" before changing or reviewing code.
Returns {"success":true,"data":…} with the matching entities and their edges, paginated with limit and offset.`,
		Schema:     "kb-query",
		ReadOnly:   true,
		Idempotent: true,
		Run:        decoded("kb-query", trace.KBQuery),
	},
	{
		Name:  "kb_upsert",
		Title: "Create or update traceability entities and edges",
		Description: `Apply a changeset of traceability entities and typed edges, all or nothing: {"entities":[{id,type,title,…}],"edges":[{type,from,to}],"created_by","source"}.
Use it to record requirements, scenarios, tests, decisions, flags, events and symbols, and how they connect (req verified_by test, symbol implements req, req depends_on req…). An existing id is updated (absent fields are left alone); give its version to fail with CONFLICT if it changed since you read it. A CONFLICT carries details.currentVersion and details.changes (the writes you missed, with the fields they changed): when they do not touch the fields you set, retry at once with currentVersion; otherwise read the entity again (kb_query or kk_read) first.
Every changeset is validated first (shape, required fields, edge endpoint types, no edge from an entity to itself, referential integrity) and recorded in the audit log. Returns {"success":true,"data":…} with the ids written and the changeset id; errors carry a code (VALIDATION_ERROR, NOT_FOUND, CONFLICT, INVARIANT_VIOLATION).`,
		Schema: "kb-upsert",
		Run:    decoded("kb-upsert", trace.KBUpsert),
	},
	{
		Name:  "kb_delete",
		Title: "Delete traceability entities and edges",
		Description: `Remove traceability entities and edges, all or nothing: {"entities":[{"id","version"}],"edges":[{type,from,to}],"created_by","source"}.
Restricted: every entity must carry the version you last read (CONFLICT otherwise, with details.currentVersion and the changes you missed: look at them before retrying with that version), and types the project does not let agents delete (by default req and adr) are refused. Prefer a status of deprecated (kb_upsert) over deleting.
Returns {"success":true,"data":…} with what was removed and the changeset id; errors carry a code.`,
		Schema:      "kb-delete",
		Destructive: true,
		Run: decoded("kb-delete", func(ctx context.Context, k *store.KB, p trace.KBDeleteParams) (*trace.DeleteEntitiesResult, error) {
			return trace.KBDelete(ctx, k, p, trace.DeleteOptions{Agent: true})
		}),
	},
	{
		Name:  "kb_check",
		Title: "Check traceability rules",
		Description: `Run the knowledge base's consistency rules: every must-priority req has a scenario and a verifying test, depends_on has no cycles (unless allowed), no symbol links to a missing req, no dangling edges, no edge with wrong endpoint types.
Use it after changing traceability data, or to find gaps to work on.
Returns {"success":true,"data":{"violations":[{rule,ids,message}]}}; an empty list means every rule holds.`,
		Schema:     "kb-check",
		ReadOnly:   true,
		Idempotent: true,
		Run:        decoded("kb-check", trace.KBCheck),
	},
	{
		Name:  "kk_search",
		Title: "Search the knowledge base",
		Description: `Full-text search over every node of the knowledge base (practices, maps, atoms, requirements, decisions…) on the current git branch.
Use it when you have a question or a topic rather than file paths. Words are stemmed and identifiers split; titles and phrasings weigh most. It lists the best matches, best first, with scores relative to the query, even when none answers it well: judge the hits by their titles and snippets (min_score drops the weak ones). Filter with types and tags.
Returns {"success":true,"data":{"branch","query","hits":[{id,path,type,title,description,score,snippet}]}}, best first; the snippet marks matched words in [brackets]. Read a hit whole with kk_read.`,
		Schema:     "kk-search",
		ReadOnly:   true,
		Idempotent: true,
		Run:        decoded("kk-search", search.SearchNodes),
	},
	{
		Name:  "kk_read",
		Title: "Read one node",
		Description: `Read one node of the knowledge base by id or by path: its front matter fields, its body, its outgoing edges (relates_to, depends_on, related, and typed edges such as verified_by) and its newest changelog entries.
Use it to open a hit of kk_search or a node named by another node.
Returns {"success":true,"data":{id,path,type,title,description,tags,version,body,edges,changelog,changelogTotal,…}}; NOT_FOUND when no node has that id or path.`,
		Schema:     "kk-read",
		ReadOnly:   true,
		Idempotent: true,
		Run:        decoded("kk-read", search.ReadNode),
	},
	{
		Name:  "kk_entry",
		Title: "Read the knowledge base's entry page",
		Description: `Read ENTRY.md, the entry page of the project's knowledge base: what the knowledge base holds, its top-level folders with one-line summaries, and where to look first.
Use it once at the start of a task to orient yourself.
Returns {"success":true,"data":{"path","content"}} with the markdown in content.`,
		Schema:     "kk-entry",
		ReadOnly:   true,
		Idempotent: true,
		Run:        decoded("kk-entry", search.ReadEntry),
	},
}

// Tools returns the tools the server registers, in registration order.
func Tools() []Tool {
	out := make([]Tool, len(tools))
	copy(out, tools)
	return out
}

package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"github.com/kk-project/kk/internal/graph"
	"github.com/kk-project/kk/internal/node"
	"github.com/kk-project/kk/internal/op"
	"github.com/kk-project/kk/internal/schema"
	"github.com/kk-project/kk/internal/store"
)

func newGraphCmd(app *App) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "graph",
		Short: "Read, change and draw the atoms and molecules of the knowledge graph",
		Long: `Atoms are leaves with path patterns (kk_paths) holding what an agent must
know before touching the files they match; molecules group atoms. These
commands are the command-line faces of query_graph and manage_graph: each
builds the parameter object from its flags, or takes it whole from --input
<file|->, and prints the result envelope ({"success":true,"data":…}) with
--json, or a short summary otherwise.

A failed operation exits 1 and prints "kk: <CODE>: <message>", with CODE one
of VALIDATION_ERROR, NOT_FOUND, CONFLICT, INVARIANT_VIOLATION or
INTERNAL_ERROR; with --json, the error object {"error":{code, message,
exit_code, details}} on stderr, as every kk command does. Nothing is
written when an operation fails.

Where a command takes an <id>, the entity type is molecule for ids starting
with "molecule-" and atom otherwise, unless --type says.

kk graph export draws the graph (the traceability edges, the atoms under
their molecules, or the leaves) as Mermaid, Graphviz dot or JSON.`,
	}
	cmd.AddCommand(newGraphGetCmd(app), newGraphSearchCmd(app), newGraphCreateCmd(app), newGraphUpdateCmd(app), newGraphDeleteCmd(app), newGraphExportCmd(app))
	return cmd
}

// Operations of each graph tool, for graphInput.
var (
	queryOps     = []string{"get", "search", "context"}
	manageOps    = []string{"create", "update", "delete"}
	changelogOps = []string{"append", "search"}
)

// graphInput reads --input: exactly one parameter object of the operation
// op of the tool whose operations are ops. An object asking for another of
// those operations is refused, so that `kk graph create --input` never
// deletes; a missing or unknown operation is left for the tool to report.
func graphInput(app *App, arg, operation string, ops []string) ([]byte, *op.Error, error) {
	raw, _, err := app.readInput(arg)
	if err != nil {
		return nil, nil, err
	}
	var probe struct {
		Operation any `json:"operation"`
	}
	if json.Unmarshal(raw, &probe) == nil {
		if s, ok := probe.Operation.(string); ok && s != operation && slices.Contains(ops, s) {
			return nil, &op.Error{Code: op.CodeValidation, Details: map[string]any{"field": "operation"},
				Message: fmt.Sprintf("operation: this command runs %q, the input asks for %q", operation, s)}, nil
		}
	}
	return raw, nil, nil
}

// refuseWithInput reports flags given together with --input, which holds
// the whole parameter object.
func refuseWithInput(app *App, cmd *cobra.Command, flags ...string) error {
	for _, f := range flags {
		if cmd.Flags().Changed(f) {
			return usagef("%s cannot be combined with --input; put it in the JSON", app.flagName(cmd.Flags(), f))
		}
	}
	return nil
}

// printGraph prints a graph response: the envelope with --json, human
// text otherwise. A failed response is an error (exit 1): "kk: <CODE>:
// <message>", or with --json the one error object on stderr, its code and
// details those of the operation (see App.exitCode).
func printGraph(app *App, resp op.Envelope, human func(w io.Writer, data any)) error {
	if !resp.Success {
		e := resp.Error
		if e == nil {
			e = &op.Error{Code: op.CodeInternal, Message: "the operation failed without an error"}
		}
		return &opFailure{e}
	}
	if app.JSON {
		return app.printJSON(resp)
	}
	human(app.IO.Out, resp.Data)
	return nil
}

// graphNextStep is what to do after a failed graph operation, by its
// code, unless its message already names a kk command.
func graphNextStep(e *op.Error) string {
	if strings.Contains(e.Message, "kk ") {
		return ""
	}
	switch e.Code {
	case op.CodeNotFound:
		return "; `kk search <words>` or `kk node list` finds ids"
	case op.CodeConflict:
		return "; read the entity again (`kk read <id>`) and retry with its current version"
	case op.CodeInternal:
		return "; `kk doctor` checks the knowledge base"
	}
	return ""
}

// kindOf is the entity type of an id: --type when given, else molecule for
// "molecule-" ids and atom otherwise.
func kindOf(typ, id string) (string, error) {
	switch typ {
	case graph.KindAtom, graph.KindMolecule:
		return typ, nil
	case "":
		if strings.HasPrefix(id, graph.TypeMolecule+"-") {
			return graph.KindMolecule, nil
		}
		return graph.KindAtom, nil
	}
	return "", usagef("--type must be atom or molecule, not %q", typ)
}

func intFlag(cmd *cobra.Command, name string, v int) *int {
	if !cmd.Flags().Changed(name) {
		return nil
	}
	return &v
}

type graphGetOpts struct {
	id, typ        string
	changelogLimit int
	noChangelog    bool
	input          string
}

func newGraphGetCmd(app *App) *cobra.Command {
	var o graphGetOpts
	cmd := &cobra.Command{
		Use:   "get <id>",
		Short: "Show one atom or molecule",
		Long: `Show the atom or molecule <id> with its newest changelog entries (a
molecule also lists its atoms). --input <file|-> takes a query_graph
parameter object with operation "get" instead.`,
		Example: `  kk graph get map-http-errors
  kk graph get molecule-http --changelog-limit 20 --json`,
		Args: func(cmd *cobra.Command, args []string) error {
			if o.input != "" {
				if len(args) != 0 {
					return usagef("--input holds the whole query; drop the <id> argument")
				}
				return refuseWithInput(app, cmd, "type", "changelog-limit", "no-changelog")
			}
			return oneArg("graph get needs the id of an atom or molecule")(cmd, args)
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			p := graph.QueryGraphParams{Operation: "get", ChangelogLimit: intFlag(cmd, "changelog-limit", o.changelogLimit)}
			if o.input == "" {
				o.id = args[0]
				kind, err := kindOf(o.typ, o.id)
				if err != nil {
					return err
				}
				p.EntityType, p.ID = kind, o.id
				if o.noChangelog {
					no := false
					p.IncludeChangelog = &no
				}
			}
			return runGraphQuery(cmd.Context(), app, o.input, p, typed(graph.QueryGraphParams.AsGet, graph.Get))
		},
	}
	f := cmd.Flags()
	f.StringVar(&o.typ, "type", "", "atom or molecule (default: from the id)")
	f.IntVar(&o.changelogLimit, "changelog-limit", graph.DefaultChangelogLimit, "newest changelog entries to show")
	f.BoolVar(&o.noChangelog, "no-changelog", false, "leave the changelog out")
	f.StringVar(&o.input, "input", "", "read the query_graph parameter object from a file, or - for standard input")
	return cmd
}

// runGraphQuery runs the query_graph operation fn with p, or with the
// object in input.
func runGraphQuery[R any](ctx context.Context, app *App, input string, p graph.QueryGraphParams,
	fn func(context.Context, *store.KB, graph.QueryGraphParams) (R, error)) error {
	resp, err := opCall(ctx, app, input, p.Operation, queryOps, "query-graph", p, fn)
	if err != nil {
		return err
	}
	return printGraph(app, resp, printGraphData)
}

type graphSearchOpts struct {
	typ, query, molecule string
	orphans              bool
	limit, offset        int
	input                string
}

func newGraphSearchCmd(app *App) *cobra.Command {
	var o graphSearchOpts
	cmd := &cobra.Command{
		Use:   "search",
		Short: "List atoms or molecules by name, molecule or orphan status",
		Long: `List atoms (or molecules with --type molecule) ordered by name. --query
keeps those whose name or knowledge holds every word of it (ignoring case);
--molecule keeps the atoms of one molecule, --orphans the atoms of none.
--limit and --offset page through the result. --input <file|-> takes a
query_graph parameter object with operation "search" instead.`,
		Example: `  kk graph search --query "retry backoff"
  kk graph search --molecule molecule-http --limit 50
  kk graph search --type molecule --json`,
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) != 0 {
				return usagef("graph search takes no arguments; give the text with --query")
			}
			if o.input != "" {
				return refuseWithInput(app, cmd, "type", "query", "molecule", "orphans", "limit", "offset")
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			p := graph.QueryGraphParams{Operation: "search", EntityType: o.typ, Query: o.query, MoleculeID: o.molecule, OrphansOnly: o.orphans,
				Limit: intFlag(cmd, "limit", o.limit), Offset: intFlag(cmd, "offset", o.offset)}
			no := false
			p.IncludeChangelog = &no
			return runGraphQuery(cmd.Context(), app, o.input, p, typed(graph.QueryGraphParams.AsSearch, graph.Search))
		},
	}
	f := cmd.Flags()
	f.StringVar(&o.typ, "type", graph.KindAtom, "atom or molecule")
	f.StringVar(&o.query, "query", "", "words that must all occur in the name or knowledge")
	f.StringVar(&o.molecule, "molecule", "", "only the atoms of this molecule")
	f.BoolVar(&o.orphans, "orphans", false, "only atoms that belong to no molecule")
	f.IntVar(&o.limit, "limit", graph.DefaultLimit, fmt.Sprintf("results per page (1-%d)", graph.MaxLimit))
	f.IntVar(&o.offset, "offset", 0, "results to skip")
	f.StringVar(&o.input, "input", "", "read the query_graph parameter object from a file, or - for standard input")
	return cmd
}

// graphManageOpts are the flags of create, update and delete.
type graphManageOpts struct {
	typ           string
	id            string
	name          string
	paths         []string
	knowledgeFile string
	knowledgeMode string
	molecule      string
	version       int64
	task          string
	cascade       bool
	input         string
	creates       bool // --task names the creating task, not the last one
}

var graphEditFlags = []string{"type", "name", "path", "body-file", "knowledge-mode", "molecule", "expect-version", "task", "cascade"}

func addGraphEditFlags(cmd *cobra.Command, o *graphManageOpts, update bool) {
	f := cmd.Flags()
	f.StringVar(&o.name, "name", "", "display name (the id is derived from it on create)")
	f.StringArrayVar(&o.paths, "path", nil, "glob pattern of the files an atom covers (repeatable; on update, replaces them all)")
	f.StringVar(&o.knowledgeFile, "body-file", "", "read the knowledge (the body) from this file, or - for standard input")
	f.StringVar(&o.molecule, "molecule", "", "id of the molecule the atom belongs to"+map[bool]string{true: " ('' detaches it)", false: ""}[update])
	if update {
		f.StringVar(&o.knowledgeMode, "knowledge-mode", graph.ModeOverwrite, "overwrite the knowledge, or append to it")
	}
}

func (o *graphManageOpts) params(app *App, cmd *cobra.Command, operation string) (graph.ManageGraphParams, error) {
	p := graph.ManageGraphParams{Operation: operation, EntityType: o.typ, ID: o.id, Cascade: o.cascade}
	fl := cmd.Flags()
	if o.creates {
		p.CreatedByTaskID = o.task
	} else {
		p.LastTaskID = o.task
	}
	if fl.Changed("expect-version") {
		if o.version < 1 {
			return p, usagef("%s must be a whole number of at least 1, not %d", app.flagName(fl, "expect-version"), o.version)
		}
		v := o.version
		p.Version = &v
	}
	if fl.Lookup("knowledge-mode") != nil && fl.Changed("knowledge-mode") {
		p.KnowledgeMode = o.knowledgeMode
	}
	if fl.Lookup("name") != nil && fl.Changed("name") {
		name := o.name
		p.Name = &name
	}
	if fl.Lookup("path") != nil && fl.Changed("path") {
		p.Paths = graph.JSONArray[string]{Set: true, Items: o.paths}
	}
	if fl.Lookup("molecule") != nil && fl.Changed("molecule") {
		p.MoleculeID = graph.NullableID{Set: true, Value: o.molecule}
	}
	if o.knowledgeFile != "" {
		data, _, err := app.readLimited(o.knowledgeFile, app.flagName(fl, "body-file"), op.MaxParams)
		if err != nil {
			return p, err
		}
		text := string(data)
		if msg := node.BodyFrontMatter(text); msg != "" {
			return p, op.Invalid("knowledge", "%s (%s %s)", msg, app.flagName(fl, "body-file"), o.knowledgeFile)
		}
		p.Knowledge = &text
	}
	return p, nil
}

// runGraphManage runs the manage_graph operation fn with the flags'
// parameters, or with the object in --input.
func runGraphManage[R any](ctx context.Context, app *App, cmd *cobra.Command, o *graphManageOpts, operation string,
	fn func(context.Context, *store.KB, graph.ManageGraphParams) (R, error)) error {
	var p graph.ManageGraphParams
	if o.input == "" {
		var err error
		if p, err = o.params(app, cmd, operation); err != nil {
			return err
		}
	}
	resp, err := opCall(ctx, app, o.input, operation, manageOps, "manage-graph", p, fn)
	if err != nil {
		return err
	}
	return printGraph(app, resp, func(w io.Writer, data any) {
		switch v := data.(type) {
		case graph.AtomView:
			fmt.Fprintf(w, "%sd atom %s (version %d)\n", operation, v.ID, v.Version)
		case graph.MoleculeView:
			fmt.Fprintf(w, "%sd molecule %s (version %d)\n", operation, v.ID, v.Version)
		default:
			printGraphData(w, data)
		}
	})
}

// manageArgs checks the positional arguments of create, update and delete:
// one (the entity type for create, the id otherwise) unless --input.
func manageArgs(app *App, o *graphManageOpts, msg string) cobra.PositionalArgs {
	return func(cmd *cobra.Command, args []string) error {
		if o.input != "" {
			if len(args) != 0 {
				return usagef("--input holds the whole parameter object; drop the arguments")
			}
			var given []string
			for _, f := range graphEditFlags {
				if cmd.Flags().Lookup(f) != nil {
					given = append(given, f)
				}
			}
			return refuseWithInput(app, cmd, given...)
		}
		return oneArg(msg)(cmd, args)
	}
}

func newGraphCreateCmd(app *App) *cobra.Command {
	o := graphManageOpts{creates: true}
	cmd := &cobra.Command{
		Use:   "create <atom|molecule>",
		Short: "Create an atom or a molecule",
		Long: `Create an atom (which needs at least one --path) or a molecule. Its id is
derived from --name; it starts at version 1. Prints the new id, or the
envelope with --json. --input <file|-> takes a manage_graph parameter object
with operation "create" instead.`,
		Example: `  kk graph create molecule --name "HTTP layer" --body-file http.md
  kk graph create atom --name "HTTP errors" --path 'internal/http/**/*.go' --molecule molecule-http-layer --task T-12 --body-file - < notes.md`,
		Args: manageArgs(app, &o, "graph create needs the entity type: atom or molecule"),
		RunE: func(cmd *cobra.Command, args []string) error {
			if o.input == "" {
				o.typ = args[0]
			}
			return runGraphManage(cmd.Context(), app, cmd, &o, "create", typed(graph.ManageGraphParams.AsCreate, graph.Create))
		},
	}
	addGraphEditFlags(cmd, &o, false)
	cmd.Flags().StringVar(&o.task, "task", "", "id of the task creating it")
	cmd.Flags().StringVar(&o.input, "input", "", "read the manage_graph parameter object from a file, or - for standard input")
	return cmd
}

func newGraphUpdateCmd(app *App) *cobra.Command {
	var o graphManageOpts
	cmd := &cobra.Command{
		Use:   "update <id>",
		Short: "Change an atom or a molecule at a known version",
		Long: `Change the fields given by flags and leave the others alone. --expect-version is
the version you read; when the entity has moved on since, nothing is written
and the command fails with CONFLICT (re-read it and retry). --path replaces
all patterns; --knowledge-mode append adds --body-file's text after a
dated separator. --input <file|-> takes a manage_graph parameter object with
operation "update" instead.`,
		Example: `  kk graph update map-http-errors --expect-version 3 --path 'internal/http/**' --task T-14
  kk graph update map-http-errors --expect-version 4 --knowledge-mode append --body-file - --task T-14 < more.md`,
		Args: manageArgs(app, &o, "graph update needs the id of an atom or molecule"),
		RunE: func(cmd *cobra.Command, args []string) error {
			if o.input == "" {
				kind, err := kindOf(o.typ, args[0])
				if err != nil {
					return err
				}
				o.typ, o.id = kind, args[0]
			}
			return runGraphManage(cmd.Context(), app, cmd, &o, "update", typed(graph.ManageGraphParams.AsUpdate, graph.Update))
		},
	}
	addGraphEditFlags(cmd, &o, true)
	f := cmd.Flags()
	f.StringVar(&o.typ, "type", "", "atom or molecule (default: from the id)")
	f.Int64Var(&o.version, "expect-version", 0, "the version you last read (required)")
	f.StringVar(&o.task, "task", "", "id of the task making the change")
	f.StringVar(&o.input, "input", "", "read the manage_graph parameter object from a file, or - for standard input")
	return cmd
}

func newGraphDeleteCmd(app *App) *cobra.Command {
	var o graphManageOpts
	cmd := &cobra.Command{
		Use:   "delete <id>",
		Short: "Delete an atom or a molecule at a known version",
		Long: `Delete the atom or molecule <id> at --expect-version. Deleting a molecule orphans
its atoms, or deletes them too with --cascade. --input <file|-> takes a
manage_graph parameter object with operation "delete" instead.`,
		Example: `  kk graph delete map-http-errors --expect-version 5
  kk graph delete molecule-http-layer --expect-version 2 --cascade`,
		Args: manageArgs(app, &o, "graph delete needs the id of an atom or molecule"),
		RunE: func(cmd *cobra.Command, args []string) error {
			if o.input == "" {
				kind, err := kindOf(o.typ, args[0])
				if err != nil {
					return err
				}
				o.typ, o.id = kind, args[0]
			}
			return runGraphManage(cmd.Context(), app, cmd, &o, "delete", typed(graph.ManageGraphParams.AsDelete, graph.Delete))
		},
	}
	f := cmd.Flags()
	f.StringVar(&o.typ, "type", "", "atom or molecule (default: from the id)")
	f.Int64Var(&o.version, "expect-version", 0, "the version you last read (required)")
	f.StringVar(&o.task, "task", "", "id of the task deleting it")
	f.BoolVar(&o.cascade, "cascade", false, "deleting a molecule deletes its atoms too")
	f.StringVar(&o.input, "input", "", "read the manage_graph parameter object from a file, or - for standard input")
	return cmd
}

// printGraphData prints the data of a successful graph operation briefly.
func printGraphData(w io.Writer, data any) {
	switch v := data.(type) {
	case graph.AtomView:
		printAtom(w, v, "")
		printKnowledge(w, v.Knowledge)
		printChangelog(w, v.Changelog)
	case graph.MoleculeView:
		printMolecule(w, v)
		printKnowledge(w, v.Knowledge)
		for _, a := range v.Atoms {
			printAtom(w, a, "  ")
		}
		printChangelog(w, v.Changelog)
	case *graph.SearchResult:
		for _, m := range v.Molecules {
			fmt.Fprintf(w, "%s\tv%d\t%s\n", m.ID, m.Version, m.Name)
		}
		for _, a := range v.Atoms {
			fmt.Fprintf(w, "%s\tv%d\t%s\t%s\n", a.ID, a.Version, a.Name, strings.Join(a.Paths, " "))
		}
		fmt.Fprintf(w, "%d of %d (offset %d)\n", len(v.Molecules)+len(v.Atoms), v.Total, v.Offset)
	case *graph.ContextResult:
		for _, m := range v.Molecules {
			printMolecule(w, m)
			for _, a := range m.Atoms {
				printAtom(w, a, "  ")
			}
		}
		for _, a := range v.OrphanAtoms {
			printAtom(w, a, "")
		}
		for _, p := range v.UnmatchedPaths {
			fmt.Fprintf(w, "unmatched %s\n", p)
		}
	case *graph.DeleteResult:
		for _, id := range v.Deleted {
			fmt.Fprintf(w, "deleted %s\n", id)
		}
		for _, id := range v.Orphaned {
			fmt.Fprintf(w, "orphaned %s\n", id)
		}
		for _, id := range v.Unlinked {
			fmt.Fprintf(w, "unlinked %s\n", id)
		}
	case *graph.AppendResult:
		fmt.Fprintf(w, "appended to %s %s (version %d)\n", v.ParentType, v.ParentID, v.Version)
	case *graph.ChangelogPage:
		printChangelog(w, v.Entries)
		fmt.Fprintf(w, "%d of %d (offset %d)\n", len(v.Entries), v.Total, v.Offset)
	default:
		printData(w, data)
	}
}

// printData prints data an operation returned that has no shorter text
// form (a result of another shape than the printer expected, say) as
// indented JSON, so that a command never prints nothing.
func printData(w io.Writer, data any) {
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	_ = enc.Encode(data)
}

func printMolecule(w io.Writer, m graph.MoleculeView) {
	fmt.Fprintf(w, "molecule %s v%d: %s\n", m.ID, m.Version, m.Name)
}

func printAtom(w io.Writer, a graph.AtomView, indent string) {
	fmt.Fprintf(w, "%satom %s v%d: %s\n", indent, a.ID, a.Version, a.Name)
	fmt.Fprintf(w, "%s  paths: %s\n", indent, strings.Join(a.Paths, " "))
	if a.MoleculeID != nil {
		fmt.Fprintf(w, "%s  molecule: %s\n", indent, *a.MoleculeID)
	}
	if len(a.MatchedPaths) > 0 {
		fmt.Fprintf(w, "%s  matched: %s\n", indent, strings.Join(a.MatchedPaths, " "))
	}
}

func printKnowledge(w io.Writer, text string) {
	if text = strings.TrimSpace(text); text != "" {
		fmt.Fprintf(w, "\n%s\n\n", text)
	}
}

func printChangelog(w io.Writer, log []graph.ChangelogEntry) {
	for _, e := range log {
		fmt.Fprintf(w, "%s\t%s\t%s\n", e.At, e.Task, e.Summary)
	}
}

// typed runs the operation fn on its part of a tool's parameter object,
// as as takes it out (refusing what fn does not take).
func typed[P, Q, R any](as func(P) (Q, error), fn func(context.Context, *store.KB, Q) (R, error)) func(context.Context, *store.KB, P) (R, error) {
	return func(ctx context.Context, k *store.KB, p P) (R, error) {
		q, err := as(p)
		if err != nil {
			var zero R
			return zero, err
		}
		return fn(ctx, k, q)
	}
}

// opCall runs one core operation: with the parameter object read from
// input (checked to name an operation of ops, then decoded by the one
// decode-and-validate step of every face, schema.Decode with the
// operation's registered schema), or else with p as the flags built it.
// The result comes back as the envelope kk --json prints.
func opCall[P, R any](ctx context.Context, app *App, input, operation string, ops []string, name string, p P,
	fn func(context.Context, *store.KB, P) (R, error)) (op.Envelope, error) {
	k, err := app.KB()
	if err != nil {
		return op.Envelope{}, err
	}
	if input != "" {
		raw, gerr, err := graphInput(app, input, operation, ops)
		switch {
		case err != nil:
			return op.Envelope{}, err
		case gerr != nil:
			return op.Envelope{Error: gerr}, nil
		}
		var fromInput P
		if err := schema.Decode(name, raw, &fromInput); err != nil {
			return op.Wrap(nil, err), nil
		}
		p = fromInput
	}
	data, err := fn(ctx, k, p)
	if err != nil && ctx.Err() != nil {
		// Interrupted (Ctrl-C, SIGTERM): not a failure of the operation,
		// and INTERRUPTED as for every other command (see classify).
		if !errors.Is(err, ctx.Err()) {
			err = fmt.Errorf("%w: %w", ctx.Err(), err)
		}
		return op.Envelope{}, err
	}
	return op.Wrap(data, err), nil
}

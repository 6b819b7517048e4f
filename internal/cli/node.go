package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"syscall"
	"text/tabwriter"
	"unicode/utf8"

	"github.com/spf13/cobra"

	"github.com/kk-project/kk/internal/contracts"
	"github.com/kk-project/kk/internal/curate"
	"github.com/kk-project/kk/internal/graph"
	"github.com/kk-project/kk/internal/index"
	"github.com/kk-project/kk/internal/node"
	"github.com/kk-project/kk/internal/op"
	"github.com/kk-project/kk/internal/schema"
	"github.com/kk-project/kk/internal/search"
	"github.com/kk-project/kk/internal/store"
)

func newNodeCmd(app *App) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "node",
		Short: "Write, show and list notes (the leaves of the knowledge tree)",
	}
	cmd.AddCommand(newNodeWriteCmd(app), newNodeShowCmd(app), newNodeListCmd(app), newNodeAddCmd(app), newNodePhrasingsCmd(app), newNodeAdoptCmd(app), newNodeDeleteCmd(app), newNodeRenameCmd(app))
	return cmd
}

type nodeWriteOpts struct {
	typ, slug   string
	title       string
	summary     string
	tags        []string
	relatesTo   []string
	dependsOn   []string
	derivedFrom []string
	phrasings   []string
	confidence  string
	from        string
	bodyFlag    string // the flag --body-file was typed as (an old name: --from), for errors
	folder      string
	sourceDoc   string
	sourceHash  string
	input       string
	update      bool
	unique      bool
	noIndex     bool
	trace       string
	// keep names the fields --update keeps (curate.WriteOptions.Keep).
	keep map[string]bool
}

func newNodeWriteCmd(app *App) *cobra.Command {
	var o nodeWriteOpts
	cmd := &cobra.Command{
		Use:   "write [<type> <slug>]",
		Short: "Write one leaf and bring the index up to date",
		Long: `Write the leaf <type>-<slug> (a slug that already starts with "<type>-" is
used as is) under nodes/, or in --folder, then regenerate the index files.

The body comes from --body-file <path>, or else from standard input. --input
<file|-> takes the whole node as JSON instead (see 'kk schema node-input').

An id that already exists is an error unless --update (change that leaf in
place) or --unique (write <id>-2, -3 or -4 instead). --update changes only
the fields whose flags are given and keeps the others: title, description,
tags, edges, provenance, confidence, phrasings, folder, and the body unless
--body-file or standard input brings one; an empty list (--tag '') clears
that list. With --input, the JSON is the whole node and replaces the leaf.
An id that kk node rename, kk rebalance move or kk node delete
--redirect-to retired (nodes/.redirects.json) is refused too, with or
without --update: the edges that name it lead to its successor; --unique
writes <id>-2 instead. Prints the id, or JSON with --json.

The index files are regenerated after the write, so the tree stays
consistent. When writing many nodes in a row, pass --no-index to each and
run 'kk index rebuild' once at the end.

Types: practice (how we build: a convention, a rule, a gotcha or pitfall, a
command) and map (what exists: a module, a feature, a term, where something
lives) are the notes most projects keep. molecule, req, scenario, test, adr,
flag, event and symbol are the types of the knowledge graph and the
traceability layer (kk graph, kk upsert). Another type is written as given,
since the format lets consumers meet types they do not know, and kk warns
that it is none of these.`,
		Example: `  kk node write practice "Wrap HTTP errors" --description "Wrap errors with the request id" --tag http,errors \
    --phrasing "which request failed? the error has no request id" --phrasing "how should handlers wrap errors" < body.md
  kk node write map cli-commands --title "CLI commands" --description "Where each command lives" --folder cli --body-file notes.md
  kk node write --input node.json`,
		Args: func(cmd *cobra.Command, args []string) error {
			if o.input != "" {
				if len(args) != 0 {
					return usagef("--input takes the whole node; drop the <type> <slug> arguments")
				}
				return nil
			}
			if len(args) != 2 {
				return usagef("node write needs <type> and <slug> (or --input <file|->), got %d argument(s)", len(args))
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) == 2 {
				o.typ, o.slug = args[0], args[1]
				if strings.TrimSpace(o.slug) == "" {
					return usagef("<slug> is empty: give the slug of the node, such as wrap-http-errors")
				}
			}
			if o.update && o.unique {
				return usagef("--update and --unique exclude each other")
			}
			if o.input != "" {
				for _, f := range []string{"title", "description", "tag", "relates-to", "depends-on", "derived-from", "confidence", "body-file", "folder", "source-doc", "source-hash", "phrasing"} {
					if cmd.Flags().Changed(f) {
						return usagef("%s cannot be combined with --input; put it in the JSON", app.flagName(cmd.Flags(), f))
					}
				}
			}
			if o.update && o.input == "" {
				// --update changes the fields given and keeps the others.
				o.keep = map[string]bool{}
				for flag, field := range map[string]string{"title": "title", "description": "description", "tag": "tags", "relates-to": "relates_to",
					"depends-on": "depends_on", "derived-from": "derived_from", "confidence": "confidence", "phrasing": "phrasings", "body-file": "body"} {
					if !cmd.Flags().Changed(flag) {
						o.keep[field] = true
					}
				}
			}
			o.bodyFlag = app.flagName(cmd.Flags(), "body-file")
			if cmd.Flags().Changed("body-file") && o.from == "" {
				// Not standard input in disguise: a script's unset variable.
				return usagef("%s is empty: give the file to read the body from, or - for standard input", o.bodyFlag)
			}
			return runNodeWrite(cmd.Context(), app, o)
		},
	}
	f := cmd.Flags()
	f.StringVar(&o.title, "title", "", "display title (default: the slug)")
	f.StringVar(&o.summary, "description", "", "one-line description, at most 140 characters (required)")
	f.StringSliceVar(&o.tags, "tag", nil, "tag (repeatable, or comma-separated: go,errors)")
	f.StringSliceVar(&o.relatesTo, "relates-to", nil, "comma-separated ids of related nodes")
	f.StringSliceVar(&o.dependsOn, "depends-on", nil, "comma-separated ids this node depends on")
	f.StringSliceVar(&o.derivedFrom, "derived-from", nil, "comma-separated provenance: doc paths, URLs, session ids")
	f.StringVar(&o.confidence, "confidence", "high", "low, medium or high")
	f.StringArrayVar(&o.phrasings, "phrasing", nil, "how a developer would ask for this node, in their own words (repeatable; kk_phrasings)")
	f.StringVar(&o.from, "body-file", "", "read the body from this file instead of standard input")
	f.StringVar(&o.folder, "folder", "", "folder under nodes/ (created when missing; go, nodes/go and .ai/kenkeep/nodes/go/ are the same)")
	f.StringVar(&o.sourceDoc, "source-doc", "", "repository-relative document this node came from (with --source-hash)")
	f.StringVar(&o.sourceHash, "source-hash", "", "SHA-256 of --source-doc's content")
	f.StringVar(&o.input, "input", "", "read the whole node as JSON from a file, or - for standard input")
	f.BoolVar(&o.update, "update", false, "change the leaf if the id exists: the flags given replace its fields, the others are kept")
	f.BoolVar(&o.unique, "unique", false, "append -2, -3 or -4 to the id if it exists")
	f.BoolVar(&o.noIndex, "no-index", false, "leave the index files alone (when writing many nodes; run kk index rebuild once at the end)")
	f.StringVar(&o.trace, "trace", "", "append the outcome to a run's trace, <kind>:<run-id>[__<batch>] (bootstrap, kk-add, curator), in .ai/kenkeep/_logs/<kind>/")
	return cmd
}

// descriptionTooLong says how a description is over
// node.MaxDescriptionChars ("" when it is not).
func descriptionTooLong(s string) string {
	if n := utf8.RuneCountInString(s); n > node.MaxDescriptionChars {
		return fmt.Sprintf("is %d characters; the limit is %d (a one-line summary: put the rest in the body)", n, node.MaxDescriptionChars)
	}
	return ""
}

func runNodeWrite(ctx context.Context, app *App, o nodeWriteOpts) error {
	var trace *curate.Trace
	if o.trace != "" {
		t, err := curate.ParseTrace(o.trace)
		if err != nil {
			return usagef("--trace: %v", err)
		}
		trace = &t
	}
	k, err := app.KB()
	if err != nil {
		return err
	}
	err = writeNode(ctx, app, k, o, trace)
	if trace != nil && err != nil {
		if terr := trace.Append(k, app.Now(), "failed", map[string]any{"reason": err.Error()}); terr != nil {
			app.warnf("the trace %s: %v", k.Rel(trace.Path(k)), terr)
		}
	}
	return err
}

func writeNode(ctx context.Context, app *App, k *store.KB, o nodeWriteOpts, trace *curate.Trace) error {
	var in contracts.NodeInput
	if o.input != "" {
		data, name, err := app.readInput(o.input)
		if err != nil {
			return err
		}
		// The schema refuses a long description too (maxLength); this
		// says by how much, and what to do.
		var peek struct {
			Description string `json:"description"`
		}
		if json.Unmarshal(data, &peek) == nil {
			if msg := descriptionTooLong(peek.Description); msg != "" {
				return fmt.Errorf("%s: \"description\" %s", name, msg)
			}
		}
		if err := schema.Decode("node-input", data, &in); err != nil {
			return fmt.Errorf("%s: %s (see `kk schema node-input`)", name, op.ErrorOf(err).Message)
		}
	} else {
		if o.summary == "" && !o.keep["description"] {
			return usagef("--description is required: a one-line description of the node")
		}
		if o.summary != "" && strings.TrimSpace(o.summary) == "" {
			return usagef("--description is blank: give a one-line description of the node")
		}
		if msg := descriptionTooLong(o.summary); msg != "" {
			return usagef("--description %s", msg)
		}
		body := ""
		if !o.keep["body"] || !app.IO.InTTY {
			b, err := app.readBody(o.from, o.bodyFlag)
			if err != nil {
				return err
			}
			body = b
		}
		// --update without --body-file and with nothing on standard input
		// keeps the body; so does blank input (a script's echo "$UNSET"):
		// a body is emptied only by a --body-file that is.
		if o.keep["body"] && strings.TrimSpace(body) != "" {
			delete(o.keep, "body")
		}
		title := o.title
		if title == "" {
			title = o.slug
		}
		in = contracts.NodeInput{Type: o.typ, Slug: o.slug, Title: title, Description: o.summary, Tags: o.tags,
			RelatesTo: o.relatesTo, DependsOn: o.dependsOn, DerivedFrom: o.derivedFrom, Confidence: o.confidence,
			Folder: o.folder, Body: body, SourceDoc: o.sourceDoc, SourceHash: o.sourceHash, Phrasings: o.phrasings}
	}
	mode := curate.Create
	switch {
	case o.update:
		mode = curate.Update
	case o.unique:
		mode = curate.Unique
	}
	k.Now = app.Now
	res, err := curate.WriteNode(ctx, k, in, curate.WriteOptions{Mode: mode, Command: app.Command, NoIndex: o.noIndex, Keep: o.keep})
	if err != nil {
		return err
	}
	// Only once the write took the type: a type it refused was not
	// "written as given".
	if in.Type != "" && !slices.Contains(graph.EntityTypes, in.Type) {
		app.warnf("type %q is not one of kk's types (%s); it is written as given and shown as a generic note. A convention, gotcha or pitfall is a practice; a module, term or location is a map", in.Type, strings.Join(graph.EntityTypes, ", "))
	}
	if trace != nil {
		if terr := trace.Append(k, app.Now(), "written", map[string]any{"id": res.ID, "path": res.Path, "action": res.Action}); terr != nil {
			app.warnf("the trace %s: %v", k.Rel(trace.Path(k)), terr)
		}
	}
	if o.noIndex {
		app.notef("index files not regenerated (--no-index); run `kk index rebuild` when done")
	}
	for _, ref := range res.Unknown {
		app.warnf("%s links to %s, which is not in the tree (yet); `kk lint` reports it as a dangling edge", res.ID, ref)
	}
	if app.JSON {
		return app.printJSON(map[string]any{"id": res.ID, "path": res.Path, "action": res.Action, "index_changed": res.Index, "unknown_edges": res.Unknown})
	}
	fmt.Fprintln(app.IO.Out, res.ID)
	return nil
}

// readBody reads a node body from a file, or from standard input when it
// is not a terminal; flag is the option that named the file, as typed
// (--body-file, or an old name of it), for errors.
func (a *App) readBody(from, flag string) (string, error) {
	if from == "" {
		if a.IO.InTTY {
			return "", usagef("no body: pipe the markdown body on standard input or pass --body-file <path>")
		}
		from = "-"
	}
	data, name, err := a.readLimited(from, flag, node.MaxSize)
	if err != nil {
		return "", err
	}
	// A body file is read as its text: an editor's byte order mark
	// (Windows Notepad) is no part of it, and its lines end in LF as the
	// leaf's do.
	if msg := node.EncodingProblem(data); msg != "" {
		if from != "-" {
			name = flag + " " + name
		}
		if !strings.HasPrefix(msg, "is ") {
			msg = "is " + msg
		}
		return "", fmt.Errorf("field %q: %s (%s)", "body", msg, name)
	}
	data = bytes.TrimPrefix(data, []byte("\uFEFF"))
	return strings.ReplaceAll(string(data), "\r\n", "\n"), nil
}

// readInput reads a parameter object, changeset or plan from a file
// argument, "-" meaning standard input, up to op.MaxParams bytes. It
// returns the data and a name for messages.
func (a *App) readInput(arg string) ([]byte, string, error) {
	data, name, err := a.readLimited(arg, "--input", op.MaxParams)
	if err == nil && len(bytes.TrimSpace(data)) == 0 {
		return nil, "", fmt.Errorf("--input: %s is empty; nothing was written", name)
	}
	return data, name, err
}

// readLimited reads the file arg ("-": standard input) given with flag,
// refusing more than limit bytes. Every file kk reads on a user's word goes
// through it, so no input (a huge file, /dev/zero, an endless pipe) can
// make kk read without bound: it stops one byte past the limit and fails.
func (a *App) readLimited(arg, flag string, limit int64) ([]byte, string, error) {
	r, name := a.IO.In, "standard input"
	if arg != "-" {
		// Opened without blocking: a FIFO nobody writes to reads as empty
		// instead of hanging kk; one with a writer (<(command) in a shell)
		// is read as it comes.
		f, err := os.OpenFile(arg, os.O_RDONLY|syscall.O_NONBLOCK, 0)
		if err != nil {
			return nil, "", fmt.Errorf("%s: %w", flag, err)
		}
		defer func() { _ = f.Close() }()
		if fi, err := f.Stat(); err == nil && fi.IsDir() {
			return nil, "", fmt.Errorf("%s: %s is a folder, not a file", flag, arg)
		}
		r, name = f, arg
	}
	data, err := io.ReadAll(io.LimitReader(r, limit+1))
	if err != nil {
		return nil, "", fmt.Errorf("%s: reading %s: %w", flag, name, err)
	}
	if int64(len(data)) > limit {
		return nil, "", fmt.Errorf("%s: %s is larger than %s, the limit for %s; nothing was written", flag, name, byteSize(limit), flag)
	}
	return data, name, nil
}

// Caps of the files kk reads besides parameter objects (op.MaxParams) and
// node bodies (node.MaxSize); docs/limits.md lists them all.
const (
	maxDocumentBytes = 64 << 20 // kk validate: a symbol manifest may be large
	maxTokenBytes    = 64 << 10 // kk serve and kk client --token-file
)

// byteSize prints a limit in the largest whole binary unit.
func byteSize(n int64) string {
	switch {
	case n >= 1<<20 && n%(1<<20) == 0:
		return fmt.Sprintf("%d MiB", n>>20)
	case n >= 1<<10 && n%(1<<10) == 0:
		return fmt.Sprintf("%d KiB", n>>10)
	}
	return fmt.Sprintf("%d bytes", n)
}

type nodeShowOpts struct{ id string }

func newNodeShowCmd(app *App) *cobra.Command {
	var o nodeShowOpts
	return &cobra.Command{
		Use: "show <id>",
		Example: `  kk node show practice-wrap-errors
  kk node show practice-wrap-errors --json`,
		Short: "Print one leaf's file as it is on disk",
		Long: `Print the leaf with the given id: its file as it is on disk. With --json it
prints what 'kk read <id> --json' prints (the kk_read result: fields, body
without kk's generated blocks, edges, version), so one leaf has one JSON
shape whichever command shows it.`,
		Args: oneArg("node show needs the id of a node"),
		RunE: func(cmd *cobra.Command, args []string) error {
			o.id = args[0]
			return runNodeShow(cmd.Context(), app, o)
		},
	}
}

func runNodeShow(ctx context.Context, app *App, o nodeShowOpts) error {
	if app.JSON {
		resp, err := opCall(ctx, app, "", "", nil, "kk-read", search.ReadParams{ID: o.id}, search.ReadNode)
		if err != nil {
			return err
		}
		return printGraph(app, resp, printNodeView)
	}
	k, err := app.KB()
	if err != nil {
		return err
	}
	t, err := index.ReadTree(ctx, k)
	if err != nil {
		return err
	}
	n, ok := t.ByID(o.id)
	if !ok {
		if err := graph.UnreadableInTree("node", o.id, t); err != nil {
			return err
		}
		return &opFailure{op.New(op.CodeNotFound, map[string]any{"id": o.id}, "no node with id %q", o.id)}
	}
	src, err := os.ReadFile(k.NodePath(n.Path))
	if err != nil {
		return err
	}
	_, err = app.IO.Out.Write(src)
	return err
}

func nodeJSON(n *node.Node) map[string]any {
	m := map[string]any{
		"id": n.ID, "type": n.Type, "title": n.Title, "description": n.Description, "tags": node.List(n.Tags),
		"path": store.DirName + "/nodes/" + n.Path, "folder": n.Dir(), "relates_to": node.List(n.RelatesTo),
		"depends_on": node.List(n.DependsOn), "derived_from": node.List(n.DerivedFrom), "confidence": n.Confidence,
		"format": n.Format,
	}
	if n.Status != "" {
		m["status"] = n.Status
	}
	if n.StaleAfter != "" {
		m["stale_after"] = n.StaleAfter
	}
	return m
}

type nodeListOpts struct {
	typ    string
	tags   []string
	folder string
}

func newNodeListCmd(app *App) *cobra.Command {
	var o nodeListOpts
	cmd := &cobra.Command{
		Use: "list",
		Example: `  kk node list
  kk node list --type practice --tag go
  kk node list --folder http --json`,
		Short: "List leaves by type, tag or folder (no ranking: see kk search)",
		Long: `List the leaves of the tree in path order: id, type, folder and title,
tab-separated. --type, --tag and --folder filter; several --tag values must
all be present. --folder includes subfolders.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error { return runNodeList(cmd.Context(), app, o) },
	}
	cmd.Flags().StringVar(&o.typ, "type", "", "only nodes of this type (practice, map, molecule, req, scenario, test, adr, flag, event, symbol)")
	cmd.Flags().StringSliceVar(&o.tags, "tag", nil, "only nodes carrying this tag (repeatable)")
	cmd.Flags().StringVar(&o.folder, "folder", "", "only nodes in this folder or below")
	return cmd
}

func runNodeList(ctx context.Context, app *App, o nodeListOpts) error {
	k, err := app.KB()
	if err != nil {
		return err
	}
	folder, err := node.TreeFolder(o.folder)
	if err != nil {
		return usagef("--folder: %v", err)
	}
	t, err := index.ReadTree(ctx, k)
	if err != nil {
		return err
	}
	if o.typ != "" && !slices.Contains(graph.EntityTypes, o.typ) && !slices.ContainsFunc(t.Leaves, func(n *node.Node) bool { return n.Type == o.typ }) {
		// A misspelt type would list nothing, as if there were none.
		return usagef("--type %q is no type of kk's and no note's here; use one of %s", o.typ, strings.Join(graph.EntityTypes, ", "))
	}
	var list []*node.Node
	for _, n := range t.Leaves {
		if o.typ != "" && n.Type != o.typ {
			continue
		}
		if folder != "" && n.Dir() != folder && !strings.HasPrefix(n.Dir(), folder+"/") {
			continue
		}
		if !containsAll(n.Tags, o.tags) {
			continue
		}
		list = append(list, n)
	}
	if app.JSON {
		items := make([]map[string]any, 0, len(list))
		for _, n := range list {
			items = append(items, nodeJSON(n))
		}
		return app.printJSON(map[string]any{"count": len(items), "nodes": items})
	}
	w := app.IO.Out
	var tw *tabwriter.Writer
	if app.IO.OutTTY {
		tw = tabwriter.NewWriter(app.IO.Out, 0, 4, 2, ' ', 0)
		w = tw
	}
	switch {
	case len(t.Leaves) == 0:
		app.noResults("the knowledge base holds no notes yet; kk node write adds one")
	case len(list) == 0:
		app.noResults("none of the %d notes matches these filters; kk node list without them lists every note", len(t.Leaves))
	}
	for _, n := range list {
		fmt.Fprintf(w, "%s\t%s\t%s\t%s\n", n.ID, n.Type, n.Dir(), n.Title)
	}
	if tw != nil {
		return tw.Flush()
	}
	return nil
}

func containsAll(have, want []string) bool {
	for _, w := range want {
		if !slices.Contains(have, w) {
			return false
		}
	}
	return true
}

// oneArg is cobra.ExactArgs(1) with a message of our own.
func oneArg(msg string) cobra.PositionalArgs {
	return func(cmd *cobra.Command, args []string) error {
		if len(args) != 1 {
			return usagef("%s (got %d argument(s))", msg, len(args))
		}
		return nil
	}
}

package cli

import (
	"fmt"
	"io"
	"os"
	"os/user"
	"strings"

	"github.com/kk-project/kk/internal/node"
	"github.com/kk-project/kk/internal/trace"
	"github.com/spf13/cobra"
)

type upsertOpts struct {
	e                                   trace.KBEntityIn
	status, priority, severity, owner   string
	description, body, textRef, version string
	edges                               []string
	by, source, input                   string
}

func newUpsertCmd(app *App) *cobra.Command {
	var o upsertOpts
	cmd := &cobra.Command{
		Use:   "upsert",
		Short: "Create or update traceability entities and edges as one changeset",
		Long: `The command-line face of kb_upsert. A changeset of entities (req, scenario,
test, adr, flag, event, symbol) and typed edges is checked whole — shape,
bounds, edge endpoint types, and that every edge's ends exist in the
changeset, the tree or the index — and then applied all-or-nothing under
the writer lock. New entities become leaves in nodes/<type folder>/ (for
example nodes/requirements/REQ-7.md); edges go into their source entity's
kk_edges with created_at and created_by stamped. Every changeset appends a
record to the branch's audit log (.ai/kenkeep/.state/branches/<branch>/audit.jsonl).

The flags describe one entity (--type and --id, plus the fields to set) and
any number of --edge TYPE:FROM:TO; --input <file|-> takes the whole kb_upsert
parameter object instead. An entity keeps the id it is given (REQ-7 stays
REQ-7, in nodes/requirements/REQ-7.md); ids are compared without regard to
case, so an edge to req-7 reaches REQ-7.

A failed changeset exits 1 with "kk: <CODE>: <message>" (VALIDATION_ERROR,
NOT_FOUND, CONFLICT, INVARIANT_VIOLATION) and writes nothing.`,
		Example: `  kk upsert --type req --id REQ-7 --title "Users log in with a passkey" --priority must
  kk upsert --edge verified_by:REQ-7:test-login-e2e --source "PR 42"
  kk upsert --input changeset.json --json`,
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) != 0 {
				return usagef("upsert takes flags, not arguments (got %q)", args[0])
			}
			if o.input != "" {
				return refuseWithInput(app, cmd, "type", "id", "title", "status", "priority", "severity", "owner", "tag", "link",
					"text-ref", "description", "body", "folder", "expect-version", "edge", "by", "source")
			}
			if (o.e.Type == "") != (o.e.ID == "") {
				return usagef("an entity needs both --type and --id")
			}
			if o.e.Type == "" && len(o.edges) == 0 {
				return usagef("nothing to upsert: give --type and --id, --edge, or --input")
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			p, err := o.params(app, cmd)
			if err != nil {
				return err
			}
			ctx := cmd.Context()
			resp, err := opCall(ctx, app, o.input, "", nil, "kb-upsert", p, trace.KBUpsert)
			if err != nil {
				return err
			}
			return printGraph(app, resp, printUpsert)
		},
	}
	f := cmd.Flags()
	f.StringVar(&o.e.Type, "type", "", "entity type: req, scenario, test, adr, flag, event or symbol")
	f.StringVar(&o.e.ID, "id", "", "entity id, kept as written (REQ-7 and req-7 name the same entity)")
	f.StringVar(&o.e.Title, "title", "", "short summary (required to create)")
	f.StringVar(&o.status, "status", "", "draft, stable or deprecated (new entities start as draft)")
	f.StringVar(&o.priority, "priority", "", "priority, e.g. must, should, could")
	f.StringVar(&o.severity, "severity", "", "severity")
	f.StringVar(&o.owner, "owner", "", "owner")
	f.StringArrayVar(&o.e.Tags, "tag", nil, "tag (repeatable; replaces the entity's tags)")
	f.StringArrayVar(&o.e.Links, "link", nil, "URL (repeatable; replaces the entity's links)")
	f.StringVar(&o.textRef, "text-ref", "", "pointer to a markdown document or blob")
	f.StringVar(&o.description, "description", "", "one-line description")
	f.StringVar(&o.body, "body", "", "markdown body")
	f.StringVar(&o.e.Folder, "folder", "", "folder under nodes/ for a new entity (default: the type's folder; nodes/reqs is reqs)")
	f.StringVar(&o.version, "expect-version", "", "fail with CONFLICT unless the entity is at this version")
	f.StringArrayVar(&o.edges, "edge", nil, "typed edge TYPE:FROM:TO, or relates_to:FROM:TO:KIND (repeatable)")
	f.StringVar(&o.by, "by", "", "who applies the changeset (default: your user name)")
	f.StringVar(&o.source, "source", "cli", "where the facts come from: a task, a document, a review")
	f.StringVar(&o.input, "input", "", "read the kb_upsert parameter object from a file, or - for standard input")
	return cmd
}

// params builds the kb_upsert parameter object from the flags.
func (o *upsertOpts) params(app *App, cmd *cobra.Command) (trace.KBUpsertParams, error) {
	p := trace.KBUpsertParams{CreatedBy: actor(o.by), Source: o.source}
	if o.e.Type != "" {
		e := o.e
		if e.Folder != "" {
			// nodes/reqs and .ai/kenkeep/nodes/reqs/ are the folder reqs.
			f, err := node.TreeFolder(e.Folder)
			if err != nil {
				return p, usagef("--folder: %v", err)
			}
			if f == "" {
				f = "."
			}
			e.Folder = f
		}
		for _, s := range []struct {
			flag string
			val  string
			dst  **string
		}{{"status", o.status, &e.Status}, {"priority", o.priority, &e.Priority}, {"severity", o.severity, &e.Severity},
			{"owner", o.owner, &e.Owner}, {"text-ref", o.textRef, &e.TextRef}, {"description", o.description, &e.Description}, {"body", o.body, &e.Body}} {
			if cmd.Flags().Changed(s.flag) {
				v := s.val
				*s.dst = &v
			}
		}
		if cmd.Flags().Changed("expect-version") {
			var v int64
			if _, err := fmt.Sscan(o.version, &v); err != nil || v < 1 {
				return p, usagef("%s must be a whole number of at least 1, not %q", app.flagName(cmd.Flags(), "expect-version"), o.version)
			}
			e.Version = &v
		}
		p.Entities = []trace.KBEntityIn{e}
	}
	for _, spec := range o.edges {
		parts := strings.Split(spec, ":")
		if len(parts) < 3 || len(parts) > 4 || (len(parts) == 4) != (parts[0] == "relates_to") {
			return p, usagef("--edge %q: write TYPE:FROM:TO, or relates_to:FROM:TO:KIND", spec)
		}
		e := trace.KBEdgeIn{Type: parts[0], From: parts[1], To: parts[2]}
		if len(parts) == 4 {
			e.Kind = parts[3]
		}
		p.Edges = append(p.Edges, e)
	}
	return p, nil
}

// actor is who a command-line changeset is recorded as: --by, else the
// user's login name.
func actor(by string) string {
	if by != "" {
		return by
	}
	if u, err := user.Current(); err == nil && u.Username != "" {
		return u.Username
	}
	if name := os.Getenv("USER"); name != "" {
		return name
	}
	return "cli"
}

func printUpsert(w io.Writer, data any) {
	r, ok := data.(*trace.UpsertResult)
	if !ok {
		printData(w, data)
		return
	}
	fmt.Fprintf(w, "%s: %d created, %d updated, %d unchanged, %d edge(s) added or changed\n",
		r.Changeset, len(r.Created), len(r.Updated), len(r.Unchanged), r.Edges)
	for _, id := range r.Created {
		fmt.Fprintf(w, "created\t%s\n", id)
	}
	for _, id := range r.Updated {
		fmt.Fprintf(w, "updated\t%s\n", id)
	}
}

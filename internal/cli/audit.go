package cli

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"github.com/kk-project/kk/internal/index"
)

type auditOpts struct {
	branch    string
	changeset string
	id        string
	limit     int
}

func newAuditCmd(app *App) *cobra.Command {
	var o auditOpts
	cmd := &cobra.Command{
		Use: "audit",
		Example: `  kk audit --limit 5
  kk audit --id req-7
  kk audit --json | jq '.records[0]'`,
		Short: "Print the branch's audit log of applied changesets",
		Long: `Print the audit log of a branch: one record per changeset applied to the
knowledge tree, whichever face made it (a CLI command, an MCP tool, a
hook, the HTTP service), newest last. A record names the changeset, who
applied it (actor), when, from where (source), the command or tool, and its
operations: leaves created, updated (with the version before and after)
and deleted, edges added and removed, other files written.

The log lives beside the branch's index (.ai/kenkeep/.state/branches/
<branch>/audit.jsonl); kk compact moves it aside. --changeset shows one
changeset, --id the changesets that touched an entity (compared without
regard to case), --limit the newest N.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := checkBranchFlag(cmd, o.branch); err != nil {
				return err
			}
			if o.limit < 0 {
				return usagef("--limit must be 0 (all) or more")
			}
			return runAudit(cmd.Context(), app, o)
		},
	}
	cmd.Flags().StringVar(&o.branch, "branch", "", "the branch whose log to print (default: the current branch)")
	cmd.Flags().StringVar(&o.changeset, "changeset", "", "only the changeset with this id")
	cmd.Flags().StringVar(&o.id, "id", "", "only the changesets that touched this entity")
	cmd.Flags().IntVar(&o.limit, "limit", 0, "only the newest N records (0: all)")
	return cmd
}

func runAudit(ctx context.Context, app *App, o auditOpts) error {
	k, err := app.KB()
	if err != nil {
		return err
	}
	branch, err := indexBranch(ctx, k, o.branch)
	if err != nil {
		return err
	}
	recs, err := index.ReadAudit(k, branch)
	if err != nil {
		return err
	}
	recs = slices.DeleteFunc(recs, func(r index.AuditRecord) bool {
		if o.changeset != "" && r.Changeset != o.changeset {
			return true
		}
		return o.id != "" && !slices.ContainsFunc(r.Ops, func(op index.AuditOp) bool {
			return strings.EqualFold(op.ID, o.id) || strings.EqualFold(op.To, o.id)
		})
	})
	if o.limit > 0 && len(recs) > o.limit {
		recs = recs[len(recs)-o.limit:]
	}
	if recs == nil {
		recs = []index.AuditRecord{}
	}
	if app.JSON {
		return app.printJSON(map[string]any{"branch": branch, "records": recs})
	}
	for _, r := range recs {
		who := r.Actor
		if who == "" {
			who = "-"
		}
		fmt.Fprintf(app.IO.Out, "%s\t%s\t%s\t%s\t%s\n", r.At, r.Changeset, who, orDash(r.Source), orDash(r.Command))
		for _, op := range r.Ops {
			fmt.Fprintf(app.IO.Out, "  %s\n", describeOp(op))
		}
	}
	if len(recs) == 0 && !app.Quiet {
		fmt.Fprintf(app.IO.Err, "kk: no audit record on branch %s\n", branch)
	}
	return nil
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// describeOp renders one operation of an audit record on one line.
func describeOp(op index.AuditOp) string {
	switch op.Op {
	case "create":
		return fmt.Sprintf("create %s %s (%s) v%d", op.Type, op.ID, op.Path, op.After)
	case "update":
		return fmt.Sprintf("update %s %s (%s) v%d -> v%d", op.Type, op.ID, op.Path, op.Before, op.After)
	case "delete":
		return fmt.Sprintf("delete %s %s (%s) v%d", op.Type, op.ID, op.Path, op.Before)
	case "add_edge", "delete_edge":
		return fmt.Sprintf("%s %s %s -> %s", op.Op, op.ID, op.Type, op.To)
	default:
		return strings.TrimSpace(fmt.Sprintf("%s %s %s", op.Op, op.ID, op.Path))
	}
}

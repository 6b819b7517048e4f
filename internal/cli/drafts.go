package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/kk-project/kk/internal/curate"
)

func newDraftsCmd(app *App) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "drafts",
		Short: "Gather the batches drafted by parallel curate sub-agents",
		Long: `When the kk-curate skill fans drafting out to sub-agents, each leaves its
batch in .ai/kenkeep/_logs/curator/<run-id>__<N>.draft.json.
'kk drafts collect' checks and joins them.`,
	}
	cmd.AddCommand(newDraftsCollectCmd(app))
	return cmd
}

type draftsCollectOpts struct {
	runID  string
	schema string
}

func newDraftsCollectCmd(app *App) *cobra.Command {
	var o draftsCollectOpts
	cmd := &cobra.Command{
		Use:   "collect --run-id <id>",
		Short: "Validate and join a run's draft batches",
		Long: `Read every .ai/kenkeep/_logs/curator/<run-id>__<N>.draft.json in batch order
(2 before 10), check each against --schema (default curator-output; it
must describe a list), and print the entries of the valid batches as one
JSON list on standard output, ready for curate-dedup.

An invalid batch is skipped with a warning on standard error; the run goes
on. Each batch's outcome is appended to <run-id>__<N>.jsonl beside it as
{"ts", "runId", "batchN", "event": "validated" | "invalid", "count" |
"reason"}. A summary goes to standard error. Fails when the run left no
draft files.`,
		Example: `  kk drafts collect --run-id 2026-05-23-a > actions.json`,
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if o.runID == "" {
				return usagef("--run-id is required")
			}
			return runDraftsCollect(cmd.Context(), app, o)
		},
	}
	f := cmd.Flags()
	f.StringVar(&o.runID, "run-id", "", "the curate run whose drafts to collect")
	f.StringVar(&o.schema, "schema", "curator-output", "schema each batch must match (kk schema --list lists them)")
	return cmd
}

func runDraftsCollect(_ context.Context, app *App, o draftsCollectOpts) error {
	k, err := app.KB()
	if err != nil {
		return err
	}
	res, err := curate.Collect(curate.DraftsDir(k), o.runID, o.schema, app.Now())
	if err != nil {
		return err
	}
	if err := app.writeJSON(app.IO.Out, json.RawMessage(joinItems(res.Items))); err != nil {
		return err
	}
	valid := 0
	var skipped []string
	for _, b := range res.Batches {
		if b.Valid {
			valid++
		} else {
			skipped = append(skipped, b.N)
		}
	}
	summary := fmt.Sprintf("drafts collect: %d batch(es), %d valid, %d invalid", len(res.Batches), valid, len(skipped))
	if len(skipped) > 0 {
		summary += " (skipped: " + strings.Join(skipped, ", ") + ")"
	}
	app.notef("%s; %d entr(ies) aggregated", summary, len(res.Items))
	for _, b := range res.Batches {
		if !b.Valid {
			app.warnf("batch %s (%s) skipped: %s", b.N, b.File, b.Reason)
		}
	}
	for _, w := range res.Warnings {
		app.warnf("%s", w)
	}
	return nil
}

// joinItems builds a JSON list from already-encoded entries.
func joinItems(items []json.RawMessage) []byte {
	var b strings.Builder
	b.WriteByte('[')
	for i, it := range items {
		if i > 0 {
			b.WriteByte(',')
		}
		b.Write(it)
	}
	b.WriteByte(']')
	return []byte(b.String())
}

package cli

import (
	"fmt"
	"io"
	"strings"

	"github.com/kk-project/kk/internal/index"
	"github.com/kk-project/kk/internal/trace"
	"github.com/spf13/cobra"
)

type checkOpts struct {
	p     trace.KBCheckParams
	input string
}

func newCheckCmd(app *App) *cobra.Command {
	var o checkOpts
	var rules []string
	for _, r := range trace.CheckRules {
		rules = append(rules, "  "+r.Name+"\n      "+r.Description)
	}
	cmd := &cobra.Command{
		Use:   "check",
		Short: "Check the traceability rules; exit 1 on a violation (for CI)",
		Long: `The command-line face of kb_check. It syncs the current branch's index, runs
the rules (all of them, or those named with --rule) and prints each
violation as "rule<TAB>ids<TAB>message". It exits 0 when there is none and
1 when there is any, so CI can run it next to kk validate. --json prints
the result envelope {"success":true,"data":{"rules":[…],"violations":[{rule,
ids, message}]}}.

Rules:
` + strings.Join(rules, "\n"),
		Example: `  kk check
  kk check --rule must-coverage --json`,
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) != 0 {
				return usagef("check takes flags, not arguments (got %q)", args[0])
			}
			if o.input != "" {
				return refuseWithInput(app, cmd, "rule")
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx := cmd.Context()
			app.skipsReported = true // leaves-readable reports them
			// The rules judged from part of the leaves would be wrong
			// (an edge to a note not checked out is not dangling).
			if k, err := app.KB(); err == nil {
				if err := index.CheckedOut(ctx, k); err != nil {
					return err
				}
			}
			resp, err := opCall(ctx, app, o.input, "", nil, "kb-check", o.p, trace.KBCheck)
			if err != nil {
				return err
			}
			var found int
			if r, ok := resp.Data.(*trace.CheckResult); ok && resp.Success {
				found = len(r.Violations)
				if !app.JSON {
					for _, v := range r.Violations {
						fmt.Fprintf(app.IO.Out, "%s\t%s\t%s\n", v.Rule, strings.Join(v.IDs, ","), v.Message)
					}
				}
			}
			if err := printGraph(app, resp, func(w io.Writer, data any) {}); err != nil {
				return err
			}
			if found > 0 {
				// With --json the result on stdout says it all: stderr
				// stays empty, as for kk lint and kk index rebuild --check.
				if !app.JSON {
					fmt.Fprintf(app.IO.Err, "kk: %d violation(s) of the traceability rules\n", found)
				}
				return &SilentError{Code: ExitFailure}
			}
			return nil
		},
	}
	cmd.Flags().StringArrayVar(&o.p.Rules, "rule", nil, "run only this rule (repeatable)")
	cmd.Flags().StringVar(&o.input, "input", "", "read the kb_check parameter object from a file, or - for standard input")
	return cmd
}

package cli

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"github.com/kk-project/kk/internal/harness"
	"github.com/kk-project/kk/internal/install"
	"github.com/kk-project/kk/internal/store"
)

// launchOpts are the options of the launchers, which run a kk skill in a
// coding agent's headless mode.
type launchOpts struct {
	harness string // --harness
	skill   string // the slash command, without "/"
	from    string // kk bootstrap --from
	// model picks the launch's model setting from config.yaml
	// (curatorModel, bootstrapModel); nil runs the harness's default.
	model func(store.Config) store.NamedModel
}

// launchNoJSON is what a launcher prints instead of data.
const launchNoJSON = "the coding agent's own output"

const launchLong = `

The harness is --harness, else the one this command runs inside (detected
from its environment), else cliDefaultHarness in .ai/kenkeep/config.yaml,
else claude. kk must be installed into it (kk init --harnesses <id>), so
that it has the skill. kk curate runs with curatorModel and kk bootstrap
with bootstrapModel from config.yaml ({name, effort}, as the harness's
own flags); what the harness cannot honour of the setting is said on
stderr, and the harness runs without it. The agent starts in the repository root with this
terminal's input and output and with KK_INTERNAL=1 set, so kk's hooks stay
out of its way; kk exits with the agent's exit status.`

func newCurateCmd(app *App) *cobra.Command {
	o := launchOpts{skill: "kk-curate", model: func(c store.Config) store.NamedModel {
		return store.NamedModel{Key: "curatorModel", Setting: c.CuratorModel}
	}}
	cmd := &cobra.Command{
		Use:         "curate",
		Annotations: map[string]string{noJSON: launchNoJSON},
		Short:       "Run the kk-curate skill in a coding agent",
		Long: `Run /kk-curate headless in a coding agent: it turns the session logs
waiting in .ai/kenkeep/_sessions into reviewed knowledge nodes.` + launchLong,
		Example: `  kk curate
  kk curate --harness codex`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			return runLaunch(cmd.Context(), app, o)
		},
	}
	cmd.Flags().StringVar(&o.harness, "harness", "", "coding agent to run (a harness id)")
	return cmd
}

func newBootstrapCmd(app *App) *cobra.Command {
	o := launchOpts{skill: "kk-bootstrap", model: func(c store.Config) store.NamedModel {
		return store.NamedModel{Key: "bootstrapModel", Setting: c.BootstrapModel}
	}}
	cmd := &cobra.Command{
		Use:         "bootstrap",
		Annotations: map[string]string{noJSON: launchNoJSON},
		Short:       "Run the kk-bootstrap skill in a coding agent",
		Long: `Run /kk-bootstrap headless in a coding agent: it seeds the knowledge base
from the repository's markdown documents. --from limits it to one folder
(relative to the repository root), which keeps a large documentation tree
within the agent's context.` + launchLong,
		Example: `  kk bootstrap
  kk bootstrap --from docs/architecture --harness claude`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if cmd.Flags().Changed("from") && strings.TrimSpace(o.from) == "" {
				return usagef("--from needs a folder, relative to the repository root")
			}
			return runLaunch(cmd.Context(), app, o)
		},
	}
	cmd.Flags().StringVar(&o.harness, "harness", "", "coding agent to run (a harness id)")
	cmd.Flags().StringVar(&o.from, "from", "", "only read documents under this folder (relative to the repository root)")
	return cmd
}

func newPhrasingsCmd(app *App) *cobra.Command {
	o := launchOpts{skill: "kk-phrasings"}
	cmd := &cobra.Command{
		Use:   "phrasings",
		Short: "Run the kk-phrasings skill in a coding agent",
		Long: `Run /kk-phrasings headless in a coding agent: it reads the leaves that have
no kk_phrasings yet, a batch at a time, and writes for each the questions a
developer would ask to find it (kk node phrasings --input), so that search
and the prompt-context hook find a node from words its text does not use.` + launchLong,
		Example: `  kk phrasings
  kk phrasings --harness codex`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			return runLaunch(cmd.Context(), app, o)
		},
	}
	cmd.Flags().StringVar(&o.harness, "harness", "", "coding agent to run (a harness id)")
	return cmd
}

func newNodeAddCmd(app *App) *cobra.Command {
	o := launchOpts{skill: "kk-add"}
	cmd := &cobra.Command{
		Use:         "add",
		Annotations: map[string]string{noJSON: launchNoJSON},
		Short:       "Run the kk-add skill in a coding agent",
		Long: `Run /kk-add in a coding agent: it asks for one piece of knowledge and
records it as a node with kk node write.` + launchLong,
		Example: `  kk node add --harness cursor`,
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			return runLaunch(cmd.Context(), app, o)
		},
	}
	cmd.Flags().StringVar(&o.harness, "harness", "", "coding agent to run (a harness id)")
	return cmd
}

func runLaunch(_ context.Context, app *App, o launchOpts) error {
	reg, err := app.harnessFlag(o.harness)
	if err != nil {
		return err
	}
	k, err := app.KB()
	if err != nil {
		return err
	}
	inst, err := k.ReadInstalled()
	if err != nil {
		return fmt.Errorf("%w at %s: %s cannot be read (%v); run `kk init --harnesses <id>` first", store.ErrNotFound, k.Root, k.Rel(k.InstalledPath()), err)
	}
	cfg, err := k.LoadConfig()
	if err != nil {
		return err
	}
	a, err := reg.Resolve(o.harness, app.Getenv, cfg.CLIDefaultHarness)
	if err != nil {
		return err
	}
	if !slices.Contains(inst.Harnesses, a.ID()) {
		return fmt.Errorf("kk is not installed into %s here, so it has no /%s skill; run `kk init --harnesses %s` first", a.Name(), o.skill, a.ID())
	}
	prompt := "/" + o.skill
	if o.from != "" {
		scope, err := launchScope(k.Root, o.from)
		if err != nil {
			return err
		}
		prompt += " --from " + scope
	}
	bin, err := install.LookPath(app.Getenv("PATH"), a.Binary())
	if err != nil {
		return fmt.Errorf("%s is not on PATH, so %s cannot be started: %s", a.Binary(), a.Name(), a.InstallHint())
	}
	var model harness.Model
	if o.model != nil {
		nm := o.model(cfg)
		model = nm.Setting.HarnessModel()
		for _, p := range a.Spec().ModelProblems(nm.Key, model) {
			app.warnf("%s (config.yaml)", p)
		}
	}
	c := exec.Command(bin, a.LaunchArgs(prompt, model)...)
	c.Dir = k.Root
	c.Stdin, c.Stdout, c.Stderr = app.IO.In, app.IO.Out, app.IO.Err
	c.Env = childEnv(os.Environ(), k.Root)
	// The agent gets the terminal's interrupt itself; kk waits for it to
	// finish rather than killing it.
	err = c.Run()
	var exit *exec.ExitError
	switch {
	case err == nil:
		return nil
	case errors.As(err, &exit):
		code := exit.ExitCode()
		if code <= 0 {
			code = ExitFailure // killed by a signal
		}
		return &SilentError{Code: code}
	}
	return fmt.Errorf("starting %s: %w", a.Name(), err)
}

// childEnv is the environment of a process kk starts in dir: the given one
// with PWD set to dir and the recursion guard set, so kk's hooks in the
// child do nothing. CLAUDECODE is dropped: Claude Code refuses to start
// inside what it takes for its own session, and a launcher run from a
// Claude Code terminal is not one.
func childEnv(env []string, dir string) []string {
	out := harness.ChildEnv(env, "PWD", "CLAUDECODE")
	return append(out, "PWD="+dir)
}

// launchScope checks a --from folder (relative to the repository root)
// and returns it in the form the skill expects.
func launchScope(root, from string) (string, error) {
	if filepath.IsAbs(from) {
		return "", usagef("--from %s: give a folder relative to the repository root", from)
	}
	clean := filepath.Clean(from)
	if clean == ".." || strings.HasPrefix(clean, ".."+string(filepath.Separator)) {
		return "", usagef("--from %s: the folder is outside the repository", from)
	}
	fi, err := os.Stat(filepath.Join(root, clean))
	if err != nil || !fi.IsDir() {
		return "", fmt.Errorf("--from %s: no such folder in the repository %s", from, root)
	}
	scope := filepath.ToSlash(clean)
	if strings.ContainsAny(scope, " \t\"'") {
		scope = fmt.Sprintf("%q", scope)
	}
	return scope, nil
}

// harnessFlag returns the harness registry after checking that a --harness
// value, when given, names a known harness.
func (a *App) harnessFlag(id string) (*harness.Registry, error) {
	reg := a.harnesses()
	if id != "" {
		if _, err := reg.Get(id); err != nil {
			return nil, usagef("--harness: %v", err)
		}
	}
	return reg, nil
}

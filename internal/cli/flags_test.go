package cli

import (
	"strings"
	"testing"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// Every old flag name still works as a hidden alias of the new one: it
// sets the new flag, help does not show it, and no command keeps a flag
// of its own under an old name.
func TestFlagAliases(t *testing.T) {
	for path, aliases := range flagAliases {
		for old, name := range aliases {
			root := helpRoot()
			cmd, _, err := root.Find(strings.Fields(path)[1:])
			if err != nil || cmd.CommandPath() != path {
				t.Errorf("%s: no such command (%v)", path, err)
				continue
			}
			f := cmd.Flags().Lookup(name)
			if f == nil {
				t.Errorf("%s: --%s, the new name of --%s, is no flag", path, name, old)
				continue
			}
			value := "1"
			if f.Value.Type() == "bool" {
				value = "true"
			}
			if err := cmd.ParseFlags([]string{"--" + old + "=" + value}); err != nil {
				t.Errorf("%s --%s: %v", path, old, err)
				continue
			}
			if !cmd.Flags().Changed(name) {
				t.Errorf("%s --%s did not set --%s", path, old, name)
			}
			cmd.LocalFlags().VisitAll(func(g *pflag.Flag) {
				if g.Name == old {
					t.Errorf("%s still has a flag named --%s", path, old)
				}
			})
			if help := cmd.LocalFlags().FlagUsages(); strings.Contains(help, "--"+old+" ") {
				t.Errorf("%s: help shows the old name --%s:\n%s", path, old, help)
			}
		}
	}
}

// One name per concept: no command has a flag under a name that is an
// old name somewhere else, so --summary, --tags, --from (for a body),
// --content, --file, --knowledge-file, --types and --out are gone
// (changelog append's --summary, what a changelog entry says, and the
// folder bootstrap and finddocs read --from are other concepts), and
// --version and -v mean one thing each: kk's version on the root, and
// --verbose.
func TestFlagNamesOneConcept(t *testing.T) {
	other := map[string]bool{"kk changelog append --summary": true, "kk bootstrap --from": true, "kk finddocs --from": true}
	old := map[string]bool{}
	for _, aliases := range flagAliases {
		for o := range aliases {
			old[o] = true
		}
	}
	walkCommands(helpRoot(), func(c *cobra.Command) {
		c.LocalFlags().VisitAll(func(f *pflag.Flag) {
			key := c.CommandPath() + " --" + f.Name
			if old[f.Name] && !other[key] && !(f.Name == "version" && !c.HasParent()) {
				t.Errorf("%s: the name is an old one; use the concept's name (flagAliases)", key)
			}
			if f.Shorthand == "v" && f.Name != "verbose" {
				t.Errorf("%s: -v is --verbose everywhere", key)
			}
		})
	})
}

// Every flag of every command that takes one value refuses a second,
// different one, naming itself, so that no command can pick one of two
// values silently; the same value again is let through, and a list flag
// takes both.
func TestRepeatedFlagsRefused(t *testing.T) {
	checked := 0
	walkTree(helpRoot(), func(c *cobra.Command) {
		check := func(f *pflag.Flag) {
			if !singleValued(f) {
				if _, ok := f.Value.(pflag.SliceValue); ok {
					if err := f.Value.Set("a"); err != nil {
						t.Errorf("%s --%s a: %v", c.CommandPath(), f.Name, err)
					}
					if err := f.Value.Set("b"); err != nil {
						t.Errorf("%s --%s a --%s b: %v", c.CommandPath(), f.Name, f.Name, err)
					}
				}
				return
			}
			checked++
			first, second := map[string][2]string{"duration": {"1s", "2s"}}[f.Value.Type()][0], ""
			if first == "" {
				first, second = "1", "2" // a number, or a string
			} else {
				second = "2s"
			}
			if err := f.Value.Set(first); err != nil {
				t.Errorf("%s --%s %q: %v", c.CommandPath(), f.Name, first, err)
				return
			}
			if err := f.Value.Set(first); err != nil {
				t.Errorf("%s --%s %s --%s %s: %v, want the same value let through", c.CommandPath(), f.Name, first, f.Name, first, err)
			}
			err := f.Value.Set(second)
			if err == nil || !strings.Contains(err.Error(), "--"+f.Name+" is given twice") {
				t.Errorf("%s --%s %s --%s %s: %v, want a refusal naming the flag", c.CommandPath(), f.Name, first, f.Name, second, err)
			}
		}
		c.LocalNonPersistentFlags().VisitAll(check)
		c.PersistentFlags().VisitAll(check)
	})
	if checked < 100 {
		t.Errorf("only %d one-value flags checked; the walk missed commands", checked)
	}
}

// A command without subcommands given an argument it does not take says
// so, naming the argument, and where it takes --input, that the file goes
// there; cobra's "unknown command" would send a person looking for a
// subcommand that never existed.
func TestExtraArgumentNamed(t *testing.T) {
	dir := t.TempDir() // no knowledge base: nothing a command could write
	for _, path := range leafCommands() {
		name := "kk " + strings.Join(path, " ")
		if path[0] == "hook" {
			continue // a hook always exits 0 and reports in the harness's way
		}
		_, _, stderr := run(t, dir, "", append(append([]string{}, path...), "plan.json")...)
		if strings.Contains(stderr, "unknown command") {
			t.Errorf("%s plan.json: %q, want a message that it takes no such argument", name, stderr)
		}
	}
	code, _, stderr := run(t, dir, "", "rebalance", "move", "plan.json")
	if want := "kk: kk rebalance move takes no arguments (got \"plan.json\"); give the file with --input plan.json\n"; code != ExitUsage || !strings.HasPrefix(stderr, want) {
		t.Errorf("kk rebalance move plan.json: exit %d, %q, want %q", code, stderr, want)
	}
	code, _, stderr = run(t, dir, "", "status", "extra")
	if want := "kk: kk status takes no arguments (got \"extra\")\n"; code != ExitUsage || !strings.HasPrefix(stderr, want) {
		t.Errorf("kk status extra: exit %d, %q, want %q", code, stderr, want)
	}
}

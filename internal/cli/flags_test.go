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

package cli

import (
	"io"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// CommandFlags maps the path of every command in kk's command tree ("kk",
// "kk node", "kk node write") to the flags it accepts: its own (--help
// included, and --version on the root) and the global ones it inherits.
// Flags are written as on a command line ("--json", "-u"); a flag that
// takes a value ends in "=" ("--input=", "--root="). Each list is sorted.
// The skill templates are checked against it, so that a skill never tells
// an agent to run a command or a flag kk does not have.
func CommandFlags() map[string][]string {
	app := &App{IO: IO{In: strings.NewReader(""), Out: io.Discard, Err: io.Discard}, Now: time.Now,
		Getenv: func(string) string { return "" }, Getwd: func() (string, error) { return ".", nil }}
	root := newRootCmd(app)
	root.InitDefaultVersionFlag()
	out := map[string][]string{}
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		if c.Hidden || c.Name() == "help" || c.Name() == "completion" {
			return
		}
		c.InitDefaultHelpFlag()
		var flags []string
		add := func(f *pflag.Flag) {
			if f.Hidden {
				return
			}
			value := ""
			if f.NoOptDefVal == "" {
				value = "="
			}
			flags = append(flags, "--"+f.Name+value)
			if f.Shorthand != "" {
				flags = append(flags, "-"+f.Shorthand+value)
			}
		}
		c.NonInheritedFlags().VisitAll(add)
		c.InheritedFlags().VisitAll(add)
		slices.Sort(flags)
		out[c.CommandPath()] = slices.Compact(flags)
		for _, sub := range c.Commands() {
			walk(sub)
		}
	}
	walk(root)
	return out
}

package cli

import (
	"bytes"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// CommandDocs renders one markdown page per command of kk's command tree,
// keyed by file name (kk.md, kk_node_write.md, ...). The pages are committed
// under docs/cli/ and a test keeps them in step with the code.
func CommandDocs() map[string][]byte {
	return renderPages(func(c *cobra.Command) (string, []byte) { return docName(c), commandPage(c) })
}

// renderPages renders one page per command of kk's command tree (help
// excluded, completion and the internal commands help hides included),
// keyed by the name page gives.
func renderPages(page func(c *cobra.Command) (string, []byte)) map[string][]byte {
	app := &App{IO: IO{In: strings.NewReader(""), Out: io.Discard, Err: io.Discard}, Now: time.Now,
		Getenv: func(string) string { return "" }, Getwd: func() (string, error) { return ".", nil }}
	root := newRootCmd(app)
	root.InitDefaultHelpCmd()
	root.InitDefaultCompletionCmd()
	pages := map[string][]byte{}
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		if c.Name() == "help" {
			return
		}
		name, data := page(c)
		pages[name] = data
		for _, sub := range c.Commands() {
			walk(sub)
		}
	}
	walk(root)
	return pages
}

func docName(c *cobra.Command) string {
	return strings.ReplaceAll(c.CommandPath(), " ", "_") + ".md"
}

func commandPage(c *cobra.Command) []byte {
	var b bytes.Buffer
	fmt.Fprintf(&b, "# %s\n\n%s\n\n", c.CommandPath(), c.Short)
	if c.Runnable() {
		fmt.Fprintf(&b, "```\n%s\n```\n\n", c.UseLine())
	}
	if c.Long != "" {
		fmt.Fprintf(&b, "%s\n\n", strings.TrimSpace(c.Long))
	}
	if c.Example != "" {
		fmt.Fprintf(&b, "## Examples\n\n```\n%s\n```\n\n", strings.TrimRight(c.Example, "\n"))
	}
	writeFlags(&b, "Flags", c.NonInheritedFlags())
	writeFlags(&b, "Global flags", c.InheritedFlags())
	var subs, internal []*cobra.Command
	for _, s := range c.Commands() {
		switch {
		case s.Name() == "help":
		case s.Hidden:
			internal = append(internal, s)
		default:
			subs = append(subs, s)
		}
	}
	list := func(cmds []*cobra.Command) {
		for _, s := range cmds {
			fmt.Fprintf(&b, "- [%s](%s): %s\n", s.CommandPath(), docName(s), s.Short)
		}
		b.WriteString("\n")
	}
	if groups := c.Groups(); len(groups) > 0 {
		for _, g := range groups {
			var in []*cobra.Command
			for _, s := range subs {
				if s.GroupID == g.ID {
					in = append(in, s)
				}
			}
			fmt.Fprintf(&b, "## %s\n\n", strings.TrimSuffix(g.Title, ":"))
			list(in)
		}
	} else if len(subs) > 0 {
		b.WriteString("## Commands\n\n")
		list(subs)
	}
	if len(internal) > 0 {
		b.WriteString("## Commands kk's own configuration runs\n\n")
		list(internal)
	}
	if p := c.Parent(); p != nil {
		fmt.Fprintf(&b, "See also: [%s](%s)\n", p.CommandPath(), docName(p))
	}
	return bytes.TrimRight(b.Bytes(), "\n")
}

func writeFlags(b *bytes.Buffer, title string, fs *pflag.FlagSet) {
	var rows []string
	fs.VisitAll(func(f *pflag.Flag) {
		if f.Hidden || f.Name == "help" {
			return
		}
		name := "--" + f.Name
		if f.Shorthand != "" {
			name = "-" + f.Shorthand + ", " + name
		}
		def := ""
		if f.DefValue != "" && f.DefValue != "false" && f.DefValue != "[]" {
			def = fmt.Sprintf(" (default %s)", f.DefValue)
		}
		rows = append(rows, fmt.Sprintf("| `%s` | %s%s |", name, strings.ReplaceAll(f.Usage, "|", "\\|"), def))
	})
	if len(rows) == 0 {
		return
	}
	fmt.Fprintf(b, "## %s\n\n| flag | meaning |\n| --- | --- |\n%s\n\n", title, strings.Join(rows, "\n"))
}

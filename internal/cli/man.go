package cli

import (
	"bytes"
	"fmt"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// ManPages renders one roff manual page (section 1) per command of kk's
// command tree, keyed by file name (kk.1, kk-node.1, kk-node-write.1). They
// are committed under docs/man/, beside the markdown reference in
// docs/cli/, with the same drift test, and travel in the release archives.
//
// The help texts are plain text: paragraphs are filled, and lines that
// start with a space (examples, tables) are kept as they are.
func ManPages() map[string][]byte {
	return renderPages(func(c *cobra.Command) (string, []byte) { return manName(c) + ".1", manPage(c) })
}

func manName(c *cobra.Command) string { return strings.ReplaceAll(c.CommandPath(), " ", "-") }

func manPage(c *cobra.Command) []byte {
	var b bytes.Buffer
	fmt.Fprintf(&b, ".TH %q 1 \"\" \"kk\" \"kk manual\"\n.nh\n.ad l\n", strings.ToUpper(manName(c)))
	fmt.Fprintf(&b, ".SH NAME\n%s \\- %s\n", roffEscape(manName(c)), roffEscape(c.Short))
	if c.Runnable() {
		fmt.Fprintf(&b, ".SH SYNOPSIS\n.B %s\n", roffEscape(c.UseLine()))
	}
	if long := strings.TrimSpace(c.Long); long != "" {
		b.WriteString(".SH DESCRIPTION\n")
		roffText(&b, long)
	}
	manFlags(&b, "OPTIONS", c.NonInheritedFlags())
	manFlags(&b, "GLOBAL OPTIONS", c.InheritedFlags())
	if c.Example != "" {
		b.WriteString(".SH EXAMPLES\n.PP\n.nf\n.RS 4\n")
		for _, line := range strings.Split(strings.TrimRight(c.Example, "\n"), "\n") {
			b.WriteString(roffLine(strings.TrimPrefix(line, "  ")) + "\n")
		}
		b.WriteString(".RE\n.fi\n")
	}
	var see []string
	if p := c.Parent(); p != nil {
		see = append(see, manName(p))
	}
	for _, s := range c.Commands() {
		if !s.Hidden && s.Name() != "help" {
			see = append(see, manName(s))
		}
	}
	if len(see) > 0 {
		b.WriteString(".SH SEE ALSO\n")
		for i, s := range see {
			sep := ","
			if i == len(see)-1 {
				sep = ""
			}
			fmt.Fprintf(&b, ".BR %s (1)%s\n", roffEscape(s), sep)
		}
	}
	return b.Bytes()
}

// roffText writes plain help text: blank lines separate paragraphs, and a
// run of lines starting with a space is kept verbatim.
func roffText(b *bytes.Buffer, text string) {
	lines := strings.Split(text, "\n")
	for i := 0; i < len(lines); {
		switch {
		case strings.TrimSpace(lines[i]) == "":
			i++
		case strings.HasPrefix(lines[i], " "):
			b.WriteString(".PP\n.nf\n")
			for ; i < len(lines) && (strings.HasPrefix(lines[i], " ") || strings.TrimSpace(lines[i]) == "" && i+1 < len(lines) && strings.HasPrefix(lines[i+1], " ")); i++ {
				b.WriteString(roffLine(lines[i]) + "\n")
			}
			b.WriteString(".fi\n")
		default:
			b.WriteString(".PP\n")
			for ; i < len(lines) && strings.TrimSpace(lines[i]) != "" && !strings.HasPrefix(lines[i], " "); i++ {
				b.WriteString(roffLine(lines[i]) + "\n")
			}
		}
	}
}

func manFlags(b *bytes.Buffer, title string, fs *pflag.FlagSet) {
	var rows bytes.Buffer
	fs.VisitAll(func(f *pflag.Flag) {
		if f.Hidden {
			return
		}
		name := "\\-\\-" + roffEscape(f.Name)
		if f.Shorthand != "" {
			name = "\\-" + roffEscape(f.Shorthand) + ", " + name
		}
		varname, usage := pflag.UnquoteUsage(f)
		if varname != "" {
			name += " " + roffEscape(varname)
		}
		if f.DefValue != "" && f.DefValue != "false" && f.DefValue != "[]" {
			usage += fmt.Sprintf(" (default %s)", f.DefValue)
		}
		fmt.Fprintf(&rows, ".TP\n.B %s\n%s\n", name, roffLine(usage))
	})
	if rows.Len() > 0 {
		fmt.Fprintf(b, ".SH %s\n", title)
		b.Write(rows.Bytes())
	}
}

// roffLine escapes one line of text so that roff prints it as it is.
func roffLine(s string) string {
	s = roffEscape(s)
	if strings.HasPrefix(s, ".") || strings.HasPrefix(s, "'") {
		s = "\\&" + s
	}
	return s
}

// roffEscape escapes roff's backslash, writes "-" as the minus sign so
// that options copied from the page work in a shell, and names every
// character outside ASCII by its code point (roff input is ASCII).
func roffEscape(s string) string {
	var b strings.Builder
	for _, r := range s {
		switch {
		case r == '\\':
			b.WriteString(`\e`)
		case r == '-':
			b.WriteString(`\-`)
		case r > 0x7e:
			fmt.Fprintf(&b, `\[u%04X]`, r)
		default:
			b.WriteRune(r)
		}
	}
	return b.String()
}

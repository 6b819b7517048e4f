package cli

import (
	"io"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

func helpRoot() *cobra.Command {
	app := &App{IO: IO{In: strings.NewReader(""), Out: io.Discard, Err: io.Discard}, Now: time.Now,
		Getenv: func(string) string { return "" }, Getwd: func() (string, error) { return ".", nil }}
	root := newRootCmd(app)
	root.InitDefaultHelpCmd()
	root.InitDefaultCompletionCmd()
	return root
}

func walkCommands(c *cobra.Command, fn func(*cobra.Command)) {
	fn(c)
	for _, s := range c.Commands() {
		walkCommands(s, fn)
	}
}

// Every command that does something (a leaf) shows at least one example,
// each line indented as cobra prints it and running kk.
func TestHelpEveryLeafHasExample(t *testing.T) {
	walkCommands(helpRoot(), func(c *cobra.Command) {
		if c.HasSubCommands() || !c.Runnable() || c.Name() == "help" {
			return
		}
		if strings.TrimSpace(c.Example) == "" {
			t.Errorf("%s has no example", c.CommandPath())
			return
		}
		runs := false
		for _, line := range strings.Split(strings.TrimRight(c.Example, "\n"), "\n") {
			if line != "" && !strings.HasPrefix(line, "  ") {
				t.Errorf("%s: example line %q is not indented by two spaces", c.CommandPath(), line)
			}
			runs = runs || strings.Contains(line, "kk ")
		}
		if !runs {
			t.Errorf("%s: no example line runs kk:\n%s", c.CommandPath(), c.Example)
		}
	})
}

// A backquoted word in a flag's usage is taken by cobra (pflag.UnquoteUsage)
// as the name of the flag's value, and disappears from the sentence:
// "--no-index kk index rebuild   leave the index files alone (run  afterwards)".
func TestHelpNoBackquoteInFlagUsage(t *testing.T) {
	walkCommands(helpRoot(), func(c *cobra.Command) {
		check := func(f *pflag.Flag) {
			if strings.Contains(f.Usage, "`") {
				name, _ := pflag.UnquoteUsage(f)
				t.Errorf("%s --%s: its usage has a backquote, which help shows as the value name %q: %s", c.CommandPath(), f.Name, name, f.Usage)
			}
		}
		c.LocalFlags().VisitAll(check)
		c.PersistentFlags().VisitAll(check)
	})
}

// Every top-level command is in one of the task groups of `kk --help`, and
// every group holds a command that help shows.
func TestHelpGroupsEveryCommand(t *testing.T) {
	root := helpRoot()
	shown := map[string]int{}
	for _, c := range root.Commands() {
		if !slices.ContainsFunc(commandGroups, func(g *cobra.Group) bool { return g.ID == c.GroupID }) {
			t.Errorf("kk %s is in no help group (add it to groupOf in help.go)", c.Name())
		}
		if c.IsAvailableCommand() || c.Name() == "help" {
			shown[c.GroupID]++
		}
	}
	for _, g := range commandGroups {
		if shown[g.ID] == 0 {
			t.Errorf("help group %q shows no command", g.ID)
		}
	}
	for name := range groupOf {
		if c, _, err := root.Find([]string{name}); err != nil || c.Name() != name {
			t.Errorf("groupOf names %q, which is no command", name)
		}
	}
}

// exampleCommands splits the kk invocations out of an example line: the
// words after each "kk" that starts a command (at the line's start, or
// after |, &&, ;, $( or <( ), up to the next of those, a redirection or a
// comment. Quotes group words as the shell does.
func exampleCommands(line string) [][]string {
	var words []string // words, and the operators as words of their own
	var cur strings.Builder
	inWord, quote := false, rune(0)
	flush := func() {
		if inWord {
			words = append(words, cur.String())
			cur.Reset()
			inWord = false
		}
	}
scan:
	for _, r := range line {
		switch {
		case quote != 0:
			if r == quote {
				quote = 0
			} else {
				cur.WriteRune(r)
			}
		case r == '\'' || r == '"':
			quote, inWord = r, true
		case r == '#' && !inWord:
			break scan
		case r == ' ' || r == '\t':
			flush()
		case strings.ContainsRune("|;()&<>", r):
			flush()
			words = append(words, string(r))
		default:
			cur.WriteRune(r)
			inWord = true
		}
	}
	flush()
	var cmds [][]string
	var cmd []string
	in, atStart := false, true
	for _, w := range words {
		op := len(w) == 1 && strings.Contains("|;()&<>", w)
		switch {
		case op:
			if in {
				cmds = append(cmds, cmd)
				in = false
			}
			atStart = w != "<" && w != ">" // a redirection's target is a file
		case in:
			cmd = append(cmd, w)
		case atStart && w == "kk":
			in, cmd = true, nil
		default:
			atStart = false
		}
	}
	if in {
		cmds = append(cmds, cmd)
	}
	return cmds
}

// Every kk command line in an example names a command that exists and only
// flags it takes.
func TestHelpExamplesParse(t *testing.T) {
	if got := exampleCommands(`cat x | kk validate a - && kk b --c "d e" > f # kk nope`); len(got) != 2 || strings.Join(got[1], ",") != "b,--c,d e" {
		t.Fatalf("exampleCommands: %q", got)
	}
	walkCommands(helpRoot(), func(c *cobra.Command) {
		for _, line := range strings.Split(c.Example, "\n") {
			for _, args := range exampleCommands(line) {
				root := helpRoot()
				found, rest, err := root.Find(args)
				if err != nil {
					t.Errorf("%s: example %q: %v", c.CommandPath(), line, err)
					continue
				}
				if found.HasSubCommands() && len(rest) > 0 && !strings.HasPrefix(rest[0], "-") {
					t.Errorf("%s: example %q: %s has no subcommand %q", c.CommandPath(), line, found.CommandPath(), rest[0])
					continue
				}
				if err := found.ParseFlags(rest); err != nil {
					t.Errorf("%s: example %q: %v", c.CommandPath(), line, err)
				}
			}
		}
	})
}

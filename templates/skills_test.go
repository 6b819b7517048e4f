// The skills and prompts are checked from outside the package: the command
// tree they are checked against lives in internal/cli, which imports this
// package (through internal/kb).
package templates_test

import (
	"fmt"
	"io/fs"
	"path"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/kk-project/kk/internal/cli"
	"github.com/kk-project/kk/internal/frontmatter"
	"github.com/kk-project/kk/internal/schema"
	"github.com/kk-project/kk/templates"
)

var (
	wantSkills  = []string{"kk-add", "kk-bootstrap", "kk-curate", "kk-graph", "kk-migrate", "kk-phrasings", "kk-session-extract"}
	wantPrompts = []string{"knowledge-admission.md", "proposal-extract.md", "sub-agent-delegation.md"}
)

const transcriptPlaceholder = "[TRANSCRIPT PLACEHOLDER, substituted at runtime]"

func TestSkillsParse(t *testing.T) {
	entries, err := fs.ReadDir(templates.Skills, "skills")
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	if !slices.Equal(names, wantSkills) {
		t.Fatalf("skills/ holds %v, want %v", names, wantSkills)
	}
	for _, name := range wantSkills {
		file := "skills/" + name + "/SKILL.md"
		src, err := fs.ReadFile(templates.Skills, file)
		if err != nil {
			t.Errorf("%s: %v", file, err)
			continue
		}
		for _, msg := range checkSkill(name, src) {
			t.Errorf("%s: %s", file, msg)
		}
	}
}

// checkSkill checks a skill's front matter and that it has steps.
func checkSkill(folder string, src []byte) []string {
	if !strings.HasPrefix(string(src), "---\n") {
		return []string{"does not start with a --- front matter block"}
	}
	doc, err := frontmatter.Parse(src)
	if err != nil {
		return []string{frontmatter.Describe(err)}
	}
	var msgs []string
	if keys := doc.Keys(); !slices.Equal(keys, []string{"name", "description", "version"}) {
		msgs = append(msgs, fmt.Sprintf("front matter keys are %v, want [name description version]", keys))
	}
	if v, _ := doc.Value("name"); v != folder {
		msgs = append(msgs, fmt.Sprintf("name is %v, want the folder name %q", v, folder))
	}
	desc, _ := doc.Value("description")
	if s, ok := desc.(string); !ok || strings.TrimSpace(s) == "" || strings.ContainsAny(s, "\r\n") {
		msgs = append(msgs, fmt.Sprintf("description must be one non-empty line, got %#v", desc))
	}
	if v, _ := doc.Value("version"); v != int64(1) {
		msgs = append(msgs, fmt.Sprintf("version is %#v, want 1", v))
	}
	body := string(doc.Body())
	if !regexp.MustCompile(`(?m)^1\. `).MatchString(body) || !regexp.MustCompile(`(?m)^2\. `).MatchString(body) {
		msgs = append(msgs, "body has no numbered steps")
	}
	return msgs
}

func TestSkillPromptsShipped(t *testing.T) {
	entries, err := fs.ReadDir(templates.Prompts, "prompts")
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	if !slices.Equal(names, wantPrompts) {
		t.Fatalf("prompts/ holds %v, want %v", names, wantPrompts)
	}
	for _, name := range wantPrompts {
		src, err := fs.ReadFile(templates.Prompts, "prompts/"+name)
		if err != nil {
			t.Fatal(err)
		}
		if len(strings.TrimSpace(string(src))) < 500 {
			t.Errorf("prompts/%s is nearly empty", name)
		}
		if !strings.HasSuffix(string(src), "\n") {
			t.Errorf("prompts/%s does not end with a newline", name)
		}
	}
	src, _ := fs.ReadFile(templates.Prompts, "prompts/proposal-extract.md")
	if msg := checkPlaceholder(string(src)); msg != "" {
		t.Errorf("prompts/proposal-extract.md: %s", msg)
	}
}

// checkPlaceholder checks that the extraction prompt ends with the line the
// transcript replaces, and holds it only there.
func checkPlaceholder(src string) string {
	lines := strings.Split(strings.TrimRight(src, "\n"), "\n")
	if last := lines[len(lines)-1]; last != transcriptPlaceholder {
		return fmt.Sprintf("last line is %q, want %q", last, transcriptPlaceholder)
	}
	if n := strings.Count(src, transcriptPlaceholder); n != 1 {
		return fmt.Sprintf("holds the placeholder %d times, want once", n)
	}
	return ""
}

// TestSkillPromptExamplesValid checks that the output examples the
// extraction prompt shows (its lines holding one JSON object) match the
// proposal-output schema the model's answer is validated against.
func TestSkillPromptExamplesValid(t *testing.T) {
	src, err := fs.ReadFile(templates.Prompts, "prompts/proposal-extract.md")
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for i, line := range strings.Split(string(src), "\n") {
		if !strings.HasPrefix(line, "{") {
			continue
		}
		n++
		doc, err := schema.ParseDocument([]byte(line))
		if err == nil {
			err = schema.Validate("proposal-output", doc)
		}
		if err != nil {
			t.Errorf("prompts/proposal-extract.md:%d: example is not valid proposal-output: %v", i+1, err)
		}
	}
	if n < 2 {
		t.Errorf("prompts/proposal-extract.md shows %d output examples, want one with candidates and the empty one", n)
	}
}

func TestSkillPlaceholderCheck(t *testing.T) {
	for src, ok := range map[string]bool{
		"text\n\n" + transcriptPlaceholder + "\n":                                  true,
		"text\n" + transcriptPlaceholder + "\nmore\n":                              false,
		transcriptPlaceholder + "\n" + transcriptPlaceholder + "\n":                false,
		"text\n[TRANSCRIPT PLACEHOLDER]\n":                                         false,
		"text\n  " + transcriptPlaceholder + "\n":                                  false,
		"text\n" + transcriptPlaceholder + " and trailing words\n":                 false,
		"text\n" + strings.ToLower(transcriptPlaceholder) + "\n":                   false,
		"text with " + transcriptPlaceholder + " inline\n" + transcriptPlaceholder: false,
	} {
		if got := checkPlaceholder(src) == ""; got != ok {
			t.Errorf("checkPlaceholder(%q) ok = %v, want %v", src, got, ok)
		}
	}
}

func TestSkillFrontMatterCheck(t *testing.T) {
	good := "---\nname: kk-x\ndescription: Do x.\nversion: 1\n---\n\n1. a\n2. b\n"
	if msgs := checkSkill("kk-x", []byte(good)); len(msgs) != 0 {
		t.Fatalf("good skill rejected: %v", msgs)
	}
	for _, bad := range []string{
		"name: kk-x\n",
		"---\nname: kk-y\ndescription: Do x.\nversion: 1\n---\n\n1. a\n2. b\n",
		"---\nname: kk-x\ndescription: ''\nversion: 1\n---\n\n1. a\n2. b\n",
		"---\nname: kk-x\ndescription: |\n  two\n  lines\nversion: 1\n---\n\n1. a\n2. b\n",
		"---\nname: kk-x\ndescription: Do x.\n---\n\n1. a\n2. b\n",
		"---\nname: kk-x\ndescription: Do x.\nversion: '1'\n---\n\n1. a\n2. b\n",
		"---\nname: kk-x\ndescription: Do x.\nversion: 1\nextra: y\n---\n\n1. a\n2. b\n",
		"---\nname: kk-x\ndescription: Do x.\nversion: 1\n---\n\nno steps\n",
	} {
		if msgs := checkSkill("kk-x", []byte(bad)); len(msgs) == 0 {
			t.Errorf("bad skill accepted:\n%s", bad)
		}
	}
}

// TestSkillCommandsExist checks every kk command line in the code of the
// skills and prompts against kk's real command tree: each must name a
// command that exists and only flags that command accepts.
func TestSkillCommandsExist(t *testing.T) {
	tree := cli.CommandFlags()
	checked := 0
	for _, fsys := range []fs.FS{templates.Skills, templates.Prompts} {
		err := fs.WalkDir(fsys, ".", func(p string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() || path.Ext(p) != ".md" {
				return err
			}
			src, err := fs.ReadFile(fsys, p)
			if err != nil {
				return err
			}
			for _, sn := range codeSnippets(string(src)) {
				for _, args := range kkCommands(sn.text) {
					checked++
					if err := checkCommand(args, tree); err != nil {
						t.Errorf("%s:%d: %v\n\tin: %s", p, sn.line, err, sn.text)
					}
				}
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	t.Logf("checked %d kk command lines", checked)
	if checked < 50 {
		t.Errorf("found only %d kk command lines in the skills and prompts; the extractor is missing them", checked)
	}
}

// TestSkillCommandChecker shows that the checker catches what it is for and
// tolerates what it must.
func TestSkillCommandChecker(t *testing.T) {
	tree := map[string][]string{
		"kk":                {"--help", "--json", "--root=", "-h"},
		"kk node":           {"--help", "--json", "--root=", "-h"},
		"kk node write":     {"--help", "--input=", "--json", "--no-index", "--root=", "--tags=", "-h"},
		"kk lint":           {"--help", "--json", "--root=", "--verbose", "-h", "-v"},
		"kk validate":       {"--help", "--json", "--root=", "-h"},
		"kk drafts":         {"--help", "--json", "--root=", "-h"},
		"kk drafts collect": {"--help", "--json", "--root=", "--run-id=", "-h"},
	}
	cases := []struct {
		name, md string
		want     []string // one error substring per failing command, in order
	}{
		{"good fenced", "```\nkk node write practice x --tags a,b --no-index < body.md\nkk lint -v\n```\n", nil},
		{"unknown command", "```\nkk nodes list\n```\n", []string{`unknown command "kk nodes"`}},
		{"unknown subcommand", "Run `kk node delete x`.\n", []string{`unknown command "kk node delete"`}},
		{"unknown flag", "```\nkk lint --fix\n```\n", []string{`"kk lint" has no flag --fix`}},
		{"unknown shorthand", "`kk lint -x`", []string{`"kk lint" has no flag -x`}},
		{"flag of another command", "`kk lint --tags a`", []string{`"kk lint" has no flag --tags`}},
		{"flag with =", "`kk node write practice x --tags=a --titel=b`", []string{`has no flag --titel`}},
		{"bool flag given a value", "`kk lint --verbose=true`", nil},
		{"placeholders", "`kk node write <type> <slug> --input <file> --no-index`\n`kk <command> --help`\n", nil},
		{"placeholder with spaces", "`kk validate curator-output <the file> --json`", nil},
		{"optional syntax", "`kk lint [--verbose] [-v]`", nil},
		{"global flag before command", "`kk --root /repo node write x y --no-index`\n`kk --json lint`", nil},
		{"value of a global flag is not a command", "`kk --root node write`", []string{`unknown command "kk write"`}},
		{"pipes and substitution", "```\nID=$(kk drafts collect --run-id r1 | jq length) && kk lint --bogus\n```\n", []string{"has no flag --bogus"}},
		{"quoted pipe", "`kk node write x y --tags \"a|b\" --nope`", []string{"has no flag --nope"}},
		{"redirect", "`kk drafts collect --run-id r > out.json --not-a-flag-of-kk`", nil},
		{"heredoc body skipped", "```\nkk node write practice x --no-index <<'EOF'\nkk lint --fix\nEOF\nkk lint --fix\n```\n", []string{"has no flag --fix"}},
		{"line continuation", "```\nkk node write practice x \\\n  --tags a --wrong\n```\n", []string{"has no flag --wrong"}},
		{"prose is not code", "Run kk lint --fix by hand.\n", nil},
		{"not a command position", "```\necho kk lint --fix\n{\"note\": \"kk lint --fix\"}\n```\n", nil},
		{"skill names are not commands", "Use `kk-curate`, then `kk_id`.\n", nil},
		{"double-backtick span", "``kk lint --fix``", []string{"has no flag --fix"}},
		{"span over two lines", "Run `kk lint\n--fix` now.", []string{"has no flag --fix"}},
		{"dollar prompt", "```\n$ kk lint --fix\n```\n", []string{"has no flag --fix"}},
	}
	for _, c := range cases {
		t.Run(strings.ReplaceAll(c.name, " ", "_"), func(t *testing.T) {
			var got []error
			for _, sn := range codeSnippets(c.md) {
				for _, args := range kkCommands(sn.text) {
					if err := checkCommand(args, tree); err != nil {
						got = append(got, err)
					}
				}
			}
			if len(got) != len(c.want) {
				t.Fatalf("got errors %v, want %d matching %q", got, len(c.want), c.want)
			}
			for i, w := range c.want {
				if !strings.Contains(got[i].Error(), w) {
					t.Errorf("error %d is %q, want it to contain %q", i, got[i], w)
				}
			}
		})
	}
}

func TestSkillSnippetLines(t *testing.T) {
	md := "# T\n\nRun `kk a`.\n\n```sh\nkk b \\\n  --c\ncat <<EOF\nkk d\nEOF\nkk e\n```\n\nThen ``kk f`` and\n`kk\ng`.\n"
	var got []string
	for _, sn := range codeSnippets(md) {
		got = append(got, fmt.Sprintf("%d:%s", sn.line, sn.text))
	}
	want := []string{"6:kk b    --c", "8:cat <<EOF", "11:kk e", "3:kk a", "14:kk f", "15:kk g"}
	if !slices.Equal(got, want) {
		t.Errorf("codeSnippets = %q, want %q", got, want)
	}
}

// TestCommandFlagsTree checks the command tree the skills are checked
// against: real commands, their own and inherited flags, and which flags
// take a value.
func TestCommandFlagsTree(t *testing.T) {
	tree := cli.CommandFlags()
	for cmd, want := range map[string][]string{
		"kk":                        {"--quiet", "-q", "--root=", "--help", "--version"},
		"kk node write":             {"--input=", "--no-index", "--update", "--json", "--root="},
		"kk curate-dedup":           {"--input=", "--output=", "--run-id=", "--session-id="},
		"kk session-log stage-live": {"--generate-session-id", "--session-id=", "--transcript-excerpt="},
		"kk lint":                   {"--verbose", "-v"},
		"kk init":                   {"--upgrade", "-u"},
	} {
		flags, ok := tree[cmd]
		if !ok {
			t.Errorf("no command %q in the tree", cmd)
			continue
		}
		for _, f := range want {
			if !slices.Contains(flags, f) {
				t.Errorf("%q flags %v lack %s", cmd, flags, f)
			}
		}
		if !slices.IsSorted(flags) {
			t.Errorf("%q flags %v are not sorted", cmd, flags)
		}
	}
	for _, cmd := range []string{"kk help", "kk completion", "kk node write --input"} {
		if _, ok := tree[cmd]; ok {
			t.Errorf("the tree lists %q", cmd)
		}
	}
	// --json only where a command prints data.
	for _, cmd := range []string{"kk", "kk mcp", "kk hook", "kk curate", "kk node"} {
		if slices.Contains(tree[cmd], "--json") {
			t.Errorf("%q has --json but prints no data", cmd)
		}
	}
}

// A snippet is the text of one shell line in a fenced code block, or of
// one inline code span, with the line it starts on.
type snippet struct {
	line int
	text string
}

var (
	fenceRE   = regexp.MustCompile("^\\s*(```+|~~~+)")
	heredocRE = regexp.MustCompile(`<<-?\s*['"]?([A-Za-z_][A-Za-z0-9_]*)['"]?`)
)

// codeSnippets returns the code of a markdown document: each logical line
// of its fenced blocks (continuation lines joined, heredoc bodies left
// out) and each inline code span outside them.
func codeSnippets(md string) []snippet {
	var out []snippet
	lines := strings.Split(md, "\n")
	var prose []string // the document with fenced blocks blanked, to keep line numbers
	fence := ""
	heredoc := ""
	pending, pendingLine := "", 0
	for i, l := range lines {
		if fence == "" {
			if m := fenceRE.FindStringSubmatch(l); m != nil {
				fence = m[1]
				prose = append(prose, "")
				continue
			}
			prose = append(prose, l)
			continue
		}
		prose = append(prose, "")
		if heredoc != "" {
			if strings.TrimSpace(l) == heredoc {
				heredoc = ""
			}
			continue
		}
		if m := fenceRE.FindStringSubmatch(l); m != nil && m[1][0] == fence[0] && len(m[1]) >= len(fence) && strings.TrimSpace(l) == m[1] {
			fence = ""
			if pending != "" {
				out = append(out, snippet{pendingLine, pending})
				pending = ""
			}
			continue
		}
		if pending == "" {
			pendingLine = i + 1
		}
		if t, ok := strings.CutSuffix(strings.TrimRight(l, " \t"), "\\"); ok {
			pending += t + " "
			continue
		}
		text := pending + l
		pending = ""
		out = append(out, snippet{pendingLine, text})
		if m := heredocRE.FindStringSubmatch(text); m != nil {
			heredoc = m[1]
		}
	}
	return append(out, inlineSpans(strings.Join(prose, "\n"))...)
}

// inlineSpans returns the inline code spans of markdown text: a run of n
// backticks up to the next run of exactly n, within one paragraph.
func inlineSpans(text string) []snippet {
	var out []snippet
	line := 1
	for i := 0; i < len(text); {
		if text[i] == '\n' {
			line++
			i++
			continue
		}
		if text[i] != '`' {
			i++
			continue
		}
		n := 0
		for i+n < len(text) && text[i+n] == '`' {
			n++
		}
		start := i + n
		end := -1
		for j := start; j < len(text); {
			if strings.HasPrefix(text[j:], "\n\n") {
				break
			}
			if text[j] != '`' {
				j++
				continue
			}
			m := 0
			for j+m < len(text) && text[j+m] == '`' {
				m++
			}
			if m == n {
				end = j
				break
			}
			j += m
		}
		if end < 0 {
			i = start
			continue
		}
		code := text[start:end]
		out = append(out, snippet{line, strings.TrimSpace(strings.ReplaceAll(code, "\n", " "))})
		line += strings.Count(code, "\n")
		i = end + n
	}
	return out
}

var assignRE = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*=`)

// kkCommands splits a line of shell into simple commands and returns the
// words of those that run kk (the words after "kk").
func kkCommands(line string) [][]string {
	var out [][]string
	for _, words := range splitShell(line) {
		// Skip a "$ " prompt and VAR=value assignments before the
		// command (VAR=$(kk …) was split at "$(" already).
		for len(words) > 0 && (words[0] == "$" || assignRE.MatchString(words[0])) {
			words = words[1:]
		}
		if len(words) > 0 && words[0] == "kk" {
			out = append(out, words[1:])
		}
	}
	return out
}

// splitShell splits a line of shell into simple commands at unquoted |,
// ||, &&, ;, &, $(, ( and ) and backticks, and each command into words
// with their quotes removed. A | inside a word (done|failed) is kept as
// text. <placeholders> with spaces stay one word.
func splitShell(s string) [][]string {
	var cmds [][]string
	var words []string
	var w strings.Builder
	inWord := false
	endWord := func() {
		if inWord {
			words = append(words, w.String())
			w.Reset()
			inWord = false
		}
	}
	endCmd := func() {
		endWord()
		if len(words) > 0 {
			cmds = append(cmds, words)
		}
		words = nil
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '\'' || c == '"':
			j := strings.IndexByte(s[i+1:], c)
			if j < 0 {
				j = len(s) - i - 1
			}
			w.WriteString(s[i+1 : i+1+j])
			inWord = true
			i += j + 1
		case c == ' ' || c == '\t':
			endWord()
		case c == '|':
			if inWord && i+1 < len(s) && s[i+1] != ' ' && s[i+1] != '|' {
				w.WriteByte(c)
				continue
			}
			endCmd()
			if i+1 < len(s) && s[i+1] == '|' {
				i++
			}
		case c == '&':
			if inWord && strings.HasSuffix(w.String(), ">") { // 2>&1
				w.WriteByte(c)
				continue
			}
			endCmd()
			if i+1 < len(s) && s[i+1] == '&' {
				i++
			}
		case c == ';' || c == '(' || c == ')' || c == '`':
			endCmd()
		case c == '$' && i+1 < len(s) && s[i+1] == '(':
			endCmd()
			i++
		case c == '<' && i+1 < len(s) && isLetter(s[i+1]):
			// A <placeholder>, possibly with spaces, is one word.
			if j := strings.IndexByte(s[i:], '>'); j > 0 && !strings.ContainsAny(s[i+1:i+j], "<|;&") {
				w.WriteString(s[i : i+j+1])
				inWord = true
				i += j
				continue
			}
			w.WriteByte(c)
			inWord = true
		default:
			w.WriteByte(c)
			inWord = true
		}
	}
	endCmd()
	return cmds
}

func isLetter(c byte) bool { return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' }

var (
	outRedirectRE = regexp.MustCompile(`^[0-9&]?>`)
	numberRE      = regexp.MustCompile(`^-[0-9]`)
)

// opaque reports whether a word stands for something filled in later (a
// <placeholder>, a shell variable, an ellipsis), so it cannot be checked.
func opaque(w string) bool {
	return strings.ContainsAny(w, "<>$") || strings.Contains(w, "…") || strings.Contains(w, "...")
}

// checkCommand checks the words after "kk" against the command tree (see
// cli.CommandFlags): the words that pick the command must name existing
// commands, and every flag must be one that command accepts. It stops at
// a heredoc or an output redirection, skips input redirections and flag
// values, and cannot check a command named by a placeholder.
func checkCommand(args []string, tree map[string][]string) error {
	hasChildren := func(p string) bool {
		for k := range tree {
			if strings.HasPrefix(k, p+" ") {
				return true
			}
		}
		return false
	}
	cmd := "kk"
	resolving := true
	var flags []string
	for i := 0; i < len(args); i++ {
		a := strings.TrimRight(strings.TrimLeft(args[i], "["), "]")
		switch {
		case a == "" || strings.HasPrefix(a, "<<") || outRedirectRE.MatchString(a):
			if a == "" {
				continue
			}
			i = len(args) // the rest is a heredoc or a redirection
			continue
		case a == "<":
			i++ // the file read on standard input
			continue
		case a == "--":
			i = len(args)
			continue
		case strings.HasPrefix(a, "-") && a != "-" && !numberRE.MatchString(a):
			flags = append(flags, a)
			// A flag that takes a value and has no "=value" consumes the
			// next word, whatever it looks like (--input -).
			if takesValue(a, tree[cmd]) {
				i++
			}
			continue
		}
		if resolving && hasChildren(cmd) {
			if _, ok := tree[cmd+" "+a]; ok {
				cmd += " " + a
				continue
			}
			if opaque(a) {
				return nil
			}
			return fmt.Errorf("unknown command %q", cmd+" "+a)
		}
		resolving = false
	}
	known := tree[cmd]
	for _, f := range flags {
		var names []string
		if strings.HasPrefix(f, "--") {
			name, _, _ := strings.Cut(f, "=")
			names = []string{name}
		} else {
			for _, c := range strings.TrimPrefix(strings.SplitN(f, "=", 2)[0], "-") {
				names = append(names, "-"+string(c))
			}
		}
		for _, n := range names {
			if !slices.Contains(known, n) && !slices.Contains(known, n+"=") {
				return fmt.Errorf("%q has no flag %s", cmd, n)
			}
		}
	}
	return nil
}

// takesValue reports whether flag f (as written, maybe with "=value") is
// one of known that takes a separate value word.
func takesValue(f string, known []string) bool {
	if strings.Contains(f, "=") {
		return false
	}
	if !strings.HasPrefix(f, "--") && len(f) > 2 {
		f = "-" + f[len(f)-1:] // -xv: the last shorthand may take the value
	}
	return slices.Contains(known, f+"=")
}

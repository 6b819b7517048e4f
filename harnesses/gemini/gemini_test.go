package gemini

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/kk-project/kk/internal/harness"
	"github.com/kk-project/kk/internal/harness/harnesstest"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata/golden")

func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	harnesstest.Golden(t, filepath.Join("testdata", "golden", name), got, *update)
}

func writeFile(t *testing.T, p string, data string) {
	t.Helper()
	harnesstest.WriteFile(t, p, []byte(data))
}

// The doctor check levels.
const (
	levelOK    = harness.LevelOK
	levelWarn  = harness.LevelWarn
	levelError = harness.LevelError
)

// The shared helpers, under the names the tests use.
var (
	readFile = harnesstest.ReadFile
	tree     = harnesstest.Tree

	shippedSkills = harnesstest.ShippedSkills
	rawJSON       = harness.RawJSON
)

func opts(root string) harness.InstallOptions {
	return harness.InstallOptions{Root: root, Command: "kk", Skills: shippedSkills()}
}

// validateSettings checks a settings.json against the vendored excerpt of
// Gemini CLI's settings schema, and kk's entries against the hook
// reference (a command hook needs type "command" and a command).
func validateSettings(t *testing.T, data []byte) {
	t.Helper()
	schemaDoc, err := jsonschema.UnmarshalJSON(bytes.NewReader(readFile(t, "testdata/settings.schema.json")))
	if err != nil {
		t.Fatal(err)
	}
	c := jsonschema.NewCompiler()
	const url = "https://raw.githubusercontent.com/google-gemini/gemini-cli/main/schemas/settings.schema.json"
	if err := c.AddResource(url, schemaDoc); err != nil {
		t.Fatal(err)
	}
	sch, err := c.Compile(url)
	if err != nil {
		t.Fatal(err)
	}
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	if err := sch.Validate(doc); err != nil {
		t.Errorf("settings do not match Gemini's schema: %v\n%s", err, data)
	}
	var s struct {
		Hooks map[string]json.RawMessage `json:"hooks"`
	}
	if err := json.Unmarshal(data, &s); err != nil {
		t.Fatal(err)
	}
	for ev, raw := range s.Hooks {
		var groups []struct {
			Hooks []map[string]any `json:"hooks"`
		}
		if json.Unmarshal(raw, &groups) != nil {
			continue
		}
		for _, g := range groups {
			for _, h := range g.Hooks {
				if h["type"] != "command" || h["command"] == "" {
					t.Errorf("%s: hook %v is not a command hook", ev, h)
				}
			}
		}
	}
}

// keepsUser checks that every key and hook of user is in merged, unchanged.
func keepsUser(t *testing.T, user, merged []byte) {
	t.Helper()
	var u, m map[string]any
	if err := json.Unmarshal(user, &u); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(merged, &m); err != nil {
		t.Fatal(err)
	}
	for k, v := range u {
		if k == "hooks" {
			continue
		}
		if !reflect.DeepEqual(m[k], v) {
			t.Errorf("user key %q changed: %v", k, m[k])
		}
	}
	uh, mh := u["hooks"].(map[string]any), m["hooks"].(map[string]any)
	for ev, groups := range uh {
		got, _ := mh[ev].([]any)
		for i, g := range groups.([]any) {
			if i >= len(got) || !reflect.DeepEqual(got[i], g) {
				t.Errorf("user hook group %s[%d] changed", ev, i)
			}
		}
	}
}

// parseTOML reads the subset of TOML kk writes: comments, blank lines and
// key = value lines whose value is a basic, literal or multi-line string.
func parseTOML(t *testing.T, src string) map[string]string {
	t.Helper()
	out := map[string]string{}
	for len(src) > 0 {
		src = strings.TrimLeft(src, " \t\r\n")
		if src == "" {
			break
		}
		if src[0] == '#' {
			i := strings.IndexByte(src, '\n')
			if i < 0 {
				break
			}
			src = src[i+1:]
			continue
		}
		eq := strings.Index(src, " = ")
		if eq < 0 {
			t.Fatalf("no key = value at %q", src)
		}
		key := src[:eq]
		src = src[eq+3:]
		var val string
		switch {
		case strings.HasPrefix(src, "'''"):
			src = strings.TrimPrefix(strings.TrimPrefix(src[3:], "\r"), "\n")
			end := strings.Index(src, "'''")
			if end < 0 {
				t.Fatalf("unclosed ''' for %s", key)
			}
			val, src = src[:end], src[end+3:]
		case strings.HasPrefix(src, `"""`):
			src = strings.TrimPrefix(src[3:], "\n")
			val, src = basicString(t, src, `"""`)
		case strings.HasPrefix(src, `"`):
			val, src = basicString(t, src[1:], `"`)
		default:
			t.Fatalf("unexpected value for %s: %q", key, src)
		}
		if _, dup := out[key]; dup {
			t.Fatalf("duplicate key %s", key)
		}
		out[key] = val
		if i := strings.IndexByte(src, '\n'); i >= 0 {
			if rest := strings.TrimSpace(src[:i]); rest != "" {
				t.Fatalf("text after the value of %s: %q", key, rest)
			}
			src = src[i+1:]
		} else if strings.TrimSpace(src) != "" {
			t.Fatalf("text after the value of %s: %q", key, src)
		} else {
			src = ""
		}
	}
	return out
}

// basicString decodes escapes up to the closing delimiter and returns the
// value and the rest.
func basicString(t *testing.T, s, closing string) (string, string) {
	t.Helper()
	var b strings.Builder
	for i := 0; i < len(s); {
		if strings.HasPrefix(s[i:], closing) {
			return b.String(), s[i+len(closing):]
		}
		c := s[i]
		if closing == `"` && (c == '\n' || c == '\r') {
			t.Fatalf("newline in a one-line string")
		}
		if c < 0x20 && c != '\t' && c != '\n' && (closing == `"` || c != '\r' || !strings.HasPrefix(s[i:], "\r\n")) {
			t.Fatalf("raw control character %#x in a basic string", c)
		}
		if c != '\\' {
			b.WriteByte(c)
			i++
			continue
		}
		if i+1 >= len(s) {
			t.Fatal("dangling backslash")
		}
		switch e := s[i+1]; e {
		case '"', '\\':
			b.WriteByte(e)
		case 'b':
			b.WriteByte('\b')
		case 't':
			b.WriteByte('\t')
		case 'n':
			b.WriteByte('\n')
		case 'f':
			b.WriteByte('\f')
		case 'r':
			b.WriteByte('\r')
		case 'u':
			var r rune
			for _, h := range s[i+2 : i+6] {
				r = r*16 + rune(strings.IndexRune("0123456789ABCDEF", h))
			}
			b.WriteRune(r)
			i += 4
		default:
			t.Fatalf("unknown escape \\%c", e)
		}
		i += 2
	}
	t.Fatalf("unclosed %s string", closing)
	return "", ""
}

// BenchmarkParseTranscript parses a 5 MB chat recording (the capture
// budget is 200 ms for a transcript that size).
func BenchmarkParseTranscript(b *testing.B) {
	var sb strings.Builder
	text := strings.Repeat("word ", 400)
	sb.WriteString(`{"sessionId":"s","projectHash":"h","startTime":"2026-11-20T10:00:00.000Z"}` + "\n")
	for i := 0; sb.Len() < 5<<20; i++ {
		fmt.Fprintf(&sb, `{"id":"u%d","type":"user","content":[{"text":%q}]}`+"\n", i, text)
		fmt.Fprintf(&sb, `{"id":"g%d","type":"gemini","content":"","toolCalls":[{"id":"c%d","name":"read_file","args":{"file_path":"docs/f%d.md"}}]}`+"\n", i, i, i)
		fmt.Fprintf(&sb, `{"id":"g%d","type":"gemini","content":%q,"toolCalls":[{"id":"c%d","name":"read_file","args":{"file_path":"docs/f%d.md"}}]}`+"\n", i, text, i, i)
		sb.WriteString(`{"$set":{"lastUpdated":"2026-11-20T10:00:01.000Z"}}` + "\n")
	}
	data := sb.String()
	b.SetBytes(int64(len(data)))
	for b.Loop() {
		if _, err := New().ParseTranscript(strings.NewReader(data)); err != nil {
			b.Fatal(err)
		}
	}
}

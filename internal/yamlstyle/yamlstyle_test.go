package yamlstyle

import (
	"math"
	"strings"
	"testing"
	"time"
)

// The summary example below was written by the JS tool (gray-matter 4.0.3 /
// js-yaml 3.14); it pins down folding at width 78 for top-level values.
const summary = "Use the messenger service for status, warning, and error notices; use logging for backend diagnostics."

// Expected outputs were derived by hand from js-yaml 3.14.1's dumper.js and
// cross-checked against a transcription of it running under node.
var scalarTests = []struct {
	name string
	in   any
	want string // the text after "k:"
}{
	// plain
	{"plain word", "hello", " hello"},
	{"plain sentence", "hello world again", " hello world again"},
	{"plain unicode", "héllo wörld 中文", " héllo wörld 中文"},
	{"plain inner quote", "it's", " it's"},
	{"plain inner hash", "a#b", " a#b"},
	{"plain inner dash", "a - b", " a - b"},
	{"plain dot", "v1.2.3", " v1.2.3"},
	{"plain tilde inside", "a~b", " a~b"},

	// single quoting
	{"empty", "", " ''"},
	{"colon space", "a: b", " 'a: b'"},
	{"colon no space", "a:b", " 'a:b'"},
	{"url", "https://example.com/x", " 'https://example.com/x'"},
	{"space hash", "a #b", " 'a #b'"},
	{"leading hash", "#a", " '#a'"},
	{"comma", "a,b", " 'a,b'"},
	{"comma space", "a, b", " 'a, b'"},
	{"brackets", "a[0]", " 'a[0]'"},
	{"braces", "a{b}", " 'a{b}'"},
	{"leading space", " a", " ' a'"},
	{"trailing space", "a ", " 'a '"},
	{"only space", " ", " ' '"},
	{"quote doubled", "'x' y", " '''x'' y'"},
	{"double quote first", `"x"`, ` '"x"'`},

	// leading indicators
	{"dash", "-a", " '-a'"},
	{"lone dash", "-", " '-'"},
	{"question", "?a", " '?a'"},
	{"colon first", ":a", " ':a'"},
	{"amp", "&a", " '&a'"},
	{"star", "*a", " '*a'"},
	{"bang", "!a", " '!a'"},
	{"pipe", "|a", " '|a'"},
	{"gt", ">a", " '>a'"},
	{"equals", "=a", " '=a'"},
	{"percent", "%a", " '%a'"},
	{"at", "@a", " '@a'"},
	{"backtick", "`a`", " '`a`'"},
	{"open bracket", "[a", " '[a'"},
	{"open brace", "{a", " '{a'"},

	// strings that would read back as another type
	{"true", "true", " 'true'"},
	{"False", "False", " 'False'"},
	{"null", "null", " 'null'"},
	{"Null", "Null", " 'Null'"},
	{"tilde", "~", " '~'"},
	{"int", "42", " '42'"},
	{"negative int", "-42", " '-42'"},
	{"plus int", "+42", " '+42'"},
	{"zero", "0", " '0'"},
	{"octal", "0755", " '0755'"},
	{"hex", "0x1F", " '0x1F'"},
	{"binary", "0b101", " '0b101'"},
	{"underscored", "1_000", " '1_000'"},
	{"base60", "1:30", " '1:30'"},
	{"float", "1.0", " '1.0'"},
	{"float exp", "1e5", " '1e5'"},
	{"float dot first", ".5", " '.5'"},
	{"float trailing dot", "1.", " '1.'"},
	{"inf", ".inf", " '.inf'"},
	{"nan", ".NaN", " '.NaN'"},
	{"date", "2024-01-02", " '2024-01-02'"},
	{"iso timestamp", "2026-05-01T10:00:00.000Z", " '2026-05-01T10:00:00.000Z'"},
	{"spaced timestamp", "2001-12-14 21:59:43.10 -5", " '2001-12-14 21:59:43.10 -5'"},
	{"merge", "<<", " '<<'"},
	{"yes", "yes", " 'yes'"},
	{"No", "No", " 'No'"},
	{"y", "y", " 'y'"},
	{"OFF", "OFF", " 'OFF'"},

	// js-yaml 3 does not treat these as numbers, so they stay plain
	{"yaml12 octal", "0o17", " 0o17"},
	{"signed dot float", "+.5", " +.5"},
	{"trailing underscore", "1_", " 1_"},
	{"leading underscore", "_1", " _1"},
	{"bad octal", "09", " 09"},
	{"upper hex prefix", "0X1F", " 0X1F"},
	{"short date", "2024-1-2", " 2024-1-2"},
	{"yes with space", "yes sir", " yes sir"},
	{"NULL-ish", "nULL", " nULL"},

	// double quoting
	{"tab", "a\tb", ` "a\tb"`},
	{"carriage return", "a\rb", ` "a\rb"`},
	{"nul", "\x00", ` "\0"`},
	{"bell", "\a", ` "\a"`},
	{"escape", "\x1b[0m", ` "\e[0m"`},
	{"control", "\x01", ` "\x01"`},
	{"delete", "\x7f", ` "\x7F"`},
	{"nel", "a\u0085b", ` "a\Nb"`},
	{"nbsp", "a\u00a0b", ` "a\_b"`},
	{"line separator", "a\u2028b", ` "a\Lb"`},
	{"paragraph separator", "a\u2029b", ` "a\Pb"`},
	{"bom", "\ufeffa", ` "\uFEFFa"`},
	{"noncharacter", "\ufffe", ` "\uFFFE"`},
	{"emoji", "hi 😀", ` "hi \U0001F600"`},
	{"emoji and quotes", `"😀" \ x`, ` "\"\U0001F600\" \\ x"`},
	{"tab and newline", "a\tb\nc", ` "a\tb\nc"`},

	// block literals
	{"two lines", "a\nb", " |-\n  a\n  b"},
	{"trailing newline", "a\nb\n", " |\n  a\n  b"},
	{"two trailing newlines", "a\nb\n\n", " |+\n  a\n  b\n"},
	{"just newline", "\n", " |+\n"},
	{"leading newline", "\nabc", " |-\n\n  abc"},
	{"leading space multiline", " a\nb", " |2-\n   a\n  b"},
	{"blank line inside", "a\n\nb", " |-\n  a\n\n  b"},
	{"indented line", "a\n  b", " |-\n  a\n    b"},
	{"colon in block", "key: value\n# not a comment", " |-\n  key: value\n  # not a comment"},
	{"trailing space line", "a \nb", " |-\n  a \n  b"},

	// folding at 78 columns for top-level values
	{"summary", summary, " >-\n  Use the messenger service for status, warning, and error notices; use logging\n  for backend diagnostics."},
	{"exactly 78", strings.Repeat("x", 78), " " + strings.Repeat("x", 78)},
	{"79 without spaces", strings.Repeat("x", 79), " >-\n  " + strings.Repeat("x", 79)},
	{"long url", "https://example.com/" + strings.Repeat("a", 70), " >-\n  https://example.com/" + strings.Repeat("a", 70)},
	{"long leading space", " " + strings.Repeat("word ", 20) + "end", " ' " + strings.Repeat("word ", 20) + "end'"},
	{
		"folded paragraphs",
		strings.Repeat("alpha ", 15) + "omega\n\nsecond paragraph\n",
		" >\n  " + strings.TrimSpace(strings.Repeat("alpha ", 13)) + "\n  alpha alpha omega\n\n\n  second paragraph",
	},
	{
		"folded keeps more-indented lines",
		strings.Repeat("alpha ", 15) + "omega\n  indented\nlast",
		" >-\n  " + strings.TrimSpace(strings.Repeat("alpha ", 13)) + "\n  alpha alpha omega\n    indented\n  last",
	},

	// other scalars
	{"nil", nil, " null"},
	{"true bool", true, " true"},
	{"false bool", false, " false"},
	{"int", 42, " 42"},
	{"negative int64", int64(-7), " -7"},
	{"uint8", uint8(255), " 255"},
	{"big int64", int64(math.MaxInt64), " 9223372036854775807"},
	{"float", 1.5, " 1.5"},
	{"integral float", 3.0, " 3"},
	{"tenth", 0.1, " 0.1"},
	{"negative float", -2.25, " -2.25"},
	{"small float", 0.000001, " 0.000001"},
	{"tiny float", 1e-7, " 1.e-7"},
	{"tiny float with digits", 1.5e-7, " 1.5e-7"},
	{"large integral float", 1.2345678901234568e20, " 123456789012345680000"},
	{"huge float", 1e21, " 1e+21"},
	{"huge float digits", 1.5e300, " 1.5e+300"},
	{"nan", math.NaN(), " .nan"},
	{"inf", math.Inf(1), " .inf"},
	{"-inf", math.Inf(-1), " -.inf"},
	{"negative zero", math.Copysign(0, -1), " -0.0"},
	{"zero float", 0.0, " 0"},
	{"time", time.Date(2026, 5, 1, 10, 0, 0, 123456789, time.UTC), " 2026-05-01T10:00:00.123Z"},
	{"time zone", time.Date(2026, 5, 1, 10, 0, 0, 0, time.FixedZone("x", 2*3600)), " 2026-05-01T08:00:00.000Z"},
	{"time extended year", time.Date(12345, 1, 2, 0, 0, 0, 0, time.UTC), " +012345-01-02T00:00:00.000Z"},

	// collections
	{"empty list", []string{}, " []"},
	{"nil list", []string(nil), " []"},
	{"empty any list", []any{}, " []"},
	{"empty map", Map{}, " {}"},
	{"list", []string{"a", "b"}, "\n  - a\n  - b"},
	{"list quoting", []string{"true", "a: b", ""}, "\n  - 'true'\n  - 'a: b'\n  - ''"},
	{"mixed list", []any{1, "x", nil, false, 2.5}, "\n  - 1\n  - x\n  - null\n  - false\n  - 2.5"},
	{"int list via reflection", []int{1, 2}, "\n  - 1\n  - 2"},
	{"nested map", Map{{"sub", 1}, {"other", "x"}}, "\n  sub: 1\n  other: x"},
	{"nested map of list", Map{{"tags", []string{"a"}}}, "\n  tags:\n    - a"},
	{"list of maps", []Map{{{"id", "x"}, {"reason", "y"}}, {{"id", "z"}}}, "\n  - id: x\n    reason: 'y'\n  - id: z"},
	{"list of map items", []any{[]MapItem{{"id", "x"}}}, "\n  - id: x"},
	{"map in list with list", []any{Map{{"tags", []string{"a", "b"}}}}, "\n  - tags:\n      - a\n      - b"},
	{"list in list", []any{[]string{"a", "b"}, "c"}, "\n  - - a\n    - b\n  - c"},
	{"empty collections in list", []any{[]string{}, Map{}}, "\n  - []\n  - {}"},
	{"block scalar in list", []string{"a\nb"}, "\n  - |-\n    a\n    b"},
	{"block scalar in nested map", Map{{"text", "a\nb"}}, "\n  text: |-\n    a\n    b"},
	{"block scalar in map in list", []Map{{{"text", "a\nb"}}}, "\n  - text: |-\n      a\n      b"},
	{"nested empty map", Map{{"m", Map{}}}, "\n  m: {}"},
}

func TestMarshalScalars(t *testing.T) {
	for _, tc := range scalarTests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := Marshal(Map{{"k", tc.in}})
			if err != nil {
				t.Fatalf("Marshal: %v", err)
			}
			if want := "k:" + tc.want + "\n"; string(got) != want {
				t.Errorf("Marshal:\n got %q\nwant %q", got, want)
			}
			val, err := Value(tc.in)
			if err != nil {
				t.Fatalf("Value: %v", err)
			}
			if string(val) != tc.want {
				t.Errorf("Value:\n got %q\nwant %q", val, tc.want)
			}
		})
	}
}

func TestMarshalFoldingDependsOnDepth(t *testing.T) {
	// A top-level value may use 78 columns, a sequence item 76 and a value
	// of a mapping inside a sequence item 74.
	line := func(n int) string { return strings.Repeat("x", n-2) + " y" }

	for _, tc := range []struct {
		name string
		in   Map
		want string
	}{
		{"top-level fits", Map{{"k", line(78)}}, "k: " + line(78) + "\n"},
		{"top-level folds", Map{{"k", line(79)}}, "k: >-\n  " + strings.Repeat("x", 77) + "\n  y\n"},
		{"sequence fits", Map{{"k", []string{line(76)}}}, "k:\n  - " + line(76) + "\n"},
		{"sequence folds", Map{{"k", []string{line(77)}}}, "k:\n  - >-\n    " + strings.Repeat("x", 75) + "\n    y\n"},
		{"map in sequence fits", Map{{"k", []Map{{{"r", line(74)}}}}}, "k:\n  - r: " + line(74) + "\n"},
		{"map in sequence folds", Map{{"k", []Map{{{"r", line(75)}}}}}, "k:\n  - r: >-\n      " + strings.Repeat("x", 73) + "\n      y\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := Marshal(tc.in)
			if err != nil {
				t.Fatal(err)
			}
			if string(got) != tc.want {
				t.Errorf("got  %q\nwant %q", got, tc.want)
			}
		})
	}
}

func TestMarshalDocument(t *testing.T) {
	doc := Map{
		{"id", "drupal-messenger"},
		{"title", "Messenger: status vs. logging"},
		{"summary", summary},
		{"tags", []string{"drupal", "messenger"}},
		{"derived_from", []string{
			"https://api.drupal.org/api/drupal/core%21lib%21Drupal%21Core%21Messenger%21MessengerInterface.php/interface/MessengerInterface/11.x",
		}},
		{"supersedes", []Map{
			{{"id", "old-note"}, {"reason", "merged"}},
		}},
		{"related", []string{}},
		{"confidence", 0.8},
		{"draft", false},
		{"reviewed", nil},
		{"created", "2026-05-01T10:00:00.000Z"},
		{"version", 3},
	}
	// js-yaml 3.14 quotes every string containing ':' and folds any line
	// longer than the available width, even without a place to break it,
	// so the long URL becomes a one-line ">-" block.
	want := `id: drupal-messenger
title: 'Messenger: status vs. logging'
summary: >-
  Use the messenger service for status, warning, and error notices; use logging
  for backend diagnostics.
tags:
  - drupal
  - messenger
derived_from:
  - >-
    https://api.drupal.org/api/drupal/core%21lib%21Drupal%21Core%21Messenger%21MessengerInterface.php/interface/MessengerInterface/11.x
supersedes:
  - id: old-note
    reason: merged
related: []
confidence: 0.8
draft: false
reviewed: null
created: '2026-05-01T10:00:00.000Z'
version: 3
`
	got, err := Marshal(doc)
	if err != nil {
		t.Fatal(err)
	}
	if string(got) != want {
		t.Errorf("got:\n%s\nwant:\n%s", got, want)
	}
}

func TestMarshalKeys(t *testing.T) {
	long := strings.Repeat("k", 1025)
	for _, tc := range []struct {
		name string
		in   Map
		want string
	}{
		{"empty map", Map{}, "{}\n"},
		{"nil map", nil, "{}\n"},
		{"order kept", Map{{"b", 1}, {"a", 2}}, "b: 1\na: 2\n"},
		{"array index keys first", Map{{"b", 1}, {"10", 2}, {"2", 3}, {"a", 4}, {"01", 5}, {"-1", 6}},
			"'2': 3\n'10': 2\nb: 1\na: 4\n'01': 5\n'-1': 6\n"},
		{"too big for an index", Map{{"x", 1}, {"4294967295", 2}, {"4294967294", 3}},
			"'4294967294': 3\nx: 1\n'4294967295': 2\n"},
		{"empty key", Map{{"", 1}}, "'': 1\n"},
		{"key with colon", Map{{"a: b", 1}}, "'a: b': 1\n"},
		{"ambiguous keys", Map{{"true", 1}, {"null", 2}, {"yes", 3}, {"<<", 4}}, "'true': 1\n'null': 2\n'yes': 3\n'<<': 4\n"},
		{"key with newline", Map{{"a\nb", 1}}, "\"a\\nb\": 1\n"},
		{"key with tab", Map{{"a\tb", 1}}, "\"a\\tb\": 1\n"},
		{"key with emoji", Map{{"😀", 1}}, "\"\\U0001F600\": 1\n"},
		{"long key is never folded", Map{{strings.Repeat("word ", 30) + "end", 1}}, strings.Repeat("word ", 30) + "end: 1\n"},
		{"1024 code units stay implicit", Map{{strings.Repeat("k", 1024), 1}}, strings.Repeat("k", 1024) + ": 1\n"},
		{"explicit key", Map{{long, 1}}, "? " + long + "\n: 1\n"},
		{"explicit key with list", Map{{long, []string{"a", "b"}}}, "? " + long + "\n: - a\n  - b\n"},
		{"explicit key with map", Map{{long, Map{{"a", 1}, {"b", 2}}}}, "? " + long + "\n: a: 1\n  b: 2\n"},
		{"explicit key in nested map", Map{{"m", Map{{long, 1}}}}, "m:\n  ? " + long + "\n  : 1\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := Marshal(tc.in)
			if err != nil {
				t.Fatal(err)
			}
			if string(got) != tc.want {
				t.Errorf("got  %q\nwant %q", got, tc.want)
			}
		})
	}
}

func TestValueMatchesMarshal(t *testing.T) {
	values := []any{"x", "", "a\nb\n\n", summary, []string{"a"}, []any{}, Map{{"a", Map{{"b", []string{"c"}}}}}, 1.5, nil}
	for _, v := range values {
		val, err := Value(v)
		if err != nil {
			t.Fatal(err)
		}
		doc, err := Marshal(Map{{"key", v}})
		if err != nil {
			t.Fatal(err)
		}
		if got := "key:" + string(val) + "\n"; got != string(doc) {
			t.Errorf("Value(%#v) does not match Marshal:\n%q\n%q", v, got, doc)
		}
	}
}

func TestMarshalErrors(t *testing.T) {
	for _, tc := range []struct {
		name string
		in   Map
		want string
	}{
		{"unsupported scalar", Map{{"ch", make(chan int)}}, `key "ch": unsupported type chan int`},
		{"go map", Map{{"m", map[string]any{"a": 1}}}, `key "m": unsupported type map[string]interface {} (use yamlstyle.Map`},
		{"float32", Map{{"f", float32(1)}}, `key "f": unsupported type float32`},
		{"bytes", Map{{"b", []byte("x")}}, `key "b": unsupported type []uint8`},
		{"pointer", Map{{"p", new(string)}}, `key "p": unsupported type *string`},
		{"nested in list", Map{{"refs", []any{Map{{"id", struct{}{}}}}}}, `key "refs[0].id": unsupported type struct {}`},
		{"nested map", Map{{"a", Map{{"b", []any{1, complex(1, 2)}}}}}, `key "a.b[1]": unsupported type complex128`},
		{"duplicate key", Map{{"a", 1}, {"a", 2}}, `key "a": duplicate key`},
		{"nested duplicate key", Map{{"a", Map{{"b", 1}, {"b", 2}}}}, `key "a.b": duplicate key`},
		{"invalid utf-8 value", Map{{"s", "a\xffb"}}, `key "s": string is not valid UTF-8`},
		{"invalid utf-8 key", Map{{"a\xff", 1}}, `is not valid UTF-8`},
		{"time out of range", Map{{"t", time.Date(300000, 1, 1, 0, 0, 0, 0, time.UTC)}}, `key "t": time is outside the range`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := Marshal(tc.in)
			if err == nil {
				t.Fatalf("no error, output %q", got)
			}
			if !strings.Contains(err.Error(), tc.want) || !strings.HasPrefix(err.Error(), "yamlstyle: ") {
				t.Errorf("error %q does not contain %q", err, tc.want)
			}
		})
	}
	if _, err := Value(make(chan int)); err == nil || !strings.Contains(err.Error(), "unsupported type chan int") {
		t.Errorf("Value error = %v", err)
	}
}

func TestIsAmbiguous(t *testing.T) {
	ambiguous := []string{
		"~", "null", "Null", "NULL", "true", "True", "TRUE", "false", "False", "FALSE",
		"0", "-0", "+0", "7", "-7", "+7", "1_000", "1__0", "0b1", "0b1_0", "-0b1", "0x1f", "0xFF", "0x_f", "+0x1",
		"00", "07", "0_7", "1:30", "-1:30", "1:2:3", "1_:30", "190:20:30",
		"1.0", "-1.0", "1.", "1.5e3", "1E-3", "1e+3", "0.5", ".5", ".5e3", "1_0.5", "1:30.5", "+.inf", "-.Inf", ".INF", ".nan", ".NaN", ".NAN",
		"2024-01-02", "2024-1-2T10:00:00", "2024-01-02t10:00:00", "2024-01-02 10:00:00", "2024-01-02  10:00:00.5",
		"2024-01-02T10:00:00Z", "2024-01-02T10:00:00.123-05:00", "2024-01-02T10:00:00 +5", "<<",
	}
	plain := []string{
		"", "-", "+", "_", "_1", "1_", "0b", "0b2", "0b1_", "0x", "0xg", "0x1_", "08", "0_", "07_", "0o7", "0B1", "0X1",
		"1:", "1:60", ":30", "1a", "1 000", "0.0.1", "1.5e", "1e", "+.5", "-.5", "._", "1._", ".inf.", "-.nan", "inf", "NaN",
		"2024-1-2", "2024-01-02T", "2024-01-02T10:00", "2024-01-02 10:00:00 Z Z", "24-01-02", "nul", "yes", "on", "<", "<<<",
		"١٢٣", "1\u00a0000",
	}
	for _, s := range ambiguous {
		if !isAmbiguous(s) {
			t.Errorf("isAmbiguous(%q) = false, want true", s)
		}
	}
	for _, s := range plain {
		if isAmbiguous(s) {
			t.Errorf("isAmbiguous(%q) = true, want false", s)
		}
	}
}

func TestFormatFloat(t *testing.T) {
	tenth, three := 0.1, 3.0 // variables, so the sums are rounded like at run time
	for _, tc := range []struct {
		in   float64
		want string
	}{
		{0, "0"}, {1, "1"}, {-1, "-1"}, {0.5, "0.5"}, {123.456, "123.456"}, {1e20, "100000000000000000000"},
		{1e21, "1e+21"}, {1.5e21, "1.5e+21"}, {-1e21, "-1e+21"}, {1e-6, "0.000001"}, {1.25e-6, "0.00000125"},
		{1e-7, "1.e-7"}, {-1e-7, "-1.e-7"}, {2.5e-7, "2.5e-7"}, {5e-324, "5.e-324"}, {math.MaxFloat64, "1.7976931348623157e+308"},
		{tenth + 0.2, "0.30000000000000004"}, {1 / three, "0.3333333333333333"}, {123456789.125, "123456789.125"},
	} {
		if got := formatFloat(tc.in); got != tc.want {
			t.Errorf("formatFloat(%v) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

package harness

import "testing"

// Ported from kenkeep v1.17 tests/lib/json-extract.test.ts. kk's headless
// answers are JSON objects (the proposal output, the provider answers), so
// ExtractJSON looks for objects only: kenkeep's array rows ([1, 2, 3],
// a fenced [true, false]) give "" here, as TestExtractJSON pins.
func TestKenkeepLibExtractJSON(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{`  {"hello":"world"}  `, `{"hello":"world"}`},
		{"```json\n{\"a\":1}\n```", `{"a":1}`},
		{"```\n{\"b\":true}\n```", `{"b":true}`},
		{"Sure, here is the JSON:\n\n```json\n{\"ok\":true}\n```", `{"ok":true}`},
		{"Background:\n```bash\necho hi\n```\nAnswer:\n```json\n{\"x\":42}\n```", `{"x":42}`},
		{`First I considered {"draft":1} but the answer is {"final":2}`, `{"final":2}`},
		{`reply: {"text":"a } inside and a { too","msg":"she said \"hi\"","ok":true}`,
			`{"text":"a } inside and a { too","msg":"she said \"hi\"","ok":true}`},
		{"  no json here at all  ", ""},
		{`partial: {"a":1`, ""},
		{"", ""},
		{"   \n  ", ""},
	} {
		if got := ExtractJSON(tc.in); got != tc.want {
			t.Errorf("ExtractJSON(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

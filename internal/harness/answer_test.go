package harness

import "testing"

func TestExtractJSON(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{`{"a":1}`, `{"a":1}`},
		{"  {\"a\":1}\n", `{"a":1}`},
		{"Here it is:\n```json\n{\"a\":2}\n```\nDone.", `{"a":2}`},
		{"```\nnot json\n```\n```json\n{\"b\":3}\n```", `{"b":3}`},
		{`I think {"a":1} or rather {"a":"}{"} is right`, `{"a":"}{"}`},
		{`{"nested":{"x":[1,{"y":2}]}} trailing`, `{"nested":{"x":[1,{"y":2}]}}`},
		{"no json here", ""},
		{`{"open": 1`, ""},
		{`[1,2]`, ""},
	} {
		if got := ExtractJSON(tc.in); got != tc.want {
			t.Errorf("ExtractJSON(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

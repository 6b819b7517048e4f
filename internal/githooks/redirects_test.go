package githooks

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestMergeRedirects(t *testing.T) {
	cases := []struct {
		name, base, ours, theirs string
		want                     string // "" when the merge must fail
	}{
		{"both add", "", `{"a": ["a-1"]}`, `{"b": ["b-1"]}`, `{"a": ["a-1"], "b": ["b-1"]}`},
		{"same entry both sides", `{}`, `{"a": ["a-1"]}`, `{"a": ["a-1"]}`, `{"a": ["a-1"]}`},
		{"theirs removes", `{"a": ["a-1"], "b": ["b-1"]}`, `{"a": ["a-1"], "b": ["b-1"]}`, `{"b": ["b-1"]}`, `{"b": ["b-1"]}`},
		{"ours changes", `{"a": ["a-1"]}`, `{"a": ["a-2"]}`, `{"a": ["a-1"], "c": ["c-1"]}`, `{"a": ["a-2"], "c": ["c-1"]}`},
		{"both change differently", `{"a": ["a-1"]}`, `{"a": ["a-2"]}`, `{"a": ["a-3"]}`, ""},
		{"removed and changed", `{"a": ["a-1"]}`, `{}`, `{"a": ["a-3"]}`, ""},
		{"not a ledger", "", `{"a": ["a-1"]}`, `<<<<<<< x`, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			write := func(name, data string) string {
				p := filepath.Join(dir, name)
				if err := os.WriteFile(p, []byte(data), 0o644); err != nil {
					t.Fatal(err)
				}
				return p
			}
			base, ours, theirs := write("base", c.base), write("ours", c.ours), write("theirs", c.theirs)
			err := MergeRedirects(base, ours, theirs)
			got, _ := os.ReadFile(ours)
			if c.want == "" {
				if err == nil {
					t.Fatalf("merged %q, want an error", got)
				}
				if string(got) != c.ours {
					t.Fatalf("ours changed to %q on a failed merge", got)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			want := write("want", c.want)
			if err := MergeRedirects(want, want, want); err != nil { // renders want as kk writes it
				t.Fatal(err)
			}
			w, _ := os.ReadFile(want)
			if string(got) != string(w) || !strings.HasSuffix(string(got), "\n") {
				t.Fatalf("merged\n%s\nwant\n%s", got, w)
			}
		})
	}
}

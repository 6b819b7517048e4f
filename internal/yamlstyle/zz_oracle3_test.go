package yamlstyle

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"strings"
	"testing"
)

func TestOracleMisc(t *testing.T) {
	long := strings.Repeat("k", 1025)
	line := func(n int) string { return strings.Repeat("x", n-2) + " y" }
	docs := []Map{
		{{"b", 1}, {"10", 2}, {"2", 3}, {"a", 4}, {"01", 5}, {"-1", 6}},
		{{"x", 1}, {"4294967295", 2}, {"4294967294", 3}},
		{{"", 1}}, {{"a: b", 1}}, {{"true", 1}, {"null", 2}, {"yes", 3}, {"<<", 4}},
		{{"a\nb", 1}}, {{"a\tb", 1}}, {{"😀", 1}}, {{strings.Repeat("word ", 30) + "end", 1}},
		{{strings.Repeat("k", 1024), 1}}, {{long, 1}}, {{long, []string{"a", "b"}}}, {{long, Map{{"a", 1}, {"b", 2}}}}, {{"m", Map{{long, 1}}}},
		{{"k", line(78)}}, {{"k", line(79)}}, {{"k", []string{line(76)}}}, {{"k", []string{line(77)}}},
		{{"k", []Map{{{"r", line(74)}}}}}, {{"k", []Map{{{"r", line(75)}}}}},
		{
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
		},
	}
	var in bytes.Buffer
	for _, d := range docs {
		b, _ := json.Marshal(enc(d))
		in.Write(b)
		in.WriteByte('\n')
	}
	cmd := exec.Command("node", "/tmp/oracle/dump.js")
	cmd.Stdin = &in
	cmd.Stderr = os.Stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSuffix(string(out), "\n"), "\n")
	for i, l := range lines {
		var want string
		json.Unmarshal([]byte(l), &want)
		got, _ := Marshal(docs[i])
		if string(got) != want {
			t.Errorf("%d: go %q js %q", i, got, want)
		}
	}
	t.Logf("checked %d", len(lines))
}

package hooks

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/kk-project/kk/internal/contracts"
	"github.com/kk-project/kk/internal/harness"
	"github.com/kk-project/kk/internal/store"
)

func TestTokens(t *testing.T) {
	got := strings.Join(Tokens("How do I configure the Retry-policy for a PAYMENT client? retry x 2fa"), " ")
	if want := "configure retry policy payment client 2fa"; got != want {
		t.Fatalf("got %q, want %q", got, want)
	}
}

// promptKB holds three topics: retries (two nodes, linked), logging (which
// mentions retries once in its body, linked to the retry policy) and
// migrations.
func promptKB(t *testing.T) (*store.KB, map[string]string) {
	t.Helper()
	k := newKB(t)
	ids := map[string]string{}
	ids["policy"] = addNode(t, k, contracts.NodeInput{Type: "practice", Title: "Retry policy for the payment client", Tags: []string{"retry", "payments"},
		Description: "How payment calls retry and back off.", Body: "Use exponential backoff with jitter.\n", Folder: "net"}, true)
	ids["budget"] = addNode(t, k, contracts.NodeInput{Type: "map", Title: "Timeout budget", Tags: []string{"timeouts"},
		Description: "Where each retry gets its deadline.", Body: "The payment client shares one budget.\n", Folder: "net", RelatesTo: []string{ids["policy"]}}, true)
	ids["logging"] = addNode(t, k, contracts.NodeInput{Type: "practice", Title: "Structured logging", Tags: []string{"logs"},
		Description: "Log with key/value pairs.", Body: "Log each retry at debug level.\n", RelatesTo: []string{ids["policy"]}}, true)
	ids["migrations"] = addNode(t, k, contracts.NodeInput{Type: "practice", Title: "Database migrations", Tags: []string{"db"},
		Description: "Run them through make migrate.", Body: "Never by hand.\n"}, false)
	return k, ids
}

func TestLexicalRank(t *testing.T) {
	k, ids := promptKB(t)
	ms, err := LexicalRank(context.Background(), k, "payment retry backoff", 5)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, m := range ms {
		got = append(got, m.Node.ID)
	}
	// policy: title 2×6 + tags 5 + description 2×3 + body 1, + 0.5 for each
	// matching neighbour (budget, logging) = 25; budget: description 3 +
	// body 1 + 0.5 = 4.5; logging: body 1 + 0.5 = 1.5, under the minimum
	// (the titles in their generated Related blocks do not count).
	if want := []string{ids["policy"], ids["budget"]}; strings.Join(got, " ") != strings.Join(want, " ") {
		t.Fatalf("ranked %v, want %v", got, want)
	}
	if ms[0].Score != 25 || ms[1].Score != 4.5 {
		t.Fatalf("scores %v %v", ms[0].Score, ms[1].Score)
	}
	if ms, _ := LexicalRank(context.Background(), k, "payment retry backoff", 1); len(ms) != 1 || ms[0].Node.ID != ids["policy"] {
		t.Fatalf("limit 1: %v", ms)
	}
	if ms, _ := LexicalRank(context.Background(), k, "the and of", 5); ms != nil {
		t.Fatalf("stopwords matched %v", ms)
	}
}

func TestPromptContext(t *testing.T) {
	k, _ := promptKB(t)
	run := func(prompt string) []byte {
		r, _ := request(k, harness.HookInput{Prompt: prompt})
		out, err := PromptContext(context.Background(), r)
		if err != nil {
			t.Fatal(err)
		}
		return out
	}
	var env struct{ Event, Context string }
	if err := json.Unmarshal(run("How does the payment client retry and back off?"), &env); err != nil || env.Event != "prompt-context" {
		t.Fatalf("%+v %v", env, err)
	}
	want := promptHeader + "\n" +
		"- Retry policy for the payment client (.ai/kenkeep/nodes/net/practice-retry-policy-for-the-payment-client.md): How payment calls retry and back off.\n" +
		"- Timeout budget (.ai/kenkeep/nodes/net/map-timeout-budget.md): Where each retry gets its deadline.\n"
	if env.Context != want {
		t.Fatalf("context:\n%s\nwant:\n%s", env.Context, want)
	}
	for _, prompt := range []string{"", "   ", "Kubernetes ingress annotations"} {
		if out := run(prompt); out != nil {
			t.Errorf("%q gave %q", prompt, out)
		}
	}

	old := PromptMaxChars
	defer func() { PromptMaxChars = old }()
	PromptMaxChars = 150
	text, err := PromptContextText(context.Background(), k, "payment retry backoff")
	if err != nil {
		t.Fatal(err)
	}
	if n := utf8.RuneCountInString(text); n > 150 || !strings.HasSuffix(text, "…\n") || strings.Contains(text, "Timeout budget") {
		t.Fatalf("bounded context (%d chars):\n%s", n, text)
	}
}

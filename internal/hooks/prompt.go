package hooks

import (
	"cmp"
	"context"
	"os"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/kk-project/kk/internal/frontmatter"
	"github.com/kk-project/kk/internal/harness"
	"github.com/kk-project/kk/internal/node"
	"github.com/kk-project/kk/internal/store"
	"github.com/kk-project/kk/internal/workpool"
)

// Prompt-time retrieval: the nodes most relevant to the user's prompt,
// as a short list the harness shows the model next to the prompt.

// Retrieval settings.
var (
	// PromptLimit is how many nodes prompt-context lists at most.
	PromptLimit = 5
	// PromptMinScore is the least score a node needs to be listed: a
	// description match, or three prompt words in the body.
	PromptMinScore = 3.0
	// PromptMaxChars bounds the rendered context; the first node is
	// always listed, shortened if it must be.
	PromptMaxChars = 2000
)

// Match is one node found for a prompt.
type Match struct {
	Node  *node.Node
	Score float64
}

// Ranker returns up to limit nodes of k relevant to prompt, best first.
type Ranker func(ctx context.Context, k *store.KB, prompt string, limit int) ([]Match, error)

// Rank is the ranking prompt-context uses: LexicalRank until a full-text
// index can answer instead.
var Rank Ranker = LexicalRank

// promptHeader opens the prompt-time context.
const promptHeader = "Project knowledge that may bear on this prompt (notes from .ai/kenkeep, snapshots in time; check them against the code):"

// PromptContext renders the nodes most relevant to the payload's prompt
// for the harness; nil when the prompt is empty, nothing scores, or the
// harness has no channel for it. The prompt itself is never logged.
func PromptContext(ctx context.Context, r Request) ([]byte, error) {
	text, err := PromptContextText(ctx, r.KB, r.Input.Prompt)
	if err != nil || text == "" {
		return nil, err
	}
	out, ok := r.Adapter.HookOutput(harness.PromptContext, text)
	if !ok {
		return nil, nil
	}
	return out, nil
}

// PromptContextText returns the prompt-time context for prompt: a header
// and one line "- <title> (<path>): <description>" per node, at most
// PromptMaxChars characters; "" when no node scores.
func PromptContextText(ctx context.Context, k *store.KB, prompt string) (string, error) {
	if strings.TrimSpace(prompt) == "" {
		return "", nil
	}
	matches, err := Rank(ctx, k, prompt, PromptLimit)
	if err != nil || len(matches) == 0 {
		return "", err
	}
	var b strings.Builder
	b.WriteString(promptHeader + "\n")
	for i, m := range matches {
		n := m.Node
		line := "- " + oneLine(n.Title) + " (" + store.DirName + "/nodes/" + n.Path + ")"
		if d := oneLine(n.Description); d != "" {
			line += ": " + d
		}
		line += "\n"
		room := PromptMaxChars - utf8.RuneCountInString(b.String())
		if utf8.RuneCountInString(line) > room {
			if i > 0 {
				break
			}
			line = cutRunes(line, room-2) + "…\n"
		}
		b.WriteString(line)
	}
	return b.String(), nil
}

func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }

// cutRunes returns the first n runes of s.
func cutRunes(s string, n int) string {
	if n <= 0 {
		return ""
	}
	i := 0
	for j := range s {
		if i == n {
			return s[:j]
		}
		i++
	}
	return s
}

// Scoring weights of LexicalRank, per distinct prompt word found in each
// field of a node, and per related node that also matches.
const (
	weightTitle       = 6
	weightTags        = 5
	weightDescription = 3
	weightBody        = 1
	weightNeighbour   = 0.5
)

// stopwords are common English words that say nothing about a topic.
var stopwords = map[string]bool{}

func init() {
	for _, w := range strings.Fields(`about after again all also an and any are as at be because been before
	being but by can could did do does doing done for from get got had has have how if in into is it its
	just let like make me more most my need no not now of off on once only or other our out over please
	should so some such than that the their them then there these they this those to too under up us use
	using very want was way we were what when where which while who why will with would you your`) {
		stopwords[w] = true
	}
}

// Tokens splits s into lowercase words of letters and digits, dropping
// one-letter words and stopwords, each word once, in order.
func Tokens(s string) []string {
	var out []string
	seen := map[string]bool{}
	scanWords(strings.ToLower(s), func(w string) bool {
		if !stopwords[w] && !seen[w] {
			seen[w] = true
			out = append(out, w)
		}
		return true
	})
	return out
}

// scanWords calls fn with each word of s (runs of letters and digits of at
// least two bytes) until fn returns false.
func scanWords(s string, fn func(string) bool) {
	start := -1
	for i, r := range s {
		if unicode.IsLetter(r) || unicode.IsDigit(r) {
			if start < 0 {
				start = i
			}
			continue
		}
		if start >= 0 {
			if i-start >= 2 && !fn(s[start:i]) {
				return
			}
			start = -1
		}
	}
	if start >= 0 && len(s)-start >= 2 {
		fn(s[start:])
	}
}

// LexicalRank scores every node against the prompt's words: weightTitle
// for each word in its title, weightTags in its tags, weightDescription in
// its description and weightBody in its body (without the generated
// Related and Citations blocks), plus weightNeighbour for
// each node linked to it (relates_to or depends_on, either way) that
// matches a word itself. Nodes below PromptMinScore are dropped; the rest
// are sorted by score, then by how many nodes relate to them, then by id.
func LexicalRank(ctx context.Context, k *store.KB, prompt string, limit int) ([]Match, error) {
	terms := Tokens(prompt)
	if len(terms) == 0 {
		return nil, nil
	}
	termSet := make(map[string]bool, len(terms))
	for _, t := range terms {
		termSet[t] = true
	}
	t, err := k.ReadTree(store.LoadOptions{})
	if err != nil {
		return nil, err
	}
	leaves := t.Leaves
	lexical := make([]float64, len(leaves))
	workpool.Run(0, len(leaves), func(i int) {
		if ctx.Err() != nil {
			return
		}
		n := leaves[i]
		s := float64(weightTitle * countIn(termSet, n.Title))
		s += float64(weightTags * countIn(termSet, strings.Join(n.Tags, " ")))
		s += float64(weightDescription * countIn(termSet, n.Description))
		if src, err := os.ReadFile(k.NodePath(n.Path)); err == nil {
			if parts, err := frontmatter.Split(src); err == nil {
				s += float64(weightBody * countIn(termSet, authoredBody(string(parts.Body))))
			}
		}
		lexical[i] = s
	})
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	index := make(map[string]int, len(leaves))
	for i, n := range leaves {
		index[n.ID] = i
	}
	neighbours := make([]map[int]bool, len(leaves))
	inDegree := make([]int, len(leaves))
	link := func(a, b int) {
		if a == b {
			return
		}
		if neighbours[a] == nil {
			neighbours[a] = map[int]bool{}
		}
		neighbours[a][b] = true
	}
	for i, n := range leaves {
		for _, id := range n.RelatesTo {
			if j, ok := index[id]; ok {
				link(i, j)
				link(j, i)
				if j != i {
					inDegree[j]++
				}
			}
		}
		for _, id := range n.DependsOn {
			if j, ok := index[id]; ok {
				link(i, j)
				link(j, i)
			}
		}
	}
	var out []Match
	for i, n := range leaves {
		s := lexical[i]
		for j := range neighbours[i] {
			if lexical[j] > 0 {
				s += weightNeighbour
			}
		}
		if s >= PromptMinScore {
			out = append(out, Match{Node: n, Score: s})
		}
	}
	slices.SortFunc(out, func(a, b Match) int {
		if c := cmp.Compare(b.Score, a.Score); c != 0 {
			return c
		}
		if c := cmp.Compare(inDegree[index[b.Node.ID]], inDegree[index[a.Node.ID]]); c != 0 {
			return c
		}
		return store.LocaleCompare(a.Node.ID, b.Node.ID)
	})
	if len(out) > limit {
		out = out[:limit]
	}
	return out, nil
}

// authoredBody drops the generated Related and Citations blocks from a
// leaf body: they repeat neighbours' titles, which the graph boost already
// counts.
func authoredBody(body string) string {
	for _, m := range [][2]string{{node.RelatedStart, node.RelatedEnd}, {node.CitationsStart, node.CitationsEnd}} {
		if i := strings.Index(body, m[0]); i >= 0 {
			if j := strings.Index(body[i:], m[1]); j >= 0 {
				body = body[:i] + body[i+j+len(m[1]):]
			}
		}
	}
	return body
}

// countIn counts the distinct words of terms that occur in text.
func countIn(terms map[string]bool, text string) int {
	if text == "" {
		return 0
	}
	found := map[string]bool{}
	scanWords(strings.ToLower(text), func(w string) bool {
		if terms[w] {
			found[w] = true
		}
		return len(found) < len(terms)
	})
	return len(found)
}

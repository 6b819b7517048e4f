package index

import (
	"fmt"
	"slices"
	"strings"
	"testing"
)

func TestSplitQuoted(t *testing.T) {
	trace := strings.Repeat("\tat com.example.app.Handler.run(Handler.java:42)\n", 4)
	code := "for {\n\tconn, err := ln.Accept()\n\tif err != nil {\n\t\tlog.Printf(\"accept: %v\", err)\n\t\treturn err\n\t}\n\tgo serve(conn)\n}\n"
	prose := "Why does the queue handler stop retrying after the cache backend restarts, and where is that configured in this project?"
	for name, c := range map[string]struct {
		text, prose, quoted string
	}{
		"prose only":       {prose, prose + "\n", ""},
		"keywords only":    {"hook_entity_presave cache tags invalidation", "hook_entity_presave cache tags invalidation\n", ""},
		"fenced":           {"why?\n```go\nfunc f() {}\n```\nand this", "why?\nand this\n", "func f() {}\n"},
		"tilde fence":      {"why?\n~~~\nx := 1\n~~~", "why?\n", "x := 1\n"},
		"longer fence":     {"why?\n````\n```\ninner\n```\n````\nafter", "why?\nafter\n", "```\ninner\n```\n"},
		"unclosed fence":   {"why?\n```\nline one\nline two", "why?\n", "line one\nline two\n"},
		"pasted trace":     {prose + "\n\n" + trace, prose + "\n", strings.TrimSuffix(trace, "\n") + "\n"},
		"trace first":      {trace + "\n" + prose, prose + "\n", strings.TrimSuffix(trace, "\n") + "\n"},
		"short log line":   {"error: EOF\n\nwhy?", "error: EOF\nwhy?\n", ""},
		"right under":      {"I get this when saving the node:\n" + trace, "I get this when saving the node:\n", trace},
		"keywords over":    {"deploy kubernetes ingress with helm charts\n" + trace, "deploy kubernetes ingress with helm charts\n", trace},
		"two log lines":    {"why does the handler stop when it is called from here?\n" + strings.Repeat("\tat com.example.app.Handler.run(Handler.java:42)\n", 2), "why does the handler stop when it is called from here?\n" + strings.Repeat("\tat com.example.app.Handler.run(Handler.java:42)\n", 2), ""},
		"code with braces": {"why does this leak?\n" + code, "why does this leak?\n", code},
		"inline code":      {"what does `kk sync --paths` do to the index when a leaf is gone?", "what does `kk sync --paths` do to the index when a leaf is gone?\n", ""},
		"crlf paragraphs":  {"why?\r\n\r\n" + strings.ReplaceAll(trace, "\n", "\r\n"), "why?\n", trace},
	} {
		p, q := splitQuoted(c.text)
		if p != c.prose || q != c.quoted {
			t.Errorf("%s: splitQuoted = prose %q, quoted %q; want %q, %q", name, p, q, c.prose, c.quoted)
		}
	}
}

func TestTextTerms(t *testing.T) {
	weights := func(q []queryTerm) map[string]float64 {
		m := map[string]float64{}
		for _, t := range q {
			m[t.term] = t.weight
		}
		return m
	}
	// No material: the text's terms, each of weight 1.
	q, own := textTerms("retry timeout of the queue handler")
	if own != len(q) || len(q) != 4 {
		t.Fatalf("textTerms(no material) = %v, own %d", q, own)
	}
	// A question and a fenced block with more terms than it has: the
	// question's terms first at weight 1, a term both hold stays the
	// question's, the block's others share the question's weight.
	q, own = textTerms("retry timeout of the queue handler\n```\nqueue alpha bravo charlie delta echo foxtrot golf hotel\n```")
	w := weights(q)
	if own != 4 || len(q) != 12 {
		t.Fatalf("textTerms = %d terms, own %d; want 12, 4", len(q), own)
	}
	if w["queue"] != 1 || w["retri"] != 1 {
		t.Errorf("the question's terms weigh %v", w)
	}
	if got := w["alpha"]; got != 0.5 { // 4 question terms, 8 of the block's own
		t.Errorf("a term only the block holds weighs %v; want 0.5", got)
	}
	for _, t2 := range q[own:] {
		if !t2.quoted {
			t.Errorf("%s: not marked quoted", t2.term)
		}
	}
	// Fewer material terms than the question's: each weighs 1.
	q, own = textTerms("retry timeout of the queue handler\n```\nalpha\n```")
	if w := weights(q); own != 4 || w["alpha"] != 1 {
		t.Errorf("textTerms(small block) = %v, own %d", w, own)
	}
	// Only material: all of it is the text's own, at weight 1.
	q, own = textTerms("```\nalpha bravo charlie\n```")
	if own != len(q) || len(q) != 3 || weights(q)["bravo"] != 1 {
		t.Errorf("textTerms(only a block) = %v, own %d", q, own)
	}
}

// A long paste keeps its maxQuotedTerms most telling terms (count in the
// material times idf, some leaf holding them), after the question's, at
// the weights textTerms gave them.
func TestTellingMaterial(t *testing.T) {
	var b strings.Builder
	b.WriteString("why does the retry loop stop?\n```\n")
	for i := range 100 {
		fmt.Fprintf(&b, "frame%03d ", i)
	}
	b.WriteString(strings.Repeat("backoff ", 5) + "orphan\n```\n")
	text := b.String()
	q, own := textTerms(text)
	for i := range q[own:] {
		t := &q[own+i]
		switch t.term {
		case "orphan":
			t.df, t.idf = 0, idf(1000, 0) // no leaf holds it
		case "backoff":
			t.df, t.idf = 50, idf(1000, 50)
		default:
			t.df, t.idf = 10, idf(1000, 10)
		}
	}
	kept := tellingMaterial(text, slices.Clone(q), own)
	if len(kept) != own+maxQuotedTerms {
		t.Fatalf("%d terms kept; want the question's %d and %d of the material's", len(kept), own, maxQuotedTerms)
	}
	if !slices.EqualFunc(kept[:own], q[:own], func(a, b queryTerm) bool { return a == b }) {
		t.Errorf("the question's terms changed: %v", kept[:own])
	}
	if kept[own].term != "backoff" { // 5 × idf(50) beats 1 × idf(10)
		t.Errorf("first material term %q; want backoff", kept[own].term)
	}
	for _, k := range kept[own:] {
		if k.term == "orphan" {
			t.Error("kept a term no leaf holds")
		}
		if k.weight != q[own].weight {
			t.Errorf("%s weighs %v; want %v, as textTerms set it", k.term, k.weight, q[own].weight)
		}
	}
	// A paste of fewer terms is kept whole.
	q, own = textTerms("why?\n```\nalpha bravo\n```")
	if got := tellingMaterial("why?\n```\nalpha bravo\n```", q, own); len(got) != len(q) {
		t.Errorf("a short paste: %d terms kept of %d", len(got), len(q))
	}
}

// A text longer than maxSearchText is read as its two ends: the question
// before or after a pasted log of megabytes stays the prose, each line
// kept is prose or material as it was in the whole text (a fence open
// across a cut is closed before it and opened again after it), and what
// is read stays within the bound.
func TestBoundText(t *testing.T) {
	question := "Why does the queue handler stop retrying after the cache backend restarts in this project?"
	logLine := func(i int) string {
		return fmt.Sprintf("2026-11-30T09:12:%02dZ ERROR worker[%d] request id=%x path=/api/v1/items/%d status=500\n", i%60, i%17, i*7919, i)
	}
	var log strings.Builder
	for i := 0; log.Len() < 3<<20; i++ {
		log.WriteString(logLine(i))
	}
	prose := question + "\n"
	for name, text := range map[string]string{
		"question, then the log":        question + "\n\n" + log.String(),
		"the log, then the question":    log.String() + "\n" + question + "\n",
		"question over a fenced log":    question + "\n```\n" + log.String() + "```\n",
		"a fence open across both cuts": "```\n" + log.String() + "```\n\n" + question,
		"question right over the log":   "I get this when the worker restarts, " + strings.ToLower(question[:1]) + question[1:] + "\n" + log.String(),
	} {
		b := boundText(text)
		if len(b) > maxSearchText+64 {
			t.Errorf("%s: %d bytes read, more than the bound", name, len(b))
		}
		p, q := splitQuoted(b)
		want, _ := splitQuoted(text)
		if p != want || (want == prose) != (p == prose) {
			t.Errorf("%s: the prose read is %.200q, want %.200q", name, p, want)
		}
		if len(q) < maxSearchText/2 {
			t.Errorf("%s: %d bytes of material read", name, len(q))
		}
		for line := range strings.Lines(q) {
			if !strings.Contains(line, " ERROR worker[") {
				t.Errorf("%s: material read holds %q, not a line of the log", name, line)
				break
			}
		}
	}
	if short := question + "\n" + logLine(1); boundText(short) != short {
		t.Errorf("a short text is not read whole")
	}
}

// Searchable reads a text until its first searchable word, however long.
func TestSearchable(t *testing.T) {
	noise := strings.Repeat("== -- :: 4\n", 1<<18)
	for text, want := range map[string]bool{
		"":                        false,
		"the of a":                false,
		noise:                     false,
		noise + "cache":           true,
		"cache\n" + noise:         true,
		"x y\n" + noise + "retry": true,
	} {
		if got := Searchable(text); got != want {
			t.Errorf("Searchable(%.30q… %d bytes) = %v, want %v", text, len(text), got, want)
		}
	}
}

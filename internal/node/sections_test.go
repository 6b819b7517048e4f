package node

import (
	"strings"
	"testing"
)

// TestRenderSectionsKeepsHandText: a person's text around the generated
// blocks survives every write. A start marker left without its end (the
// end line deleted by hand) once made the next-but-one write cut from it
// to the end of the block appended after the text, dropping the text.
func TestRenderSectionsKeepsHandText(t *testing.T) {
	n := &Node{RelatesTo: []string{"practice-a"}, DerivedFrom: []string{"docs/a.md"}}
	block := RelatedSection(n, nil)
	cites := CitationsSection(n)
	const hand = "A PARAGRAPH ADDED BY HAND."

	// The end marker deleted by hand, text after the broken block.
	body := "Body B\n\n" + RelatedStart + "\n# Related\n\n- Related: [practice-a](/practice-a.md)\n" + hand + "\n"
	for i := range 3 {
		body = RenderSections(body, n, nil)
		if !strings.Contains(body, hand) {
			t.Fatalf("write %d lost the hand-written text:\n%s", i+1, body)
		}
		if !strings.HasSuffix(body, block+"\n\n"+cites) {
			t.Fatalf("write %d: the generated blocks are not at the end:\n%s", i+1, body)
		}
	}
	if again := RenderSections(body, n, nil); again != body {
		t.Fatalf("a second render changed the body:\n%s\n---\n%s", body, again)
	}

	// An end marker left without its start, before the real block.
	body = "Body\n" + RelatedEnd + "\n" + hand + "\n\n" + block + "\n"
	out := RenderSections(body, n, nil)
	if !strings.Contains(out, hand) || strings.Count(out, RelatedStart) != 1 {
		t.Fatalf("orphan end marker: %s", out)
	}

	// Text after intact blocks keeps its blank line, and render is stable.
	body = "Body\n\n" + block + "\n\n" + hand + "\n\n" + cites
	out = RenderSections(body, n, nil)
	if !strings.Contains(out, block+"\n\n"+hand) {
		t.Fatalf("the blank line between the block and the text is gone:\n%s", out)
	}
	if again := RenderSections(out, n, nil); again != out {
		t.Fatalf("render not stable:\n%s\n---\n%s", out, again)
	}

	// Removing every edge leaves the paragraphs around the block apart.
	out = RenderSections("Body\n\n"+block+"\n\n"+hand, &Node{}, nil)
	if out != "Body\n\n"+hand {
		t.Fatalf("removing the block merged the paragraphs: %q", out)
	}
}

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

// TestRenderSectionsOneRelatedHeading: a body with a "# Related" section
// written by hand got kk's generated block, with its own "# Related"
// heading, after it: two Related sections, on every write. The generated
// links now go at the end of the hand-written section, under its heading,
// and the hand-written links stay.
func TestRenderSectionsOneRelatedHeading(t *testing.T) {
	n := &Node{RelatesTo: []string{"practice-a"}, DependsOn: []string{"map-b"}, DerivedFrom: []string{"docs/a.md"}}
	cites := CitationsSection(n)
	links := "- Related: [practice-a](/practice-a.md)\n- Depends on: [map-b](/map-b.md)"
	for _, c := range []struct{ name, body, want string }{
		{"section last",
			"Intro.\n\n# Related\n\n- [Go docs](https://go.dev)\n",
			"Intro.\n\n# Related\n\n- [Go docs](https://go.dev)\n\n" + RelatedStart + "\n" + links + "\n" + RelatedEnd + "\n\n" + cites},
		{"section before another",
			"Intro.\n\n# Related\n\n- [Go docs](https://go.dev)\n\n## More\n\n- by hand\n\n# Notes\n\n```sh\n# not a heading\n```\nEnd.\n",
			"Intro.\n\n# Related\n\n- [Go docs](https://go.dev)\n\n## More\n\n- by hand\n\n" + RelatedStart + "\n" + links + "\n" + RelatedEnd +
				"\n\n# Notes\n\n```sh\n# not a heading\n```\nEnd.\n\n" + cites},
		{"the doubled layout kk wrote before",
			"Intro.\n\n# Related\n\n- [Go docs](https://go.dev)\n\n" + RelatedSection(n, nil) + "\n\n" + cites + "\n",
			"Intro.\n\n# Related\n\n- [Go docs](https://go.dev)\n\n" + RelatedStart + "\n" + links + "\n" + RelatedEnd + "\n\n" + cites},
	} {
		t.Run(c.name, func(t *testing.T) {
			out := RenderSections(c.body, n, nil)
			if out != c.want {
				t.Fatalf("got\n%s\n---want\n%s", out, c.want)
			}
			if strings.Count(out, "# Related") != 1 {
				t.Fatalf("%d Related headings:\n%s", strings.Count(out, "# Related"), out)
			}
			if again := RenderSections(out, n, nil); again != out {
				t.Fatalf("render not stable:\n%s\n---\n%s", out, again)
			}
			// Without edges the hand-written section stays as it was.
			if none := RenderSections(out, &Node{}, nil); strings.Contains(none, RelatedStart) || !strings.Contains(none, "# Related\n\n- [Go docs](https://go.dev)") {
				t.Fatalf("without edges:\n%s", none)
			}
		})
	}
}

// TestRenderSectionsQuotedMarkers: a marker quoted in prose or shown in a
// fenced example is not a generated block. Matching the markers as
// substrings cut everything between a quoted start and a quoted end (the
// sentences of a note documenting the markers) and put the block there.
// Ported from kenkeep's tests/lib/rendered-links.test.ts ("treats only
// whole-line markers outside code fences as a generated section").
func TestRenderSectionsQuotedMarkers(t *testing.T) {
	n := &Node{RelatesTo: []string{"map-x"}}
	resolve := func(id string) (string, bool) { return "refs/" + id + ".md", true }
	prose := strings.Join([]string{
		"# Marker examples",
		"Use `" + RelatedStart + "` to demonstrate the marker.",
		"DURABLE_FACT explains the module contract.",
		"Close the demonstration with `" + RelatedEnd + "`.",
		"",
		"```markdown",
		RelatedStart,
		"FENCED_EXAMPLE",
		RelatedEnd,
		"```",
	}, "\n")
	want := prose + "\n\n" + RelatedSection(n, resolve)
	out := RenderSections(prose, n, resolve)
	if out != want {
		t.Fatalf("first render:\n%s\n--- want\n%s", out, want)
	}
	// The real block is found and refreshed; the prose and the example stay.
	stale := strings.Replace(out, "(/refs/map-x.md)", "(/old/map-x.md)", 1)
	if again := RenderSections(stale, n, resolve); again != want {
		t.Fatalf("refresh:\n%s\n--- want\n%s", again, want)
	}
	// Without edges the block goes and the quoted markers stay.
	if bare := RenderSections(out, &Node{}, resolve); bare != prose {
		t.Fatalf("block removal:\n%s\n--- want\n%s", bare, prose)
	}
	// A fence never closed does not hide the block written after it: a
	// second render replaces it rather than appending another.
	open := "Body\n\n```go\nfunc f() {}"
	first := RenderSections(open, n, resolve)
	if again := RenderSections(first, n, resolve); again != first || strings.Count(again, RelatedStart) != 1 {
		t.Fatalf("unclosed fence: %q then %q", first, again)
	}
}

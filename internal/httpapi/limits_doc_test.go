package httpapi

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestLimitsDoc: the kk serve section of docs/limits.md gives the limits
// the code applies.
func TestLimitsDoc(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("..", "..", "docs", "limits.md"))
	if err != nil {
		t.Fatal(err)
	}
	_, section, ok := strings.Cut(string(b), "\n## kk serve\n")
	if !ok {
		t.Fatal(`docs/limits.md has no "## kk serve" section`)
	}
	section, _, _ = strings.Cut(section, "\n## ")
	section = strings.Join(strings.Fields(section), " ")
	d := DefaultLimits
	for name, want := range map[string]string{
		"DefaultMaxBody":       fmt.Sprintf("| a request body | %d MiB | 413 |", DefaultMaxBody>>20),
		"Limits.Reads":         fmt.Sprintf("the web page | %d | waits |", d.Reads),
		"Limits.Searches":      fmt.Sprintf("`/api/find` | %d | waits |", d.Searches),
		"Limits.Models":        fmt.Sprintf("`POST /ask` | %d | waits |", d.Models),
		"Limits.Writes":        fmt.Sprintf("`DELETE /content` | %d | waits |", d.Writes),
		"Limits.Queue":         fmt.Sprintf("| requests of one class waiting for a slot | %d | 503 at once |", d.Queue),
		"Limits.Wait":          fmt.Sprintf("| the wait for a slot | %d s | 503 |", d.Wait/time.Second),
		"MaxTags":              fmt.Sprintf("| tags of a posted or edited note | %d, each at most %d characters | 400, nothing queued |", MaxTags, MaxTagLength),
		"MaxSearchTags":        fmt.Sprintf("| distinct tags of a tag search (`GET /search?tag=…&tags=…`, trimmed, lower-cased, deduplicated) | %d | 400 `tags: N given; at most %d` |", MaxSearchTags, MaxSearchTags),
		"MaxTitleLength":       fmt.Sprintf("| the title of a posted or edited note | %d characters | 400, nothing queued |", MaxTitleLength),
		"MaxContentBytes":      fmt.Sprintf("| the content of a posted or edited note | %d bytes (1 MiB less %d KiB for the front matter;", MaxContentBytes, (1<<20-MaxContentBytes)>>10),
		"MaxDescriptionLength": fmt.Sprintf("| the description of an edited note | %d characters | 400, nothing queued |", MaxDescriptionLength),
		"BodyTimeout":          fmt.Sprintf("| a write's body, read before it waits for a slot | %d s | 408, nothing queued |", BodyTimeout/time.Second),
		"StallTimeout":         fmt.Sprintf("| an answer's client reading nothing of it | %d s | the connection is cut, and its request's slot is free", StallTimeout/time.Second),
		"Limits.Bodies":        fmt.Sprintf("| bytes of write bodies read and held at once | %d MiB | wait for room (%d s), then 503 |", d.Bodies>>20, d.Wait/time.Second),
		"MaxSearchLimit":       fmt.Sprintf("(`limit`) | %d (default %d) | the first %d |", MaxSearchLimit, DefaultSearchLimit, MaxSearchLimit),
		"encodeChunk":          fmt.Sprintf("encoded a %d KiB chunk at a time", encodeChunk>>10),
		"EvictAfter":           fmt.Sprintf("| a connection waiting for its request (headers not all sent, or idle) while every connection is taken | %d s | the one that has waited longest is closed, to make room |", EvictAfter/time.Second),
		"ConnHeadroom":         fmt.Sprintf("| connections open at once | the open-file limit (`ulimit -n`) less %d, and at least half of it | wait to be accepted |", ConnHeadroom),
	} {
		if !strings.Contains(section, want) {
			t.Errorf("docs/limits.md, kk serve: %s is not documented as %q", name, want)
		}
	}
}

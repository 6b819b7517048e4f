package frontmatter

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/kk-project/kk/internal/yamlstyle"
)

// checkSimple asserts that, whenever the fast parser accepts text, it agrees
// with the full YAML parser on keys, values and per-key source bytes.
func checkSimple(t *testing.T, text []byte) bool {
	t.Helper()
	segs, values, ok := parseSimple(text)
	if !ok {
		return false
	}
	full := &Doc{values: map[string]any{}, segmented: true}
	if err := full.parseFull(Parts{YAML: text}, text); err != nil {
		t.Fatalf("fast parser accepted what the YAML parser rejects (%v):\n%s", err, text)
	}
	if !reflect.DeepEqual(values, full.values) {
		t.Fatalf("values differ for\n%s\nfast: %#v\nfull: %#v", text, values, full.values)
	}
	if len(segs) != len(full.segs) {
		t.Fatalf("key count differs for\n%s", text)
	}
	for i := range segs {
		if segs[i].key != full.segs[i].key || segs[i].line != full.segs[i].line || (full.segmented && !bytes.Equal(segs[i].raw, full.segs[i].raw)) {
			t.Fatalf("segment %d differs for\n%s\nfast: %q line %d %q\nfull: %q line %d %q", i, text,
				segs[i].key, segs[i].line, segs[i].raw, full.segs[i].key, full.segs[i].line, full.segs[i].raw)
		}
	}
	return true
}

func TestSimpleMatchesYAMLOnFixtures(t *testing.T) {
	root := filepath.Join("..", "..", "..", "shared", "fixtures", "kenkeep-pack-drupal", "knowledge")
	accepted, total := 0, 0
	walkErr := filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(p, ".md") {
			return nil
		}
		src, _ := os.ReadFile(p)
		parts, err := Split(src)
		if err != nil || !parts.Has {
			return nil
		}
		total++
		if checkSimple(t, parts.YAML) {
			accepted++
		}
		return nil
	})
	if walkErr != nil {
		t.Fatal(walkErr)
	}
	if total == 0 {
		t.Fatal("no leaf of the Drupal pack fixture was read (the tests need shared/ beside the repository, as CI has it)")
	}
	if accepted < total*9/10 {
		t.Errorf("fast parser took only %d of %d fixture files", accepted, total)
	}
}

// Documents written by the kenkeep-compatible emitter, with random strings,
// are exactly the format the fast path exists for.
func TestSimpleMatchesYAMLOnEmittedDocs(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	pieces := []string{"a", "Z", "word", " ", "  ", ":", ": ", "#", " #", "'", "\"", "-", "- ", "[", "]", "{", "}", ",", "1", "0", "2024-01-02",
		"true", "null", "~", "yes", "é", "\t", "\n", "&", "*", "!", "|", ">", "%", "@", "`", ".", "1.5", "0x1F", "+", "é日本", "\u2028", "\u0085", "\ufeff"}
	str := func() string {
		var b strings.Builder
		for range rng.IntN(12) {
			b.WriteString(pieces[rng.IntN(len(pieces))])
		}
		if rng.IntN(10) == 0 {
			b.WriteString(strings.Repeat("long words here ", 10))
		}
		return b.String()
	}
	accepted := 0
	for i := range 20000 {
		m := yamlstyle.Map{}
		for j := range 1 + rng.IntN(6) {
			key := fmt.Sprintf("k%d", j)
			switch rng.IntN(4) {
			case 0:
				list := make([]string, rng.IntN(4))
				for n := range list {
					list[n] = str()
				}
				m = append(m, yamlstyle.MapItem{Key: key, Value: list})
			case 1:
				m = append(m, yamlstyle.MapItem{Key: key, Value: rng.IntN(1000)})
			default:
				m = append(m, yamlstyle.MapItem{Key: key, Value: str()})
			}
		}
		text, err := yamlstyle.Marshal(m)
		if err != nil {
			t.Fatalf("doc %d: %v", i, err)
		}
		if checkSimple(t, text) {
			accepted++
		}
	}
	if accepted < 2000 {
		t.Errorf("fast parser took only %d of 20000 emitted documents", accepted)
	}
}

func TestSimpleFallsBack(t *testing.T) {
	for _, text := range []string{
		"# comment\na: 1\n", "a: 1\n\nb: 2\n", "a: \"x\\ty\"\n", "a: |\n  x\n", "a: x # c\n", "a:\n  b: 1\n",
		"a: 2024-01-02\n", "a: 1.5\n", "a: yes\n", "a: &x 1\n", "a:\n    - x\n", "a: 'unterminated\n", "a: [1, 2]\n",
		"a:\n  - x\n   y\n", "a: >\n  x\n", "a: >-\n  x\n\n  y\n", "- a\n", "a b: 1\n", "a: x\n  y\n",
		"a: \u0090\n", "a: x\u0085y\n", "a: \uffff\n",
	} {
		if _, _, ok := parseSimple([]byte(text)); ok {
			t.Errorf("fast parser accepted %q", text)
		}
	}
}

func FuzzSimpleMatchesYAML(f *testing.F) {
	f.Add([]byte("type: practice\ntitle: 'A: b'\ntags:\n  - a\n  - b\nn: 3\nd: >-\n  folded\n  text\n"))
	f.Add([]byte("a: []\nb: {}\nc:\nd: null\n"))
	f.Add([]byte("x:\n  - >-\n    long\n    item\n"))
	f.Fuzz(func(t *testing.T, text []byte) {
		checkSimple(t, text)
	})
}

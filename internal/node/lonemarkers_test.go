package node

import (
	"slices"
	"testing"
)

func TestLoneMarkers(t *testing.T) {
	block := RelatedStart + "\n# Related\n\n- Related: [a](/a.md)\n" + RelatedEnd
	for name, c := range map[string]struct {
		body string
		want []int // lines; a negative one an end marker
	}{
		"whole block":             {"Text.\n\n" + block + "\n", nil},
		"no block":                {"Text.\n", nil},
		"end deleted":             {"Text.\n\n" + RelatedStart + "\n# Related\n\n- Related: [a](/a.md)\n\nMore.\n", []int{3}},
		"start deleted":           {"Text.\n\n# Related\n\n- Related: [a](/a.md)\n" + RelatedEnd + "\n", []int{-6}},
		"end deleted, new block":  {RelatedStart + "\n- x\n\n" + block, []int{1}},
		"second end":              {block + "\n" + RelatedEnd, []int{-6}},
		"quoted in prose":         {"Write `" + RelatedStart + "` first.\n", nil},
		"in a fenced example":     {"```\n" + RelatedStart + "\n```\n", nil},
		"citations end deleted":   {CitationsStart + "\n# Citations\n\n[1] [x](x)\n", []int{1}},
		"both blocks, one broken": {block + "\n\n" + CitationsStart + "\n[1] [x](x)\n", []int{7}},
	} {
		var got []int
		for _, m := range LoneMarkers(c.body) {
			if m.Start {
				got = append(got, m.Line)
			} else {
				got = append(got, -m.Line)
			}
		}
		if !slices.Equal(got, c.want) {
			t.Errorf("%s: LoneMarkers = %v, want %v", name, got, c.want)
		}
		// The cheap look lint takes first never passes over a lone
		// marker (front matter before the body, as in a file).
		if len(c.want) > 0 && !MayHaveLoneMarkers([]byte("---\nkk_id: practice-x\n---\n"+c.body)) {
			t.Errorf("%s: MayHaveLoneMarkers = false, want true", name)
		}
	}
}

// MayHaveLoneMarkers passes over the files kk writes: no marker, or each
// block whole and once.
func TestMayHaveLoneMarkersPassesWholeBlocks(t *testing.T) {
	related := RelatedStart + "\n# Related\n\n- Related: [a](/a.md)\n" + RelatedEnd + "\n"
	citations := CitationsStart + "\n# Citations\n\n[1] [x](x)\n" + CitationsEnd + "\n"
	for _, body := range []string{"Text.\n", "Text.\n\n" + related, "Text.\n\n" + related + "\n" + citations} {
		src := []byte("---\nkk_id: practice-x\n---\n" + body)
		if MayHaveLoneMarkers(src) {
			t.Errorf("MayHaveLoneMarkers(%q) = true, want false", body)
		}
		if got := LoneMarkers(body); len(got) != 0 {
			t.Errorf("LoneMarkers(%q) = %v", body, got)
		}
	}
}

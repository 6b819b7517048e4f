package op

import (
	"runtime"
	"strings"
	"testing"
)

// allocated is how many bytes fn allocates.
func allocated(fn func()) uint64 {
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	fn()
	runtime.ReadMemStats(&after)
	return after.TotalAlloc - before.TotalAlloc
}

// TestDeepNestingCostsItsSize: the strict check of a parameter object
// costs memory in proportion to its size, however deep it nests, and
// refuses, naming the problem, a nesting deeper than Go's decoder takes
// (MaxDepth). Found by the serve red team, round 5: a 200 KB body of
// 100,000 nested arrays (POST /content, under the 1 MiB limit) made kk
// serve allocate some 10 GB and spend 22 s of CPU, and its memory stayed
// at 15 GB: each level built the JSON pointer of its place, whole.
func TestDeepNestingCostsItsSize(t *testing.T) {
	nested := func(depth int) []byte {
		return []byte(`{"name":"x","entities":` + strings.Repeat("[", depth) + strings.Repeat("]", depth) + `}`)
	}
	// Under the limit: accepted by the check (the decode then says the
	// type is wrong), for a few MB.
	raw := nested(MaxDepth - 10)
	var err error
	if n := allocated(func() { err = CheckRaw(raw) }); n > 16<<20 {
		t.Errorf("checking %d bytes nested %d deep allocated %d MB", len(raw), MaxDepth-10, n>>20)
	}
	if err != nil {
		t.Errorf("a nesting under the limit: %v", err)
	}
	// Over it: refused at once, saying so.
	raw = nested(100000)
	if n := allocated(func() { err = CheckRaw(raw) }); n > 16<<20 {
		t.Errorf("checking %d bytes nested 100000 deep allocated %d MB", len(raw), n>>20)
	}
	e, ok := err.(*Error)
	if !ok || e.Code != CodeValidation || !strings.Contains(e.Message, "/entities/0/0/0") || !strings.Contains(e.Message, "nested deeper than 10000") || len(e.Message) > 1000 {
		t.Errorf("a nesting over the limit: %v", err)
	}
	// The places named in errors deep down are still exact.
	var p params
	err = DecodeStrict([]byte(`{"entities":[{"id":"a"},{"id":"b","id":"c"}]}`), &p)
	if e, ok := err.(*Error); !ok || !strings.Contains(e.Message, "/entities/1/id: is given twice") {
		t.Errorf("a key twice deep down: %v", err)
	}
	err = DecodeStrict([]byte(`{"entities":[{"id":"a"},{"i~d/x":"b","I~D/X":"c"}]}`), &p)
	if e, ok := err.(*Error); !ok || !strings.Contains(e.Message, "/entities/1/I~0D~1X: is given twice (as i~d/x and I~D/X)") {
		t.Errorf("keys differing in case deep down: %v", err)
	}
}

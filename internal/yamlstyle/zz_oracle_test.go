package yamlstyle

// TEMPORARY differential test against /tmp/oracle/dump.js; not to be kept.

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"math/rand"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"
)

var pieces = []string{
	"a", "b", "word", "Hello", "x1", "ü", "é", "中文", "😀", "\U0001F600x", " ", "  ", " ", "\n", "\n\n", "\t", "\r", "\x00", "\x07", "\u0085", "\u00a0", "\u2028", "\u2029", "\ufeff", "\ufffe", "\x1b", "\x7f",
	":", ": ", " :", "#", " #", "# ", "'", "\"", "\\", "-", "- ", "?", "? ", ",", "[", "]", "{", "}", "&", "*", "!", "|", ">", "%", "@", "`", "=", "~", "<<", "<",
	"true", "True", "false", "null", "NULL", "~", "0x1F", "0x", "0b101", "0b", "07", "09", "0o17", "1_000", "_1", "1_", "1:30", "1:60", "-1:30", ".5", "+.5", "1e5", "1E+5", "1.", "-0", "+0", "0", ".inf", "-.Inf", ".NaN", ".nan", "yes", "no", "on", "Off", "y", "N",
	"2024-01-02", "2024-1-2 10:00:00", "2026-05-01T10:00:00.000Z", "2001-12-14t21:59:43.10-05:00", "12:30:45",
	"https://example.com/a?b=c#d", "C:\\path",
}

func randWord(r *rand.Rand) string {
	n := 1 + r.Intn(12)
	var b strings.Builder
	for i := 0; i < n; i++ {
		b.WriteByte("abcdefghijklmnopqrstuvwxyz0123456789"[r.Intn(36)])
	}
	return b.String()
}

func randString(r *rand.Rand) string {
	switch r.Intn(10) {
	case 0:
		return pieces[r.Intn(len(pieces))]
	case 1, 2: // long prose, maybe multi-line
		var b strings.Builder
		n := 5 + r.Intn(60)
		for i := 0; i < n; i++ {
			if i > 0 {
				switch r.Intn(20) {
				case 0:
					b.WriteString("\n")
				case 1:
					b.WriteString("  ")
				case 2:
					b.WriteString("\n  ")
				case 3:
					b.WriteString("\n\n")
				default:
					b.WriteString(" ")
				}
			}
			if r.Intn(8) == 0 {
				b.WriteString(pieces[r.Intn(len(pieces))])
			} else {
				b.WriteString(randWord(r))
			}
		}
		if r.Intn(4) == 0 {
			b.WriteString(strings.Repeat("\n", r.Intn(3)))
		}
		if r.Intn(6) == 0 {
			return strings.Repeat(" ", r.Intn(2)+1) + b.String()
		}
		return b.String()
	case 3: // long token without spaces
		var b strings.Builder
		n := 30 + r.Intn(120)
		for b.Len() < n {
			b.WriteString(randWord(r))
			if r.Intn(3) == 0 {
				b.WriteString("/")
			}
		}
		return b.String()
	default:
		var b strings.Builder
		n := r.Intn(8)
		for i := 0; i < n; i++ {
			if r.Intn(2) == 0 {
				b.WriteString(randWord(r))
			} else {
				b.WriteString(pieces[r.Intn(len(pieces))])
			}
		}
		return b.String()
	}
}

type gen struct{ r *rand.Rand }

// value returns a Go value and its oracle encoding.
func (g gen) value(depth int) (any, any) {
	r := g.r
	k := r.Intn(20)
	if depth > 2 && k >= 15 {
		k = 0
	}
	switch {
	case k < 9:
		s := randString(r)
		return s, s
	case k == 9:
		return nil, nil
	case k == 10:
		b := r.Intn(2) == 0
		return b, b
	case k == 11:
		n := r.Int63n(1<<53) - 1<<52
		if r.Intn(2) == 0 {
			n = int64(r.Intn(2000) - 1000)
		}
		return n, n
	case k == 12:
		var f float64
		switch r.Intn(10) {
		case 0:
			f = math.NaN()
		case 1:
			f = math.Inf(1 - 2*r.Intn(2))
		case 2:
			f = math.Copysign(0, -1)
		case 3:
			f = float64(r.Intn(1000))
		case 4:
			f = math.Pow(10, float64(r.Intn(60)-30)) * float64(1+r.Intn(9))
		case 5:
			f = r.NormFloat64() * math.Pow(10, float64(r.Intn(50)-25))
		default:
			f = r.NormFloat64() * 1000
		}
		var enc any = f
		switch {
		case math.IsNaN(f):
			enc = map[string]any{"$num": "NaN"}
		case math.IsInf(f, 1):
			enc = map[string]any{"$num": "Infinity"}
		case math.IsInf(f, -1):
			enc = map[string]any{"$num": "-Infinity"}
		case f == 0 && math.Signbit(f):
			enc = map[string]any{"$num": "-0"}
		}
		return f, enc
	case k == 13:
		ms := r.Int63n(2*8.64e15) - 8.64e15
		if r.Intn(2) == 0 {
			ms = r.Int63n(4e12)
		}
		t := time.UnixMilli(ms)
		return t, map[string]any{"$date": ms}
	case k == 14 || k == 15 || k == 16:
		n := r.Intn(4)
		gv := make([]any, n)
		ev := make([]any, n)
		for i := range gv {
			gv[i], ev[i] = g.value(depth + 1)
		}
		return gv, ev
	default:
		m, e := g.mapping(depth+1, r.Intn(4))
		return m, e
	}
}

func (g gen) key() string {
	r := g.r
	switch r.Intn(6) {
	case 0:
		return fmt.Sprint(r.Intn(20))
	case 1:
		return randString(r)
	case 2:
		if r.Intn(50) == 0 {
			return strings.Repeat(randWord(r)+" ", 100+r.Intn(200))
		}
		return randWord(r)
	default:
		return randWord(r)
	}
}

func (g gen) mapping(depth, n int) (Map, any) {
	seen := map[string]bool{"__proto__": true}
	var m Map
	var enc [][]any
	for i := 0; i < n; i++ {
		k := g.key()
		if seen[k] {
			continue
		}
		seen[k] = true
		gv, ev := g.value(depth)
		m = append(m, MapItem{k, gv})
		enc = append(enc, []any{k, ev})
	}
	if enc == nil {
		enc = [][]any{}
	}
	return m, map[string]any{"$map": enc}
}

func TestOracle(t *testing.T) {
	if _, err := os.Stat("/tmp/oracle/dump.js"); err != nil {
		t.Skip("no oracle")
	}
	g := gen{rand.New(rand.NewSource(seed()))}
	const N = 20000
	var docs []Map
	var in bytes.Buffer
	for i := 0; i < N; i++ {
		m, e := g.mapping(0, g.r.Intn(6))
		docs = append(docs, m)
		b, err := json.Marshal(e)
		if err != nil {
			t.Fatal(err)
		}
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
	if len(lines) != N {
		t.Fatalf("got %d lines", len(lines))
	}
	fails := 0
	for i, l := range lines {
		var want string
		if err := json.Unmarshal([]byte(l), &want); err != nil {
			t.Fatal(err)
		}
		got, err := Marshal(docs[i])
		if err != nil {
			t.Fatalf("doc %d: %v", i, err)
		}
		if string(got) != want {
			fails++
			if fails < 6 {
				t.Errorf("doc %d mismatch\n--- go:\n%q\n--- js:\n%q", i, got, want)
			}
		}
	}
	t.Logf("%d/%d mismatches", fails, N)
	all := strings.Join(lines, "")
	for _, s := range []string{">-", ">+", "|-", "|+", "|2", ">2", `\"`, "'", "? ", "e+", ".e-", ".nan", "-0.0", "T", `\\U`, `\\x`, "- - ", "{}", "[]"} {
		t.Logf("%q: %d", s, strings.Count(all, s))
	}
}

func seed() int64 {
	var s int64 = 7
	fmt.Sscan(os.Getenv("SEEDX"), &s)
	return s
}

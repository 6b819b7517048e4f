package yamlstyle

// TEMPORARY: checks the committed table expectations against the node oracle.

import (
	"bytes"
	"encoding/json"
	"math"
	"os"
	"os/exec"
	"reflect"
	"strings"
	"testing"
	"time"
)

func enc(v any) any {
	switch x := v.(type) {
	case Map:
		var kv [][]any
		for _, it := range x {
			kv = append(kv, []any{it.Key, enc(it.Value)})
		}
		if kv == nil {
			kv = [][]any{}
		}
		return map[string]any{"$map": kv}
	case []MapItem:
		return enc(Map(x))
	case time.Time:
		return map[string]any{"$date": x.UnixMilli()}
	case float64:
		switch {
		case math.IsNaN(x):
			return map[string]any{"$num": "NaN"}
		case math.IsInf(x, 1):
			return map[string]any{"$num": "Infinity"}
		case math.IsInf(x, -1):
			return map[string]any{"$num": "-Infinity"}
		case x == 0 && math.Signbit(x):
			return map[string]any{"$num": "-0"}
		}
		return x
	case string, bool, nil, int, int64, uint8:
		return x
	}
	rv := reflect.ValueOf(v)
	if rv.Kind() == reflect.Slice {
		out := []any{}
		for i := 0; i < rv.Len(); i++ {
			out = append(out, enc(rv.Index(i).Interface()))
		}
		return out
	}
	panic(v)
}

func TestOracleTables(t *testing.T) {
	var docs []Map
	for _, tc := range scalarTests {
		if tc.name == "big int64" || tc.name == "time extended year" {
			continue
		}
		docs = append(docs, Map{{"k", tc.in}})
	}
	var in bytes.Buffer
	for _, d := range docs {
		b, _ := json.Marshal(enc(d))
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
	for i, l := range lines {
		var want string
		json.Unmarshal([]byte(l), &want)
		got, _ := Marshal(docs[i])
		if string(got) != want {
			t.Errorf("%v: go %q js %q", docs[i], got, want)
		}
	}
	t.Logf("checked %d", len(lines))
}

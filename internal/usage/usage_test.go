package usage

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/kk-project/kk/internal/contracts"
	"github.com/kk-project/kk/internal/curate"
	"github.com/kk-project/kk/internal/store"
	"github.com/kk-project/kk/internal/txn"
)

func TestRecordAndRead(t *testing.T) {
	k := store.New(t.TempDir())
	e := Entry{Document: "practice-a", Type: TypeLeaf, SessionID: "s1", UsedAt: "2026-01-01T00:00:00.000Z"}
	if err := Record(k, e, Entry{Document: "nodes/index.md", Type: TypeIndex, SessionID: "s1", UsedAt: "2026-01-01T00:00:01Z"}); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(Path(k))
	if err != nil {
		t.Fatal(err)
	}
	want := `{"document":"practice-a","type":"leaf","session_id":"s1","used_at":"2026-01-01T00:00:00.000Z"}` + "\n" +
		`{"document":"nodes/index.md","type":"index","session_id":"s1","used_at":"2026-01-01T00:00:01Z"}` + "\n"
	if string(data) != want {
		t.Errorf("ledger:\n%s\nwant\n%s", data, want)
	}
	if err := Record(k); err != nil {
		t.Errorf("recording nothing: %v", err)
	}
	entries, bad, err := Read(k)
	if err != nil || len(entries) != 2 || len(bad) != 0 || entries[0] != e {
		t.Errorf("Read: %+v, %+v, %v", entries, bad, err)
	}
}

func TestRecordRejectsInvalidEntries(t *testing.T) {
	k := store.New(t.TempDir())
	good := Entry{Document: "practice-a", Type: TypeLeaf, SessionID: "s1", UsedAt: "2026-01-01T00:00:00Z"}
	for _, c := range []struct {
		mut  func(*Entry)
		want string
	}{
		{func(e *Entry) { e.Document = " " }, `entry 2: field "document" is empty`},
		{func(e *Entry) { e.Document = "a\nb" }, `field "document" holds a line break`},
		{func(e *Entry) { e.Type = "page" }, `field "type" is "page"`},
		{func(e *Entry) { e.SessionID = "" }, `field "session_id" is empty`},
		{func(e *Entry) { e.UsedAt = "yesterday" }, `field "used_at" is "yesterday"`},
	} {
		bad := good
		c.mut(&bad)
		err := Record(k, good, bad)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("err = %v, want %q", err, c.want)
		}
		if _, err := os.Stat(Path(k)); !os.IsNotExist(err) {
			t.Fatal("an invalid batch wrote to the ledger")
		}
	}
}

// Many sessions recording at once lose and tear no line.
func TestRecordConcurrent(t *testing.T) {
	k := store.New(t.TempDir())
	const writers, each = 16, 60
	var wg sync.WaitGroup
	errs := make(chan error, writers*each)
	for w := range writers {
		wg.Go(func() {
			for i := range each {
				// Long documents make a torn write visible.
				doc := fmt.Sprintf("practice-%d-%d-%s", w, i, strings.Repeat("x", 300))
				e := Entry{Document: doc, Type: TypeLeaf, SessionID: fmt.Sprint("s", w), UsedAt: time.Unix(int64(i), 0).UTC().Format(time.RFC3339)}
				if err := Record(k, e, e); err != nil {
					errs <- err
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	entries, bad, err := Read(k)
	if err != nil {
		t.Fatal(err)
	}
	if len(bad) != 0 || len(entries) != writers*each*2 {
		t.Fatalf("%d entries, %d bad lines (%+v)", len(entries), len(bad), bad)
	}
	seen := map[string]int{}
	for _, e := range entries {
		seen[e.Document]++
	}
	for doc, n := range seen {
		if n != 2 {
			t.Fatalf("%s recorded %d times", doc[:20], n)
		}
	}
}

func TestReadSkipsBadLines(t *testing.T) {
	k := store.New(t.TempDir())
	if err := os.MkdirAll(k.StateDir(), 0o755); err != nil {
		t.Fatal(err)
	}
	ledger := `{"document":"practice-a","type":"leaf","session_id":"s1","used_at":"2026-01-01T00:00:00Z"}

not json
{"document":"practice-a","type":"nope","session_id":"s1","used_at":"2026-01-01T00:00:00Z"}
{"document":"practice-a","type":"leaf","session_id":"s2","used_at":"2026-01-01T00:00:00Z"}
{"document":"practice-a","ty`
	if err := os.WriteFile(Path(k), []byte(ledger), 0o644); err != nil {
		t.Fatal(err)
	}
	entries, bad, err := Read(k)
	if err != nil {
		t.Fatal(err)
	}
	if len(entries) != 2 || len(bad) != 3 || bad[0].Line != 3 || bad[1].Line != 4 || bad[2].Line != 6 {
		t.Errorf("entries %d, bad %+v", len(entries), bad)
	}
}

func TestSummary(t *testing.T) {
	ctx := context.Background()
	k := store.New(t.TempDir())
	if _, err := txn.Init(ctx, k, store.InitOptions{Version: "test", Now: time.Unix(0, 0)}); err != nil {
		t.Fatal(err)
	}
	for _, in := range []contracts.NodeInput{
		{Type: "practice", Title: "Alpha", Description: "a", Folder: "http"},
		{Type: "practice", Title: "Beta", Description: "b"},
		{Type: "map", Title: "Gamma", Description: "c", Folder: "db"},
		{Type: "map", Title: "Delta", Description: "d"},
		{Type: "map", Title: "Epsilon", Description: "e"},
	} {
		if _, err := curate.WriteNode(ctx, k, in, curate.WriteOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	// Empty ledger: every node is never read.
	s, err := Load(k, 0)
	if err != nil {
		t.Fatal(err)
	}
	if s.Reads != 0 || s.NeverReadCount != 5 || len(s.MostRead) != 0 || s.LiveNodes != 5 {
		t.Errorf("empty ledger: %+v", s)
	}
	at := func(m int) string { return time.Date(2026, 1, 1, 0, m, 0, 0, time.UTC).Format(time.RFC3339) }
	var entries []Entry
	add := func(doc, typ, session string, n int) {
		for range n {
			entries = append(entries, Entry{Document: doc, Type: typ, SessionID: session, UsedAt: at(len(entries))})
		}
	}
	add("practice-alpha", TypeLeaf, "s1", 3)
	add(".ai/kenkeep/nodes/http/practice-alpha.md", TypeLeaf, "s2", 1) // a path resolves to the id
	add("nodes/db/map-gamma.md", TypeLeaf, "s1", 2)
	add("practice-beta", TypeLeaf, "s3", 2)
	add("nodes/index.md", TypeIndex, "s1", 2)
	add("nodes/http/index.md", TypeIndex, "s2", 1)
	add("practice-retired", TypeLeaf, "s2", 1)
	add("/home/me/repo/.ai/kenkeep/nodes/map-delta.md", TypeLeaf, "s3", 1)
	if err := Record(k, entries...); err != nil {
		t.Fatal(err)
	}
	s, err = Load(k, 2)
	if err != nil {
		t.Fatal(err)
	}
	got, _ := json.Marshal(s)
	want := `{"reads":13,"sessions":3,"live_nodes":5,"read_nodes":4,` +
		`"most_read":[{"id":"practice-alpha","path":"http/practice-alpha.md","reads":4,"sessions":2,"last_read":"2026-01-01T00:03:00Z"},` +
		`{"id":"map-gamma","path":"db/map-gamma.md","reads":2,"sessions":1,"last_read":"2026-01-01T00:05:00Z"}],` +
		`"least_read":[{"id":"map-delta","path":"map-delta.md","reads":1,"sessions":1,"last_read":"2026-01-01T00:12:00Z"},` +
		`{"id":"map-gamma","path":"db/map-gamma.md","reads":2,"sessions":1,"last_read":"2026-01-01T00:05:00Z"}],` +
		`"never_read":[{"id":"map-epsilon","path":"map-epsilon.md","reads":0,"sessions":0}],"never_read_count":1,` +
		`"indexes":[{"document":"nodes/index.md","reads":2,"sessions":1},{"document":"nodes/http/index.md","reads":1,"sessions":1}],` +
		`"unresolved":[{"document":"practice-retired","reads":1,"sessions":1}],"bad_lines":[]}`
	if string(got) != want {
		t.Errorf("summary\n%s\nwant\n%s", got, want)
	}
}

func TestSummaryLastReadByInstant(t *testing.T) {
	ctx := context.Background()
	k := store.New(t.TempDir())
	if _, err := txn.Init(ctx, k, store.InitOptions{Version: "test", Now: time.Unix(0, 0)}); err != nil {
		t.Fatal(err)
	}
	if _, err := curate.WriteNode(ctx, k, contracts.NodeInput{Type: "practice", Title: "A", Description: "a"}, curate.WriteOptions{}); err != nil {
		t.Fatal(err)
	}
	// As strings "…:01Z" sorts after "…:01.5Z" and "01:00:00+02:00" after
	// "00:30:00Z"; as instants the latest is 00:30:00Z.
	for _, at := range []string{"2026-01-01T00:00:01.5Z", "2026-01-01T00:30:00Z", "2026-01-01T00:00:01Z", "2026-01-01T01:00:00+02:00"} {
		if err := Record(k, Entry{Document: "practice-a", Type: TypeLeaf, SessionID: "s", UsedAt: at}); err != nil {
			t.Fatal(err)
		}
	}
	s, err := Load(k, 0)
	if err != nil {
		t.Fatal(err)
	}
	if len(s.MostRead) != 1 || s.MostRead[0].LastRead != "2026-01-01T00:30:00Z" || s.MostRead[0].Reads != 4 {
		t.Errorf("most read: %+v", s.MostRead)
	}
}

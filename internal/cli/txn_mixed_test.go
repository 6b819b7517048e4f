//go:build unix

package cli

import (
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"sync"
	"testing"
	"time"
)

// TestMixedWriters runs six kinds of writer as concurrent processes for
// 30 seconds: kk node write, kk upsert (kb_upsert), kk graph update with
// the version it read (manage_graph, retrying on CONFLICT), kk changelog
// append, kk curate-persist and kk index rebuild. Every write a writer
// reports as done must then be in the tree, and index rebuild --check,
// lint and check must be clean.
func TestMixedWriters(t *testing.T) {
	if testing.Short() {
		t.Skip("runs writers for 30 s; run without -short")
	}
	kb := newKillKB(t)
	kb.run("The handlers.\n", "graph", "create", "atom", "--name", "Shared atom", "--path", "internal/**", "--knowledge-file", "-", "--task", "T-0")
	kb.run("The log.\n", "graph", "create", "atom", "--name", "Log atom", "--path", "cmd/**", "--knowledge-file", "-", "--task", "T-0")
	const atom, logAtom = "map-shared-atom", "map-log-atom"
	deadline := time.Now().Add(30 * time.Second)

	var mu sync.Mutex
	var notes, reqs, appended, changelog, curated []string
	done := func(list *[]string, v string) {
		mu.Lock()
		*list = append(*list, v)
		mu.Unlock()
	}
	var wg sync.WaitGroup
	writer := func(name string, step func(n int) error) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for n := 0; time.Now().Before(deadline); n++ {
				if err := step(n); err != nil {
					t.Errorf("%s %d: %v", name, n, err)
					return
				}
			}
		}()
	}
	run := func(stdin string, args ...string) (string, error) {
		out, err := kb.command(stdin, args...).CombinedOutput()
		if err != nil {
			return string(out), fmt.Errorf("kk %s: %v\n%s", strings.Join(args, " "), err, out)
		}
		return string(out), nil
	}
	writer("node write", func(n int) error {
		if _, err := run(fmt.Sprintf("note token nw%d\n", n), "node", "write", "practice", fmt.Sprintf("mixed %d", n), "--summary", "mixed writer"); err != nil {
			return err
		}
		done(&notes, fmt.Sprintf("practice-mixed-%d", n))
		return nil
	})
	writer("upsert", func(n int) error {
		if _, err := run("", "upsert", "--type", "req", "--id", fmt.Sprintf("MX-%d", n), "--title", fmt.Sprintf("Mixed requirement %d", n), "--priority", "should"); err != nil {
			return err
		}
		done(&reqs, fmt.Sprintf("MX-%d", n))
		return nil
	})
	writer("graph update", func(n int) error {
		for {
			out, err := run("", "graph", "get", atom, "--json")
			if err != nil {
				return err
			}
			var got struct {
				Data struct {
					Version int64 `json:"version"`
				} `json:"data"`
			}
			if err := json.Unmarshal([]byte(out), &got); err != nil || got.Data.Version < 1 {
				return fmt.Errorf("graph get: %v\n%s", err, out)
			}
			tok := fmt.Sprintf("gu%d", n)
			out, err = run(tok+"\n", "graph", "update", atom, "--version", fmt.Sprint(got.Data.Version), "--knowledge-mode", "append", "--knowledge-file", "-", "--task", "T-1")
			if err == nil {
				done(&appended, tok)
				return nil
			}
			if !strings.Contains(out, "CONFLICT") {
				return err
			}
			if time.Now().After(deadline) {
				return nil
			}
		}
	})
	// A changelog entry changes the atom's version too, so one on the
	// shared atom at every step would starve the graph updater under -race,
	// where each kk run takes about as long as the other's read-then-write.
	// Every fourth entry still lands on the shared atom.
	writer("changelog append", func(n int) error {
		s, target := fmt.Sprintf("change cl%d", n), logAtom
		if n%4 == 0 {
			target = atom
		}
		if _, err := run("", "changelog", "append", "atom", target, "--task", "T-2", "--summary", s); err != nil {
			return err
		}
		done(&changelog, target+" "+s)
		return nil
	})
	writer("curate-persist", func(n int) error {
		actions := fmt.Sprintf(`[{"action": "add", "candidate_origin": "docs/mixed-%d.md", "target_node_id": null, "home_folder": null,
			"proposed_node": {"title": "Curated %d", "type": "map", "tags": ["mixed"], "description": "curated while others write", "body": "curated body %d", "kk_confidence": "high", "kk_relates_to": []},
			"rationale": "new"}]`, n, n, n)
		if _, err := run(actions, "curate-persist", "--input", "-"); err != nil {
			return err
		}
		done(&curated, fmt.Sprintf("map-curated-%d", n))
		return nil
	})
	writer("index rebuild", func(int) error {
		_, err := run("", "index", "rebuild")
		return err
	})
	wg.Wait()
	if t.Failed() {
		return
	}

	// Every write reported as done is there.
	for _, id := range notes {
		if _, err := os.Stat(kb.k.NodePath(id + ".md")); err != nil {
			t.Errorf("node write of %s was lost", id)
		}
	}
	for _, id := range reqs {
		if _, err := os.Stat(kb.k.NodePath("requirements/" + id + ".md")); err != nil {
			t.Errorf("upsert of %s was lost", id)
		}
	}
	for _, id := range curated {
		if _, err := os.Stat(kb.k.NodePath(id + ".md")); err != nil {
			t.Errorf("curate-persist of %s was lost", id)
		}
	}
	leaf, err := os.ReadFile(kb.k.NodePath("graph/" + atom + ".md"))
	if err != nil {
		t.Fatal(err)
	}
	for _, tok := range appended {
		if !strings.Contains(string(leaf), tok+"\n") {
			t.Errorf("graph update %s was lost", tok)
		}
	}
	logLeaf, err := os.ReadFile(kb.k.NodePath("graph/" + logAtom + ".md"))
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range changelog {
		target, s, _ := strings.Cut(e, " ")
		in := leaf
		if target == logAtom {
			in = logLeaf
		}
		if !strings.Contains(string(in), s+"\n") {
			t.Errorf("changelog entry %q on %s was lost", s, target)
		}
	}
	t.Logf("done in 30 s: %d node writes, %d upserts, %d graph updates, %d changelog entries, %d curated leaves",
		len(notes), len(reqs), len(appended), len(changelog), len(curated))
	if len(notes)*len(reqs)*len(appended)*len(changelog)*len(curated) == 0 {
		t.Fatal("a writer never finished a write")
	}
	kb.run("", "index", "rebuild", "--check")
	kb.run("", "lint")
	kb.run("", "check")
}

package curate_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/kk-project/kk/internal/benchtree"
	"github.com/kk-project/kk/internal/contracts"
	"github.com/kk-project/kk/internal/curate"
	"github.com/kk-project/kk/internal/session"
	"github.com/kk-project/kk/internal/store"
	"github.com/kk-project/kk/internal/txn"
)

// benchCurate builds a 10k-leaf knowledge base with 100 extracted session
// logs of 5 candidates each, and a curator batch of 500 actions about
// them: 400 adds (a tenth of them duplicates), 50 modifies and 50
// contradictions of existing leaves. It returns the batch as JSON and the
// session logs' bytes, to restore between iterations.
func benchCurate(b *testing.B) (*store.KB, []byte, map[string][]byte) {
	b.Helper()
	dir := b.TempDir()
	k, err := benchtree.Generate(dir, benchtree.Options{Nodes: 10000, Seed: 1})
	if err != nil {
		b.Fatal(err)
	}
	if _, err := txn.Rebuild(context.Background(), k, txn.Meta{Command: "test"}, txn.RebuildOptions{}); err != nil {
		b.Fatal(err)
	}
	t, err := k.ReadTree(store.LoadOptions{})
	if err != nil {
		b.Fatal(err)
	}
	now := time.Date(2026, 5, 23, 12, 0, 0, 0, time.UTC)
	var actions []contracts.CuratorAction
	for s := range 100 {
		id := fmt.Sprintf("%08x-0000-4000-8000-%012x", s, s)
		var cands []contracts.Candidate
		for c := range 5 {
			cands = append(cands, contracts.Candidate{Type: "practice", Tags: []string{"bench"}, Title: fmt.Sprintf("Candidate %d %d", s, c),
				Description: "d", Body: "Body of the candidate.\n\nWith a second paragraph.", Confidence: "medium"})
		}
		if _, err := session.StageLive(context.Background(), k, session.StageOptions{SessionID: id, Excerpt: "excerpt", Now: now.Add(time.Duration(s) * time.Minute),
			Proposals: contracts.ProposalOutput{Practice: cands, Map: []contracts.Candidate{}}}); err != nil {
			b.Fatal(err)
		}
		for c := range 5 {
			i := s*5 + c
			origin := fmt.Sprintf("%s:practice:%d", id, c)
			p := &contracts.ProposedNode{Title: fmt.Sprintf("Bench node %d", i-i%10*(i%40/39)), Type: "practice", Tags: []string{"bench", "curate"},
				Description: "A node proposed by the benchmark", Body: "Body.\n", Confidence: []string{"low", "medium", "high"}[i%3], RelatesTo: []string{}, DependsOn: []string{}}
			a := contracts.CuratorAction{Action: contracts.ActionAdd, CandidateOrigin: origin, ProposedNode: p, Rationale: "bench"}
			switch {
			case i%10 == 8:
				leaf := t.Leaves[i*13%len(t.Leaves)]
				p.Type, p.Title = leaf.Type, leaf.Title
				a.Action, a.TargetNodeID = contracts.ActionModify, &leaf.ID
			case i%10 == 9:
				leaf := t.Leaves[i*17%len(t.Leaves)]
				p.Type, p.Title = leaf.Type, leaf.Title
				a.Action, a.TargetNodeID = contracts.ActionContradict, &leaf.ID
			}
			actions = append(actions, a)
		}
	}
	input, err := json.Marshal(actions)
	if err != nil {
		b.Fatal(err)
	}
	logs := map[string][]byte{}
	entries, _ := os.ReadDir(k.SessionsDir())
	for _, e := range entries {
		p := filepath.Join(k.SessionsDir(), e.Name())
		data, err := os.ReadFile(p)
		if err != nil {
			b.Fatal(err)
		}
		logs[p] = data
	}
	return k, input, logs
}

// BenchmarkCurateDedup500Into10k times `kk curate-dedup` on 500 actions
// (parse, schema check, dedup, conflict files, survivors file, stamping
// 100 session logs) in a 10k-leaf knowledge base.
func BenchmarkCurateDedup500Into10k(b *testing.B) {
	k, input, logs := benchCurate(b)
	out := filepath.Join(b.TempDir(), "survivors.json")
	for b.Loop() {
		b.StopTimer()
		for p, data := range logs {
			if err := os.WriteFile(p, data, 0o644); err != nil {
				b.Fatal(err)
			}
		}
		if err := os.RemoveAll(k.ConflictsDir()); err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
		actions, err := curate.DecodeActions("input", input)
		if err != nil {
			b.Fatal(err)
		}
		res, err := curate.RunDedup(context.Background(), k, actions, curate.DedupOptions{RunID: "bench", Output: out, Now: time.Now()})
		if err != nil {
			b.Fatal(err)
		}
		if res.Stamped != 100 || res.Conflicts != 50 {
			b.Fatalf("%+v", res)
		}
	}
}

// BenchmarkCuratePersist500Into10k times `kk curate-persist` of the
// survivors of that batch (about 400 new leaves and 50 modified ones)
// into a 10k-leaf tree, index regeneration included.
func BenchmarkCuratePersist500Into10k(b *testing.B) {
	k, input, _ := benchCurate(b)
	actions, err := curate.DecodeActions("input", input)
	if err != nil {
		b.Fatal(err)
	}
	survivors := curate.Dedup(actions)
	var keep []contracts.CuratorAction
	for _, a := range survivors {
		if a.Action != contracts.ActionContradict {
			keep = append(keep, a)
		}
	}
	// Snapshot the leaves the batch modifies, to restore them.
	originals := map[string][]byte{}
	t, err := k.ReadTree(store.LoadOptions{})
	if err != nil {
		b.Fatal(err)
	}
	for _, a := range keep {
		if a.TargetNodeID != nil {
			n, _ := t.ByID(*a.TargetNodeID)
			data, err := os.ReadFile(k.NodePath(n.Path))
			if err != nil {
				b.Fatal(err)
			}
			originals[k.NodePath(n.Path)] = data
		}
	}
	for b.Loop() {
		b.StopTimer()
		for p, data := range originals {
			if err := os.WriteFile(p, data, 0o644); err != nil {
				b.Fatal(err)
			}
		}
		b.StartTimer()
		rep, err := curate.Persist(context.Background(), k, keep, curate.PersistOptions{})
		if err != nil {
			b.Fatal(err)
		}
		b.StopTimer()
		if rep.Failed != 0 || rep.Written < 400 {
			b.Fatalf("written %d failed %d", rep.Written, rep.Failed)
		}
		for _, r := range rep.Results {
			if r.Action == contracts.ActionAdd {
				if err := os.Remove(k.NodePath(r.Path)); err != nil {
					b.Fatal(err)
				}
			}
		}
		b.StartTimer()
	}
}

package curate

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"time"

	"github.com/kk-project/kk/internal/store"
	"github.com/kk-project/kk/internal/txn"
)

// BootstrapState is .state/bootstrap-state.json: which documents a
// bootstrap has turned into nodes, and the content hash it saw, so that a
// re-run skips documents that did not change.
type BootstrapState struct {
	SchemaVersion     int                     `json:"schema_version"`
	LastFullBootstrap string                  `json:"last_full_bootstrap_at,omitempty"`
	LastIncremental   string                  `json:"last_incremental_at,omitempty"`
	Docs              map[string]BootstrapDoc `json:"docs"`
}

// BootstrapDoc is one processed document.
type BootstrapDoc struct {
	ContentSHA256   string   `json:"content_sha256"`
	LastProcessedAt string   `json:"last_processed_at"`
	ProducedNodes   []string `json:"produced_nodes"`
}

// bootstrapStateFile is the bootstrap state, relative to .ai/kenkeep.
const bootstrapStateFile = ".state/bootstrap-state.json"

func bootstrapStatePath(k *store.KB) string {
	return filepath.Join(k.Dir, filepath.FromSlash(bootstrapStateFile))
}

// ReadBootstrapState reads the bootstrap state; a missing file is empty.
func ReadBootstrapState(k *store.KB) (*BootstrapState, error) {
	st := &BootstrapState{SchemaVersion: 1, Docs: map[string]BootstrapDoc{}}
	data, err := os.ReadFile(bootstrapStatePath(k))
	if errors.Is(err, fs.ErrNotExist) {
		return st, nil
	}
	if err != nil {
		return nil, err
	}
	if err := json.Unmarshal(data, st); err != nil {
		return nil, fmt.Errorf("%s: %v", k.Rel(bootstrapStatePath(k)), err)
	}
	if st.Docs == nil {
		st.Docs = map[string]BootstrapDoc{}
	}
	return st, nil
}

// recordBootstrapSource notes, in the transaction, that doc (with content
// hash sum) produced id.
func recordBootstrapSource(tx *txn.Tx, doc, sum, id string) error {
	k := tx.KB()
	st := &BootstrapState{SchemaVersion: 1, Docs: map[string]BootstrapDoc{}}
	data, err := tx.StagedFile(bootstrapStateFile)
	if err != nil {
		return err
	}
	if data != nil {
		if err := json.Unmarshal(data, st); err != nil {
			return fmt.Errorf("%s: %v", k.Rel(bootstrapStatePath(k)), err)
		}
		if st.Docs == nil {
			st.Docs = map[string]BootstrapDoc{}
		}
	}
	d := st.Docs[doc]
	if d.ContentSHA256 != sum {
		d.ProducedNodes = nil
	}
	d.ContentSHA256 = sum
	d.LastProcessedAt = tx.Now().UTC().Format(time.RFC3339)
	if !slices.Contains(d.ProducedNodes, id) {
		d.ProducedNodes = append(d.ProducedNodes, id)
		slices.Sort(d.ProducedNodes)
	}
	st.Docs[doc] = d
	out, err := json.MarshalIndent(st, "", "  ")
	if err != nil {
		return err
	}
	tx.WriteFile(bootstrapStateFile, append(out, '\n'))
	return nil
}

// Package curate holds the deterministic primitives of the curation
// pipeline: the curator (an LLM in the host agent session) proposes
// actions as JSON, and these functions check them, merge duplicates, turn
// contradictions into conflict files for a human, stamp the session logs
// they consumed, and write the surviving nodes.
package curate

import (
	"encoding/json"
	"fmt"
	"regexp"

	"github.com/kk-project/kk/internal/contracts"
	"github.com/kk-project/kk/internal/node"
	"github.com/kk-project/kk/internal/schema"
	"github.com/kk-project/kk/internal/session"
)

// DecodeActions parses data as a curator-output document, checks it
// against the schema, and checks what the schema cannot say: every
// home_folder stays inside nodes/. name names the input in errors, which
// point at the failing value with a JSON pointer.
func DecodeActions(name string, data []byte) (contracts.CuratorOutput, error) {
	doc, err := session.ParseJSON(name, data)
	if err != nil {
		return nil, err
	}
	if err := schema.Validate("curator-output", doc); err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	var actions contracts.CuratorOutput
	if err := json.Unmarshal(data, &actions); err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	for i := range actions {
		a := &actions[i]
		if p := a.ProposedNode; p != nil && p.DependsOn == nil {
			p.DependsOn = []string{}
		}
	}
	return actions, nil
}

// CheckHomeFolders refuses a batch with a home_folder that leaves nodes/
// (curate-dedup, before it writes the survivors). curate-persist checks
// each action's folder on its own instead: a bad one fails only its
// action.
func CheckHomeFolders(name string, actions contracts.CuratorOutput) error {
	for i, a := range actions {
		if a.HomeFolder != nil {
			if _, err := node.TreeFolder(*a.HomeFolder); err != nil {
				return fmt.Errorf("%s: /%d/home_folder: %v", name, i, err)
			}
		}
	}
	return nil
}

var runIDPattern = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]*$`)

// MaxRunIDLen bounds a run id, which becomes part of file names.
const MaxRunIDLen = 128

// CheckRunID checks that id can name a curate run: it becomes part of the
// conflict and draft file names, so it is one file name segment of
// letters, digits, ".", "_" and "-", starting with a letter or digit.
func CheckRunID(id string) error {
	if !runIDPattern.MatchString(id) || len(id) > MaxRunIDLen {
		return fmt.Errorf("run id %q: use up to %d letters, digits, '.', '_' and '-', starting with a letter or digit", id, MaxRunIDLen)
	}
	return nil
}

// NewRunID returns a fresh random run id (a UUID v4).
func NewRunID() string { return session.NewID() }

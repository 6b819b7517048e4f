package schema

import (
	"reflect"

	"github.com/kk-project/kk/internal/contracts"
)

// The contracts of capture and curation: what an extraction pass returns
// for a session, and what the curator hands to curate-dedup and
// curate-persist.
var curateEntries = []Entry{
	{Name: "proposal-output", Title: "kk proposal output", Description: "Candidates extracted from one session ({practice, map}), as `kk session-log stage-live` and `update-proposals` take them.", Type: reflect.TypeFor[contracts.ProposalOutput]()},
	{Name: "proposed-node", Title: "kk proposed node", Description: "The node a curator action would write: no id and no provenance, which curate-persist adds.", Type: reflect.TypeFor[contracts.ProposedNode]()},
	{Name: "drafts", Title: "kk curator draft batch", Description: "One sub-agent's batch of curator actions in _logs/curator/<runId>__<n>.draft.json, which `kk drafts collect` validates and aggregates.", Type: reflect.TypeFor[contracts.DraftBatch]()},
	{Name: "curator-output", Title: "kk curator output", Description: "The curator's actions (add, modify, contradict, drop) that `kk curate-dedup` and `kk curate-persist` take.", Type: reflect.TypeFor[contracts.CuratorOutput]()},
}

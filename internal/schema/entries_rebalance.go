package schema

import (
	"reflect"

	"github.com/kk-project/kk/internal/contracts"
)

var rebalanceEntries = []Entry{
	{Name: "rebalance-plan", Title: "kk rebalance plan", Description: "The plan `kk rebalance move` applies: split-folder, merge, create-branch and split-leaf operations, in order.", Type: reflect.TypeFor[contracts.RebalancePlan]()},
	{Name: "place-plan", Title: "kk place plan", Description: "The plan `kk place apply` carries out: a folder for every leaf of a kenkeep v1 flat tree, plus folder summaries.", Type: reflect.TypeFor[contracts.PlacePlan]()},
}

package graph

import "github.com/kk-project/kk/internal/optest"

// The operations as the tests call them, on raw JSON.
var (
	QueryGraphJSON      = optest.JSON(QueryGraph)
	ManageGraphJSON     = optest.JSON(ManageGraph)
	ManageChangelogJSON = optest.JSON(ManageChangelog)
)

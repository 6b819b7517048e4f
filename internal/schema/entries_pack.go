package schema

import (
	"reflect"

	"github.com/kk-project/kk/internal/contracts"
)

var packEntries = []Entry{
	{
		Name:        "pack-manifest",
		Title:       "kk knowledge pack manifest",
		Description: "kenkeep-pack.yaml at the root of a knowledge pack: its name, version, leaf schema version, summary and homepage; unknown keys are an error.",
		Type:        reflect.TypeFor[contracts.PackManifest](),
	},
}

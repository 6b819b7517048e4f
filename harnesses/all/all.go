// Package all registers every harness adapter kk ships.
package all

import (
	"github.com/kk-project/kk/harnesses/claude"
	"github.com/kk-project/kk/harnesses/codex"
	"github.com/kk-project/kk/harnesses/copilot"
	"github.com/kk-project/kk/harnesses/cursor"
	"github.com/kk-project/kk/harnesses/gemini"
	"github.com/kk-project/kk/harnesses/opencode"
	"github.com/kk-project/kk/internal/harness"
)

// Registry returns the registry of every adapter under harnesses/.
func Registry() *harness.Registry {
	r, err := harness.NewRegistry(adapters()...)
	if err != nil {
		panic(err) // two adapters with one id is a programming error, caught by tests
	}
	return r
}

// adapters lists the adapters, one line each.
func adapters() []harness.Adapter {
	return []harness.Adapter{
		claude.New(),
		codex.New(),
		copilot.New(),
		cursor.New(),
		gemini.New(),
		opencode.New(),
	}
}

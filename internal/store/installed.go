package store

import (
	"encoding/json"
	"fmt"
	"os"
)

// Installed is .state/installed-version.
type Installed struct {
	SchemaVersion int      `json:"schema_version"`
	Package       string   `json:"package"`
	Version       string   `json:"version"`
	InstalledAt   string   `json:"installed_at"`
	Harnesses     []string `json:"harnesses"`
	// KKCommand is the `kk init --kk-command` the harness hooks were
	// written with; empty means "kk" found on PATH.
	KKCommand string `json:"kk_command,omitempty"`
}

// ReadInstalled reads .state/installed-version.
func (k *KB) ReadInstalled() (*Installed, error) {
	data, err := os.ReadFile(k.InstalledPath())
	if err != nil {
		return nil, err
	}
	var in Installed
	if err := json.Unmarshal(data, &in); err != nil {
		return nil, fmt.Errorf("%s: %v", k.Rel(k.InstalledPath()), err)
	}
	return &in, nil
}

// GitignoreLines are the lines kk needs in .ai/kenkeep/.gitignore, in order.
var GitignoreLines = []string{"/_sessions/", "/_logs/", "/hooks/", ".state/*", "!.state/installed-version"}

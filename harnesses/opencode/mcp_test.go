package opencode

import (
	"testing"

	"github.com/kk-project/kk/internal/harness/harnesstest"
)

func TestMCPRegistration(t *testing.T) {
	harnesstest.CheckMCPRegistrar(t, New(),
		[]byte("{\n  \"$schema\": \"https://opencode.ai/config.json\",\n  \"model\": \"x\"\n}\n"),
		"\"mcp\": {\n    \"kk\": {\n      \"type\": \"local\",\n      \"command\": [\n        \"kk\",\n        \"mcp\"\n      ],\n      \"enabled\": true")
}

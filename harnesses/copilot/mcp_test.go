package copilot

import (
	"testing"

	"github.com/kk-project/kk/internal/harness/harnesstest"
)

func TestMCPRegistration(t *testing.T) {
	harnesstest.CheckMCPRegistrar(t, New(),
		[]byte("{\n  \"mcpServers\": {\n    \"other\": {\n      \"type\": \"local\",\n      \"command\": \"other\"\n    }\n  }\n}\n"),
		"\"type\": \"local\",\n      \"command\": \"kk\",\n      \"args\": [\n        \"mcp\"\n      ],\n      \"tools\": [\n        \"*\"\n      ]")
}

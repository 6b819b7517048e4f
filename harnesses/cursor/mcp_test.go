package cursor

import (
	"testing"

	"github.com/kk-project/kk/internal/harness/harnesstest"
)

func TestMCPRegistration(t *testing.T) {
	harnesstest.CheckMCPRegistrar(t, New(),
		[]byte("{\n  \"mcpServers\": {\n    \"docs\": {\n      \"url\": \"https://example.invalid/mcp\"\n    }\n  }\n}\n"),
		"\"kk\": {\n      \"command\": \"kk\",\n      \"args\": [\n        \"mcp\"\n      ]")
}

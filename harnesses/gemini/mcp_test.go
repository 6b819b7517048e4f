package gemini

import (
	"testing"

	"github.com/kk-project/kk/internal/harness/harnesstest"
)

func TestMCPRegistration(t *testing.T) {
	harnesstest.CheckMCPRegistrar(t, New(),
		[]byte("{\n  \"theme\": \"dark\"\n}\n"),
		"\"mcpServers\": {\n    \"kk\": {\n      \"command\": \"kk\"")
}

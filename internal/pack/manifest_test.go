package pack

import (
	"errors"
	"strings"
	"testing"

	"github.com/kk-project/kk/internal/contracts"
	"github.com/kk-project/kk/internal/schema"
)

// TestManifest renders a manifest with sorted keys and reads it back, and
// reads the forms other tools write.
func TestManifest(t *testing.T) {
	m := contracts.PackManifest{Name: "drupal", Version: "1.0", SchemaVersion: 3, Summary: "Drupal: the good parts", Homepage: "https://example.com/p"}
	data, err := RenderManifest(m)
	if err != nil {
		t.Fatal(err)
	}
	want := "homepage: 'https://example.com/p'\nname: drupal\nschema_version: 3\nsummary: 'Drupal: the good parts'\nversion: '1.0'\n"
	if string(data) != want {
		t.Errorf("RenderManifest =\n%s\nwant\n%s", data, want)
	}
	back, err := ParseManifest("m", data)
	if err != nil || *back != m {
		t.Errorf("ParseManifest(RenderManifest(m)) = %+v, %v; want %+v", back, err, m)
	}
	noHome := m
	noHome.Homepage = ""
	if data, _ := RenderManifest(noHome); strings.Contains(string(data), "homepage") {
		t.Errorf("an empty homepage is written:\n%s", data)
	}

	for _, c := range []struct {
		name, src string
		version   int
		bad       string // a failing pointer, or "" when the manifest is valid
	}{
		{"kenkeep v2", "homepage: https://mateuaguilo.com/kenkeep\nname: drupal\nschema_version: 2\nsummary: General knowledge\nversion: 1.0.1\n", 2, ""},
		{"json", `{"name": "x", "version": "1", "schema_version": 3, "summary": "s"}`, 3, ""},
		{"json float version", `{"name": "x", "version": "1", "schema_version": 3.0, "summary": "s"}`, 0, "/schema_version"},
		{"number version", "name: x\nversion: 1.0\nschema_version: 3\nsummary: s\n", 0, "/version"},
		{"blank summary", "name: x\nversion: '1'\nschema_version: 3\nsummary: '   '\n", 0, "/summary"},
		{"two-line summary", "name: x\nversion: '1'\nschema_version: 3\nsummary: |\n  one\n  two\n", 0, "/summary"},
		{"leading dash", "name: -x\nversion: '1'\nschema_version: 3\nsummary: s\n", 0, "/name"},
		{"not a mapping", "- a\n- b\n", 0, "(root)"},
	} {
		got, err := ParseManifest("kenkeep-pack.yaml", []byte(c.src))
		switch {
		case c.bad == "" && err != nil:
			t.Errorf("%s: %v", c.name, err)
		case c.bad == "" && got.SchemaVersion != c.version:
			t.Errorf("%s: schema_version %d, want %d", c.name, got.SchemaVersion, c.version)
		case c.bad != "" && (err == nil || !strings.Contains(err.Error(), c.bad)):
			t.Errorf("%s: err = %v; want it to name %s", c.name, err, c.bad)
		case c.bad != "":
			var me *ManifestError
			if !errors.As(err, &me) || !strings.HasPrefix(err.Error(), "kenkeep-pack.yaml: ") {
				t.Errorf("%s: err = %v; want a ManifestError naming the file", c.name, err)
			}
		}
	}

	var ve *schema.ValidationError
	if err := ValidateManifest(contracts.PackManifest{Name: "x", Version: "1", SchemaVersion: 3}); !errors.As(err, &ve) {
		t.Errorf("ValidateManifest without a summary: %v", err)
	}
}

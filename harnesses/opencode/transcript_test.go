package opencode

import (
	"bytes"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

func TestParseTranscript(t *testing.T) {
	f, err := os.Open(filepath.Join("testdata", "transcripts", "synthetic.json"))
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = f.Close() }()
	tr, err := New().ParseTranscript(f)
	if err != nil {
		t.Fatal(err)
	}
	// (The turns and reads are pinned by the conformance suite's
	// synthetic.*.parsed.)

	// Text printed before the document is skipped.
	noisy := append([]byte("Exporting session: ses_3a9b\n"), read(t, filepath.Join("testdata", "transcripts", "synthetic.json"))...)
	tr2, err := New().ParseTranscript(bytes.NewReader(noisy))
	if err != nil || !reflect.DeepEqual(tr, tr2) {
		t.Errorf("leading text: %v", err)
	}
	for _, bad := range []string{"", "not json", `{"info": {}}`, `{"messages": {}}`, `{"messages": [], ` /* cut short */} {
		if _, err := New().ParseTranscript(strings.NewReader(bad)); err == nil {
			t.Errorf("export %q accepted", bad)
		}
	}
}

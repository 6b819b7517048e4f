package httpapi_test

import (
	"fmt"
	"io/fs"
	"runtime"
	"strings"
	"testing"

	"github.com/kk-project/kk/internal/httpapi"
)

func TestTokenFile(t *testing.T) {
	for _, tc := range []struct {
		data, want, err string
	}{
		{"t0k3n", "t0k3n", ""},
		{"t0k3n\n", "t0k3n", ""},
		{"t0k3n\r\n", "t0k3n", ""},
		{"  t0k3n \n", "t0k3n", ""},
		{"", "", "the token file tok is empty"},
		{"\n", "", "the token file tok is empty"},
		{"t0k3n\nmore\n", "", "the token file tok holds 2 lines; it must hold the token alone, on one line"},
		{"t0k3n\n\n", "", "holds 2 lines"},
		{"\nt0k3n", "", "holds 2 lines"},
		{"a\rb", "", "holds 2 lines"},
		{"a\nb\nc", "", "holds 3 lines"},
	} {
		got, err := httpapi.ParseToken("tok", []byte(tc.data))
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("ParseToken(%q) = %q, %v; want error %q", tc.data, got, err, tc.err)
			}
			continue
		}
		if err != nil || got != tc.want {
			t.Errorf("ParseToken(%q) = %q, %v; want %q", tc.data, got, err, tc.want)
		}
	}
	if runtime.GOOS == "windows" {
		return
	}
	for _, tc := range []struct {
		mode fs.FileMode
		ok   bool
	}{
		{0o600, true}, {0o400, true}, {0o700, true}, {0o000, true},
		{0o644, false}, {0o640, false}, {0o604, false}, {0o620, false}, {0o602, false}, {0o666, false},
	} {
		err := httpapi.CheckTokenFileMode("/etc/kk/tok", tc.mode)
		if (err == nil) != tc.ok {
			t.Errorf("mode %04o: %v", tc.mode, err)
		}
		if err != nil && !strings.Contains(err.Error(), "run chmod 600 /etc/kk/tok") {
			t.Errorf("mode %04o: %v does not say how to fix it", tc.mode, err)
		}
	}
}

// A token shorter than MinTokenBytes (after ParseToken dropped the white
// space around it) is refused, naming the file and the minimum.
func TestTokenLength(t *testing.T) {
	for _, tc := range []struct {
		data string
		ok   bool
	}{
		{"a", false}, {"abc", false}, {"0123456789abcde", false}, {"   0123456789abcde   \n", false},
		{"0123456789abcdef", true}, {"  0123456789abcdef \n", true}, {strings.Repeat("x", 64), true},
	} {
		token, err := httpapi.ParseToken("/etc/kk/tok", []byte(tc.data))
		if err != nil {
			t.Fatalf("ParseToken(%q): %v", tc.data, err)
		}
		err = httpapi.CheckTokenLength("/etc/kk/tok", token)
		if (err == nil) != tc.ok {
			t.Errorf("token %q: %v", tc.data, err)
		}
		if err != nil && !strings.Contains(err.Error(), fmt.Sprintf("the token file /etc/kk/tok holds a token of %d bytes; it must be at least 16 bytes", len(token))) {
			t.Errorf("token %q: %v does not name the file, the length and the minimum", tc.data, err)
		}
	}
}

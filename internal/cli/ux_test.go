package cli

import "testing"

func TestColour(t *testing.T) {
	for _, tc := range []struct {
		name    string
		tty     bool
		env     map[string]string
		colored bool
	}{
		{"a terminal", true, nil, true},
		{"a pipe", false, nil, false},
		{"NO_COLOR set", true, map[string]string{"NO_COLOR": "1"}, false},
		{"NO_COLOR set to anything", true, map[string]string{"NO_COLOR": "0"}, false},
		{"NO_COLOR empty", true, map[string]string{"NO_COLOR": ""}, true},
		{"a dumb terminal", true, map[string]string{"TERM": "dumb"}, false},
		{"xterm", true, map[string]string{"TERM": "xterm-256color"}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			app := &App{Getenv: func(k string) string { return tc.env[k] }, IO: IO{OutTTY: tc.tty, ErrTTY: tc.tty}}
			for _, s := range []style{app.stdoutStyle(), app.stderrStyle()} {
				got := s.red("kk:")
				if want := map[bool]string{true: "\x1b[1;31mkk:\x1b[0m", false: "kk:"}[tc.colored]; got != want {
					t.Errorf("red(kk:) = %q, want %q", got, want)
				}
			}
		})
	}
}

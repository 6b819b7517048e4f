package checks

import (
	"os"
	"path/filepath"
	"strings"
)

// CompletionEnv is where CompletionDoctor looks: the user's home and
// XDG_DATA_HOME, and the folder the system's paths are under ("/" but in
// tests).
type CompletionEnv struct {
	Home        string
	XDGDataHome string
	SystemRoot  string
}

// bashCompletionPackage are the scripts of the bash-completion package, by
// distribution (Debian, Fedora, Arch, Alpine: /usr/share; BSDs and source
// builds: /usr/local; Homebrew on macOS: /opt/homebrew and /usr/local).
var bashCompletionPackage = []string{
	"usr/share/bash-completion/bash_completion",
	"etc/bash_completion",
	"usr/local/share/bash-completion/bash_completion",
	"usr/local/etc/profile.d/bash_completion.sh",
	"opt/homebrew/etc/profile.d/bash_completion.sh",
	"opt/homebrew/share/bash-completion/bash_completion",
}

// CompletionDoctor checks kk's bash completion when it is set up: an
// installed script (the release installer's, a package's, or one in
// /etc/bash_completion.d) or a "kk completion bash" line in ~/.bashrc or
// ~/.bash_profile. The bash-completion package should be there too: it
// loads an installed script on first use, and without it the script falls
// back to bash's own word splitting. Nothing is reported when kk's bash
// completion is not set up.
func CompletionDoctor(env CompletionEnv) []DoctorCheck {
	sys := func(p string) string { return filepath.Join(env.SystemRoot, filepath.FromSlash(p)) }
	data := env.XDGDataHome
	if data == "" && env.Home != "" {
		data = filepath.Join(env.Home, ".local", "share")
	}
	var setUp []string
	var scripts []string
	if data != "" {
		scripts = append(scripts, filepath.Join(data, "bash-completion", "completions", "kk"))
	}
	for _, p := range []string{"usr/share/bash-completion/completions/kk", "usr/local/share/bash-completion/completions/kk",
		"etc/bash_completion.d/kk", "usr/local/etc/bash_completion.d/kk", "opt/homebrew/etc/bash_completion.d/kk"} {
		scripts = append(scripts, sys(p))
	}
	for _, p := range scripts {
		if fileExists(p) {
			setUp = append(setUp, p)
		}
	}
	if env.Home != "" {
		for _, rc := range []string{".bashrc", ".bash_profile"} {
			p := filepath.Join(env.Home, rc)
			if data, err := os.ReadFile(p); err == nil && strings.Contains(string(data), "kk completion bash") {
				setUp = append(setUp, p)
			}
		}
	}
	if len(setUp) == 0 {
		return nil
	}
	for _, p := range bashCompletionPackage {
		if fileExists(sys(p)) {
			return []DoctorCheck{{Name: "completion/bash", Level: DoctorOK,
				Message: "kk's bash completion is set up (" + strings.Join(setUp, ", ") + ") and the bash-completion package is installed (" + sys(p) + ")"}}
		}
	}
	return []DoctorCheck{{Name: "completion/bash", Level: DoctorWarn,
		Message: "kk's bash completion is set up (" + strings.Join(setUp, ", ") + ") but the bash-completion package is not installed: " +
			"an installed completion file is not loaded, and a sourced one splits words holding = or : as bash does",
		Fix: "install bash-completion (Debian and Ubuntu: apt install bash-completion; Fedora: dnf install bash-completion; macOS: brew install bash-completion@2) and open a new shell; kk completion --help says more"}}
}

func fileExists(p string) bool {
	fi, err := os.Stat(p)
	return err == nil && !fi.IsDir()
}

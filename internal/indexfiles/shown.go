package indexfiles

import "github.com/kk-project/kk/internal/safetext"

// shown is text a person wrote (a leaf's title, description or tag, a
// folder's summary) as the generated files print it: each control
// character a terminal acts on (ESC, the other C0 controls but tab and
// line ends, DEL, C1 controls, bidirectional overrides and isolates)
// written as U+FFFD, as the hooks write hook context. The generated
// files are read with cat and injected at every session's start; a note
// pulled from anyone's clone must not set the terminal's title or clear
// its screen there. Ordinary text comes back as it is, byte for byte.
func shown(s string) string { return safetext.ReplaceControls(s) }

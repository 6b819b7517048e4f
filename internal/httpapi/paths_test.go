package httpapi

import "testing"

func TestCleanPath(t *testing.T) {
	for _, tc := range []struct {
		in        string
		read      bool
		want, err string
	}{
		{in: "go/channels.md", want: "go/channels.md"},
		{in: "  go/./x/../channels.md ", want: "go/channels.md"},
		{in: `go\win.md`, want: "go/win.md"},
		{in: "Go/UPPER.MD", want: "Go/UPPER.MD"},
		{in: "", err: "path must not be empty"},
		{in: "   ", err: "path must not be empty"},
		{in: ".", err: "path must not be empty"},
		{in: "a/..", err: "path must not be empty"},
		{in: "/etc/passwd.md", err: "path must be repo-relative: /etc/passwd.md"},
		{in: `\abs.md`, err: `path must be repo-relative: \abs.md`},
		{in: "C:/x.md", err: "path must be repo-relative: C:/x.md"},
		{in: "../x.md", err: "path must stay within the repository: ../x.md"},
		{in: "a/../../x.md", err: "path must stay within the repository: a/../../x.md"},
		{in: "..", err: "path must stay within the repository: .."},
		{in: ".knowledged/queue.md", err: "path must not target .knowledged"},
		{in: "a/.hidden.md", err: "path must not target a hidden file or folder: a/.hidden.md"},
		{in: ".redirects.json", err: "path must not target a hidden file or folder: .redirects.json"},
		{in: "foo.txt", err: "path must be a Markdown file: foo.txt"},
		{in: "go/", err: "path must be a Markdown file: go/"},
		{in: "index.md", err: "path must not target a generated index file: index.md"},
		{in: "go/INDEX.md", err: "path must not target a generated index file: go/INDEX.md"},
		{in: "INDEX.md", err: "INDEX.md is generated from the notes when it is read, and cannot be written: post, edit or delete the notes it lists"},
		{in: "./INDEX.md", err: "INDEX.md is generated from the notes when it is read, and cannot be written: post, edit or delete the notes it lists"},
		{in: "INDEX.md", read: true, want: "INDEX.md"},
		{in: ".ai/kenkeep/nodes/INDEX.md", read: true, want: "INDEX.md"},
		// Reads: index files, and the repository-relative form of a note.
		{in: "index.md", read: true, want: "index.md"},
		{in: "go/index.md", read: true, want: "go/index.md"},
		{in: ".ai/kenkeep/nodes/go/channels.md", read: true, want: "go/channels.md"},
		{in: "./.ai/kenkeep/nodes/go/channels.md", read: true, want: "go/channels.md"},
		// Writes take the repository-relative form too (a shell's completion
		// from the repository's root gives it).
		{in: ".ai/kenkeep/nodes/go/channels.md", want: "go/channels.md"},
		{in: `.ai\kenkeep\nodes\go\channels.md`, want: "go/channels.md"},
		{in: ".ai/kenkeep/nodes/index.md", err: "path must not target a generated index file: .ai/kenkeep/nodes/index.md"},
		{in: ".ai/kenkeep/nodes/INDEX.md", err: "INDEX.md is generated from the notes when it is read, and cannot be written: post, edit or delete the notes it lists"},
		{in: ".ai/kenkeep/nodes/../config.md", err: "path must not target a hidden file or folder: .ai/kenkeep/nodes/../config.md"},
		{in: ".ai/kenkeep/nodes/.redirects.md", err: "path must not target a hidden file or folder: .ai/kenkeep/nodes/.redirects.md"},
		{in: ".ai/kenkeep/ENTRY.md", read: true, err: "path must not target a hidden file or folder: .ai/kenkeep/ENTRY.md"},
		{in: ".ai/kenkeep/nodes/../config.md", read: true, err: "path must not target a hidden file or folder: .ai/kenkeep/nodes/../config.md"},
		{in: "foo.txt", read: true, err: "path must be a Markdown file: foo.txt"},
	} {
		got, err := cleanPath(tc.in, tc.read)
		switch {
		case tc.err != "":
			if err == nil || err.Error() != tc.err {
				t.Errorf("cleanPath(%q, read=%v) = %q, %v; want error %q", tc.in, tc.read, got, err, tc.err)
			}
		case err != nil || got != tc.want:
			t.Errorf("cleanPath(%q, read=%v) = %q, %v; want %q", tc.in, tc.read, got, err, tc.want)
		}
	}
}

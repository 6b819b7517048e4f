package githooks

import "testing"

func TestResolveVersions(t *testing.T) {
	for _, c := range []struct {
		name, src, want string
		version         int
	}{
		{"two versions", "---\ntitle: t\n<<<<<<< HEAD\nkk_version: 2\n=======\nkk_version: 3\n>>>>>>> other\n---\nBody\n",
			"---\ntitle: t\nkk_version: 4\n---\nBody\n", 4},
		{"diff3 style", "---\ntitle: t\n<<<<<<< HEAD\nkk_version: 5\n||||||| base\nkk_version: 1\n=======\nkk_version: 2\n>>>>>>> other\n---\nBody\n",
			"---\ntitle: t\nkk_version: 6\n---\nBody\n", 6},
		{"CRLF", "---\r\ntitle: t\r\n<<<<<<< HEAD\r\nkk_version: 2\r\n=======\r\nkk_version: 2\r\n>>>>>>> other\r\n---\r\nBody\r\n",
			"---\r\ntitle: t\r\nkk_version: 3\r\n---\r\nBody\r\n", 3},
		{"another line too", "---\n<<<<<<< HEAD\ntitle: a\nkk_version: 2\n=======\ntitle: b\nkk_version: 3\n>>>>>>> other\n---\nBody\n", "", 0},
		{"a second block in the body", "---\n<<<<<<< HEAD\nkk_version: 2\n=======\nkk_version: 3\n>>>>>>> other\n---\n<<<<<<< HEAD\nmine\n=======\ntheirs\n>>>>>>> other\n", "", 0},
		{"kk_version in the body", "---\ntitle: t\n---\n<<<<<<< HEAD\nkk_version: 2\n=======\nkk_version: 3\n>>>>>>> other\n", "", 0},
		{"no block", "---\ntitle: t\nkk_version: 2\n---\n", "", 0},
		{"not closed", "---\n<<<<<<< HEAD\nkk_version: 2\n=======\nkk_version: 3\n---\n", "", 0},
	} {
		got, v, ok := resolveVersions(c.src)
		if ok != (c.want != "") || got != c.want || v != c.version {
			t.Errorf("%s: got %q, %d, %v; want %q, %d", c.name, got, v, ok, c.want, c.version)
		}
	}
}

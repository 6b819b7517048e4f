package serve

import (
	"bytes"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/kk-project/kk/internal/frontmatter"
	"github.com/kk-project/kk/internal/node"
)

// Bodies come back as they were posted. A leaf's body ends with exactly
// one line end (the kenkeep format trims the white space at its end and
// adds "\n"), while a client of the API gets back the bytes it posted:
// knowledged stores a body as it comes. So when a posted body does not
// end with exactly one "\n", the leaf records the white space it ended
// with in keyBodyEnd, written with Go's escapes so that it stays on one
// line (” for none, '\n\n' for two line ends), and Read puts it back in
// place of the format's line end. The leaf on disk stays in the format.
const keyBodyEnd = "kk_body_end"

// setBodyEnd records what body, about to be the leaf's, ends with.
func setBodyEnd(n *node.Node, body string) error {
	if end := node.BodyEnd(body); end != "\n" {
		q := strconv.Quote(end)
		return n.SetExtra(keyBodyEnd, q[1:len(q)-1])
	}
	return n.DeleteExtra(keyBodyEnd)
}

// asPosted returns a leaf's file as the API answers it: when its front
// matter records keyBodyEnd, the body's final line end replaced by it.
// Any other file is returned as it is.
func asPosted(file string) string {
	if !strings.Contains(file, keyBodyEnd+":") {
		return file // the common case costs one scan
	}
	parts, err := frontmatter.Split([]byte(file))
	if err != nil || !parts.Has || !strings.HasSuffix(file, "\n") {
		return file
	}
	for _, line := range bytes.Split(parts.YAML, []byte("\n")) {
		if !bytes.HasPrefix(line, []byte(keyBodyEnd+":")) {
			continue
		}
		var v map[string]string
		if yaml.Unmarshal(line, &v) != nil {
			return file
		}
		escaped, ok := v[keyBodyEnd]
		if !ok {
			return file
		}
		end, err := strconv.Unquote(`"` + escaped + `"`)
		if err != nil || node.BodyEnd(end) != end {
			return file // not what setBodyEnd writes: a hand edit
		}
		return strings.TrimSuffix(file, "\n") + end
	}
	return file
}

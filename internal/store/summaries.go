package store

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"

	"golang.org/x/text/unicode/norm"

	"github.com/kk-project/kk/internal/frontmatter"
	"github.com/kk-project/kk/internal/node"
	"github.com/kk-project/kk/internal/yamlstyle"
)

// Summaries maps a folder (relative to nodes/, "" for the root) to its
// one-line summary. They are the only hand- or model-authored input of the
// generated index files; generation carries them and never invents one.
type Summaries map[string]string

// NormalizeFolderKey cleans a folder key: slash form, no trailing "/", "."
// and "/" become "". Keys that are absolute or climb out are rejected.
func NormalizeFolderKey(key string) (string, error) {
	k := strings.ReplaceAll(strings.TrimSpace(key), "\\", "/")
	if strings.HasPrefix(k, "/") && strings.Trim(k, "/") != "" {
		return "", fmt.Errorf("folder %q is absolute", key)
	}
	k = path.Clean("/" + k)[1:]
	if k == "" || k == "." {
		return "", nil
	}
	for _, seg := range strings.Split(strings.TrimSuffix(key, "/"), "/") {
		if seg == ".." {
			return "", fmt.Errorf("folder %q climbs out of nodes/", key)
		}
	}
	return k, nil
}

// ReadSummaries reads FOLDER_SUMMARIES.md. A missing file is an empty set.
func ReadSummaries(file string) (Summaries, error) {
	src, err := ReadFile(file)
	if errors.Is(err, fs.ErrNotExist) {
		return Summaries{}, nil
	}
	if err != nil {
		return nil, err
	}
	return ParseSummaries(file, src)
}

// ParseSummaries parses the content of FOLDER_SUMMARIES.md (file names it
// in errors); empty content is an empty set.
func ParseSummaries(file string, src []byte) (Summaries, error) {
	if len(src) == 0 {
		return Summaries{}, nil
	}
	// Two branches that each summarize a folder stop a merge here; say
	// so, rather than what the markers break in the YAML.
	if from, to := node.ConflictMarkers(src); from > 0 {
		return nil, fmt.Errorf("%s: %s (lines %d to %d): a git merge, rebase or cherry-pick stopped on a conflict in this file; keep the summaries of both sides (one line for each folder), remove the <<<<<<< ======= >>>>>>> lines, then `git add` it", file, node.ConflictMarkersMsg, from, to)
	}
	doc, err := frontmatter.Parse(src)
	if err != nil {
		msg := frontmatter.Describe(err)
		if !errors.Is(err, frontmatter.ErrUnclosed) {
			msg += `; write each summary on a line of its own, <folder>: <summary>, indented with spaces, not tabs, in quotes when it holds ": " or " #"`
			if bytes.Contains(src, []byte("\n\t")) {
				msg = strings.Replace(msg, "; write", " (a line starts with a tab); write", 1)
			}
		}
		return nil, fmt.Errorf("%s: %s", file, msg)
	}
	// Text without front matter holds no summary kk can read, and the next
	// write of the registry would replace it: refuse it rather than lose it.
	if !doc.HasFrontMatter() && len(bytes.TrimSpace(src)) > 0 {
		return nil, fmt.Errorf("%s: has no front matter; the summaries go between --- lines as schema_version: 1 and summaries: {<folder>: <summary>}, and the text after them is generated", file)
	}
	// The registry's front matter is kenkeep's, strict: schema_version 1
	// and the summaries, nothing else.
	for _, key := range doc.Keys() {
		if key != "schema_version" && key != "summaries" {
			return nil, fmt.Errorf("%s: unknown key %q; the front matter holds schema_version: 1 and summaries", file, key)
		}
	}
	if v, ok := doc.Value("schema_version"); ok && v != int64(1) {
		return nil, fmt.Errorf("%s: field \"schema_version\" is %v; this registry format is version 1", file, v)
	}
	out := Summaries{}
	raw, ok := doc.Value("summaries")
	if !ok || raw == nil {
		return out, nil
	}
	m, ok := raw.(map[string]any)
	if !ok {
		return nil, fmt.Errorf("%s: field \"summaries\" must be a mapping of folder to summary", file)
	}
	for k, v := range m {
		s, ok := v.(string)
		if !ok && v != nil {
			return nil, fmt.Errorf("%s: summary of %q must be a string", file, k)
		}
		key, err := NormalizeFolderKey(k)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", file, err)
		}
		if strings.TrimSpace(s) == "" {
			continue
		}
		// A key spelled as the folder is on disk wins over one that
		// differs from it only in Unicode spelling.
		if dest := spelledOnDisk(filepath.Join(filepath.Dir(file), "nodes"), key); dest != key {
			if _, taken := out[dest]; taken {
				continue
			}
			key = dest
		}
		out[key] = strings.TrimSpace(s)
	}
	return out, nil
}

// spelledOnDisk returns the folder key (relative to nodesDir) as the
// folder is spelled on disk when it is there only under another Unicode
// spelling of its name: a folder a macOS client committed decomposed
// ("e" and a combining accent) whose summary a person typed composed. An
// ASCII key, one spelled as on disk, or one with no such folder is
// returned as it is.
func spelledOnDisk(nodesDir, key string) string {
	ascii := true
	for i := 0; i < len(key); i++ {
		if key[i] >= 0x80 {
			ascii = false
			break
		}
	}
	if ascii || key == "" {
		return key
	}
	if _, err := os.Stat(filepath.Join(nodesDir, filepath.FromSlash(key))); err == nil {
		return key
	}
	segs := strings.Split(key, "/")
	dir := nodesDir
	for i, seg := range segs {
		if fi, err := os.Stat(filepath.Join(dir, seg)); err == nil && fi.IsDir() {
			dir = filepath.Join(dir, seg)
			continue
		}
		entries, err := os.ReadDir(dir)
		if err != nil {
			return key
		}
		want, found := norm.NFC.String(seg), ""
		for _, e := range entries {
			if e.IsDir() && norm.NFC.String(e.Name()) == want {
				found = e.Name()
				break
			}
		}
		if found == "" {
			return key
		}
		segs[i] = found
		dir = filepath.Join(dir, found)
	}
	return strings.Join(segs, "/")
}

// BlankSummaries lists keys of FOLDER_SUMMARIES.md whose value is blank.
func BlankSummaries(file string) []string {
	src, err := ReadFile(file)
	if err != nil {
		return nil
	}
	doc, err := frontmatter.Parse(src)
	if err != nil {
		return nil
	}
	m, _ := doc.Value("summaries")
	mm, _ := m.(map[string]any)
	var out []string
	for k, v := range mm {
		if s, _ := v.(string); strings.TrimSpace(s) == "" {
			out = append(out, k)
		}
	}
	SortLocale(out)
	return out
}

// RenderSummaries renders FOLDER_SUMMARIES.md for the given summaries, as
// kenkeep writes it (writeFolderSummaries), its heading included.
func RenderSummaries(s Summaries) ([]byte, error) {
	keys := make([]string, 0, len(s))
	for k, v := range s {
		if strings.TrimSpace(v) != "" {
			keys = append(keys, k)
		}
	}
	SortLocale(keys)
	m := make(yamlstyle.Map, 0, len(keys))
	for _, k := range keys {
		m = append(m, yamlstyle.MapItem{Key: k, Value: s[k]})
	}
	var summaries any = m
	if len(m) == 0 {
		summaries = yamlstyle.Map{}
	}
	fm, err := yamlstyle.Marshal(yamlstyle.Map{{Key: "schema_version", Value: 1}, {Key: "summaries", Value: summaries}})
	if err != nil {
		return nil, err
	}
	var b strings.Builder
	b.WriteString("---\n")
	b.Write(fm)
	b.WriteString("---\n# kenkeep Folder Summaries\n\n")
	if len(keys) == 0 {
		b.WriteString("_No folder summaries recorded._\n")
	}
	for _, k := range keys {
		name := k
		if name == "" {
			name = "."
		}
		fmt.Fprintf(&b, "- `%s`: %s\n", name, s[k])
	}
	return []byte(b.String()), nil
}

// SummariesHandText reports whether FOLDER_SUMMARIES.md's text src holds,
// after its front matter, lines kk does not generate (SummariesHandLines).
func SummariesHandText(src []byte) bool { return len(SummariesHandLines(src)) > 0 }

// SummariesHandLines returns the lines of FOLDER_SUMMARIES.md's text src,
// after its front matter, that kk does not generate: a person's words
// (the body is rendered from the summaries, so the next write of the
// file replaces them). The lines kk generates are its heading, the line
// of a file with no summaries and one "- `folder`: summary" line per
// folder, whatever the summaries they name (a file whose summaries were
// edited by hand in its front matter lists other ones), and blank lines.
func SummariesHandLines(src []byte) []string {
	parts, err := frontmatter.Split(src)
	if err != nil || !parts.Has {
		return nil
	}
	var hand []string
	for line := range strings.SplitSeq(string(parts.Body), "\n") {
		line = strings.TrimSuffix(line, "\r")
		t := strings.TrimSpace(line)
		switch {
		case t == "", t == "# kenkeep Folder Summaries", t == "# Folder Summaries" /* an older kk's */, t == "_No folder summaries recorded._":
		case strings.HasPrefix(t, "- `") && strings.Contains(t[3:], "`: "):
		default:
			hand = append(hand, line)
		}
	}
	return hand
}

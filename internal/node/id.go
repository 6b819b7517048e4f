// Package node reads and writes knowledge leaves: markdown documents whose
// YAML front matter follows kenkeep's v3 format (OKF concept documents with
// kk_ keys), and reads the older v2 format for migration.
package node

import (
	"fmt"
	"path"
	"slices"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"golang.org/x/text/unicode/norm"
)

// Slugify lowercases s and turns every run of characters outside [a-z0-9]
// into one "-", trimming dashes at both ends. An empty result is "untitled".
func Slugify(s string) string {
	var b strings.Builder
	dash := false
	for _, r := range strings.ToLower(s) {
		if ('a' <= r && r <= 'z') || ('0' <= r && r <= '9') {
			if dash && b.Len() > 0 {
				b.WriteByte('-')
			}
			dash = false
			b.WriteRune(r)
			continue
		}
		dash = true
	}
	if b.Len() == 0 {
		return "untitled"
	}
	return b.String()
}

// DeriveID builds the id "<type>-<slug>" from a type and a slug or title
// (see Slug). A slug that already starts with "<type>-" is not prefixed a
// second time.
func DeriveID(typ, slug string) (string, error) {
	s, err := Slug(slug)
	if err != nil {
		return "", err
	}
	if strings.HasPrefix(s, typ+"-") && len(s) > len(typ)+1 {
		return s, nil
	}
	return typ + "-" + s, nil
}

// Slug turns a title or slug into the slug part of a derived id, by one
// rule every writer shares: letters lose their accents (café → cafe,
// Ærø → aero, Straße → strasse), then Slugify. A letter or digit with no
// ASCII spelling (日本語, Ελλάδα) is an error, as is a title with no letter
// or digit at all: kk never drops letters from an id, which would give two
// different titles one id.
func Slug(s string) (string, error) {
	var b strings.Builder
	for _, r := range norm.NFKD.String(s) {
		switch {
		case r < utf8.RuneSelf:
			b.WriteRune(r)
		case unicode.Is(unicode.Mn, r):
			// an accent, split off by NFKD
		case asciiSpelling[r] != "":
			b.WriteString(asciiSpelling[r])
		case unicode.IsLetter(r) || unicode.IsDigit(r):
			return "", fmt.Errorf("%q has the letter %q, which has no ASCII spelling; give an ASCII slug for the id (the title may keep it)", s, r)
		default:
			b.WriteByte(' ') // punctuation and spaces separate words
		}
	}
	slug := Slugify(b.String())
	if slug == "untitled" && !strings.Contains(strings.ToLower(s), "untitled") {
		return "", fmt.Errorf("%q has no letter or digit to make an id from", s)
	}
	return slug, nil
}

// asciiSpelling spells the Latin letters that NFKD does not decompose.
var asciiSpelling = map[rune]string{
	'ß': "ss", 'ẞ': "SS", 'æ': "ae", 'Æ': "AE", 'ø': "o", 'Ø': "O", 'œ': "oe", 'Œ': "OE",
	'ł': "l", 'Ł': "L", 'đ': "d", 'Đ': "D", 'ð': "d", 'Ð': "D", 'þ': "th", 'Þ': "TH", 'ı': "i", 'ħ': "h", 'Ħ': "H",
}

// UniqueID returns candidate, or candidate-2 … candidate-4 when the ones
// before are taken, and an error when all of them are.
func UniqueID(taken func(string) bool, candidate string) (string, error) {
	if !taken(candidate) {
		return candidate, nil
	}
	for i := 2; i <= 4; i++ {
		next := fmt.Sprintf("%s-%d", candidate, i)
		if !taken(next) {
			return next, nil
		}
	}
	return "", fmt.Errorf("id %q and its -2, -3 and -4 variants are all taken; choose a more distinct slug", candidate)
}

// MaxIDLen is the longest id kk accepts.
const MaxIDLen = 128

// LongID says what is wrong with an id kk derives from a title, a name
// or a slug that is longer than MaxIDLen, as "gives the id … of N
// characters; the limit is 128"; "" when it is not. Past the limit the id
// is no id a writer could give (CheckID), and past about 250 it is no file
// name the file system takes.
func LongID(id string) string {
	if len(id) <= MaxIDLen {
		return ""
	}
	return fmt.Sprintf("gives the id %q of %d characters; the limit is %d", id[:30]+"…", len(id), MaxIDLen)
}

// DerivedTypes are the types whose ids are always derived by kk from a
// title or slug, as "<type>-<slug>" (kenkeep's practice and map, and the
// graph's molecules). An id of any other type is kept exactly as its
// writer gave it (REQ-001, ADR-0012, SC-1.2), case and punctuation
// included; ids are compared without regard to case.
var DerivedTypes = []string{"practice", "map", "molecule"}

// CheckID checks an id a writer gives: 1 to MaxIDLen characters of ASCII
// letters, digits, '-', '_' and '.', starting with a letter or digit, and
// not "index" in any case (the folder's index.md). Ids
// are file names (<id>.md) and appear in test names, commit messages and
// links, so kk refuses other characters rather than rewriting them.
func CheckID(id string) error {
	switch {
	case id == "":
		return fmt.Errorf("is empty")
	case len(id) > MaxIDLen:
		return fmt.Errorf("%q is %d characters; the limit is %d", id, len(id), MaxIDLen)
	case strings.EqualFold(id, "index"):
		return fmt.Errorf("%q would be the file index.md, each folder's generated index; choose another id", id)
	}
	for i, r := range id {
		alnum := r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9'
		switch {
		case i == 0 && !alnum:
			return fmt.Errorf("%q must start with a letter or a digit", id)
		case !alnum && r != '-' && r != '_' && r != '.':
			return fmt.Errorf("%q has the character %q; ids use ASCII letters, digits, '-', '_' and '.'", id, r)
		}
	}
	return nil
}

// CheckNaming checks the identity contract: the file is named "<id>.md";
// the id of a derived type (DerivedTypes) is "<type>-<slug>" with a
// canonical slug, and any other id passes CheckID. It returns a message
// describing the first problem, or "".
func CheckNaming(typ, id, filePath string) string {
	if strings.TrimSpace(id) == "" {
		return "the leaf has an empty id"
	}
	if !slices.Contains(DerivedTypes, typ) {
		if err := CheckID(id); err != nil {
			return "id " + err.Error()
		}
		if base := path.Base(filePath); base != id+".md" {
			return fmt.Sprintf("file name %s does not match the id; expected %s.md", base, id)
		}
		return ""
	}
	prefix := typ + "-"
	if !strings.HasPrefix(id, prefix) {
		return fmt.Sprintf("id %s does not start with its type prefix %s", id, prefix)
	}
	bare := id[len(prefix):]
	canon, err := Slug(bare)
	if err != nil {
		return fmt.Sprintf("id %s is not canonical: the slug %v", id, err)
	}
	if canon != bare {
		return fmt.Sprintf("id %s is not canonical; expected %s%s", id, prefix, canon)
	}
	if base := path.Base(filePath); base != id+".md" {
		return fmt.Sprintf("file name %s does not match the id; expected %s.md", base, id)
	}
	return ""
}

// maxName is the longest file or folder name file systems take, in bytes.
const maxName = 255

// CleanFolder checks a folder given relative to nodes/ and returns it in
// clean slash form ("" for the nodes/ root). Absolute paths and paths that
// climb out of nodes/ are rejected.
func CleanFolder(folder string) (string, error) {
	f := strings.ReplaceAll(folder, "\\", "/")
	if f == "" || f == "." || f == "./" {
		return "", nil
	}
	if strings.HasPrefix(f, "/") || (len(f) > 1 && f[1] == ':') {
		return "", fmt.Errorf("folder %q is absolute; give a folder relative to nodes/", folder)
	}
	for _, seg := range strings.Split(f, "/") {
		if seg == ".." {
			return "", fmt.Errorf("folder %q escapes nodes/: it climbs out with \"..\"; give a folder inside nodes/", folder)
		}
	}
	c := path.Clean(f)
	if c == "." {
		return "", nil
	}
	for _, seg := range strings.Split(c, "/") {
		if strings.HasPrefix(seg, ".") {
			return "", fmt.Errorf("folder %q has a hidden segment %q; folder names may not start with \".\"", folder, seg)
		}
		if seg == "index.md" || strings.ContainsAny(seg, "\x00:*?\"<>|") || strings.ContainsFunc(seg, unicode.IsControl) {
			return "", fmt.Errorf("folder %q has an invalid segment %q", folder, seg)
		}
		if !utf8.ValidString(seg) {
			return "", fmt.Errorf("folder %q: %s; give the name in UTF-8", folder, notUTF8(seg))
		}
		if len(seg) > maxName {
			return "", fmt.Errorf("folder %q has a name of %d bytes; a file system takes at most %d", folder, len(seg), maxName)
		}
	}
	return c, nil
}

// TreeFolder is CleanFolder for a folder a person or a model gives: the
// folder may also be spelled as seen from the repository root, with the
// nodes/ or .ai/kenkeep/nodes/ prefix (and ./ before it): nodes/go and
// .ai/kenkeep/nodes/go/ are the folder go under nodes/, nodes/ is its
// root. (Taken as given, nodes/go made the folder nodes/nodes/go.)
func TreeFolder(folder string) (string, error) {
	f := strings.ReplaceAll(folder, "\\", "/")
	rest := strings.TrimPrefix(f, "./")
	for _, prefix := range []string{".ai/kenkeep/nodes", "nodes"} {
		if rest == prefix || rest == prefix+"/" {
			return "", nil
		}
		if r, ok := strings.CutPrefix(rest, prefix+"/"); ok {
			f = r
			break
		}
	}
	return CleanFolder(f)
}

// windowsDevices are the names Windows reserves for devices, in upper
// case: a file or folder named so, with any extension, cannot be made
// there, so a Windows clone of the repository fails to check it out.
var windowsDevices = []string{"CON", "PRN", "AUX", "NUL", "CONIN$", "CONOUT$",
	"COM0", "COM1", "COM2", "COM3", "COM4", "COM5", "COM6", "COM7", "COM8", "COM9", "COM¹", "COM²", "COM³",
	"LPT0", "LPT1", "LPT2", "LPT3", "LPT4", "LPT5", "LPT6", "LPT7", "LPT8", "LPT9", "LPT¹", "LPT²", "LPT³"}

// MakeableFolder is folder (clean, relative to nodes/) with each name
// kk would not create (NameProblem: a space, a Windows device name, a
// trailing dot or space) made the nearest one it does: "Meeting Notes"
// becomes Meeting-Notes, con con-notes, aux.d aux-notes.d, "old." old.
// An import uses it for the folders of a tree made elsewhere (kenkeep's
// packs, a knowledged repository), whose names no one can choose in the
// import.
func MakeableFolder(folder string) string {
	if folder == "" {
		return ""
	}
	segs := strings.Split(folder, "/")
	for i, seg := range segs {
		if NameProblem(seg) == "" {
			continue
		}
		seg = strings.Map(func(r rune) rune {
			if unicode.IsControl(r) || strings.ContainsRune(`:*?"<>|\`, r) {
				return '-'
			}
			return r
		}, strings.ToValidUTF8(seg, "-"))
		seg = strings.TrimRight(strings.Join(strings.Fields(seg), "-"), ".")
		if NameProblem(seg) != "" { // a device name, with an extension or not
			base, ext, dot := strings.Cut(seg, ".")
			seg = base + "-notes"
			if dot {
				seg += "." + ext
			}
		}
		if seg == "" {
			seg = "notes"
		}
		segs[i] = seg
	}
	return strings.Join(segs, "/")
}

// NameProblem says what is wrong with name as a folder or file name kk
// creates under nodes/ ("" when nothing): a Windows device name (any
// case, with or without an extension) or a name ending with a dot or a
// space, which a Windows clone cannot check out, or a name holding a
// space, which breaks the links the generated index files make to it
// (kenkeep's folder guard takes any name inside nodes/; kk holds the
// folders it creates to this, and reads any). CleanFolder has refused
// what no system takes already.
func NameProblem(name string) string {
	base, _, _ := strings.Cut(name, ".")
	base = strings.TrimRight(base, " ")
	for _, d := range windowsDevices {
		if strings.EqualFold(base, d) {
			return fmt.Sprintf("%s is a device name on Windows (%s, COM1-9, LPT1-9, with any extension, in any case), so a Windows clone could not check it out", name, strings.Join(windowsDevices[:4], ", "))
		}
	}
	switch {
	case !utf8.ValidString(name):
		return notUTF8(name)
	case strings.ContainsFunc(name, unicode.IsControl):
		return fmt.Sprintf("%s holds a control character (a tab or a line break), which Windows refuses in a name, so a Windows clone could not check it out, and which breaks the lines of the index files that list it", strconv.Quote(name))
	case strings.ContainsAny(name, `:*?"<>|\`):
		return fmt.Sprintf("%s holds one of the characters Windows refuses in a name (: * ? \" < > | \\), so a Windows clone could not check it out", name)
	case strings.HasSuffix(name, "."):
		return fmt.Sprintf("%s ends with a dot, which Windows drops, so a Windows clone could not check it out", name)
	case strings.HasSuffix(name, " "):
		return fmt.Sprintf("%s ends with a space, which Windows drops, so a Windows clone could not check it out", name)
	case strings.Contains(name, " "):
		return fmt.Sprintf("%s holds a space, which a link to it must write as %%20 and a shell command must quote; use - instead", name)
	}
	return ""
}

// notUTF8 says why the name, which is not valid UTF-8 (a folder made by
// an archive or a system writing Latin-1 or Windows-1252 names), is no
// name kk makes: the generated index files, which link to it, would hold
// bytes that are no text, every JSON output would name a path that does
// not exist (the bytes turned into U+FFFD), and macOS and Windows refuse
// to check it out.
func notUTF8(name string) string {
	return fmt.Sprintf("%s is not valid UTF-8 (a name written in Latin-1 or Windows-1252?): the index files would link it with bytes that are no text, JSON would name it with U+FFFD, a path that does not exist, and a macOS or Windows clone could not check it out", strconv.Quote(name))
}

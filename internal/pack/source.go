package pack

import (
	"archive/tar"
	"bufio"
	"bytes"
	"compress/gzip"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"strings"

	"github.com/kk-project/kk/internal/node"
)

// Limits bound what a pack source may hold. Import refuses a source that
// exceeds any of them before anything reaches the knowledge tree.
type Limits struct {
	// MaxLeafSize caps each .md file.
	MaxLeafSize int64
	// MaxFileSize caps every other file.
	MaxFileSize int64
	// MaxTotalSize caps the sum of all file sizes (uncompressed).
	MaxTotalSize int64
	// MaxEntries caps the number of files and folders.
	MaxEntries int
}

// DefaultLimits are the limits Import applies unless told otherwise.
var DefaultLimits = Limits{
	MaxLeafSize:  node.MaxSize,
	MaxFileSize:  16 << 20,
	MaxTotalSize: 256 << 20,
	MaxEntries:   50000,
}

// ErrRemoteSource is returned for a source that names a remote repository
// or URL: kk reads packs only from the local disk.
var ErrRemoteSource = errors.New("remote pack sources are not supported")

// UnsafeError is a pack source that kk refuses to unpack: an entry that
// would land outside the pack, a link or device, or a size or count beyond
// the limits.
type UnsafeError struct {
	Source string // the archive or folder, as given
	Entry  string // the offending entry, as named in the source
	Msg    string
}

func (e *UnsafeError) Error() string {
	if e.Entry == "" {
		return fmt.Sprintf("%s: %s; nothing was imported", e.Source, e.Msg)
	}
	return fmt.Sprintf("%s: entry %q: %s; nothing was imported", e.Source, e.Entry, e.Msg)
}

var remotePattern = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9-]*/[A-Za-z0-9._-]+$`)

// sourceKind tells how to read a source argument.
type sourceKind int

const (
	sourceDir sourceKind = iota
	sourceArchive
)

// classify decides what src is: a folder, a gzip-compressed tar archive,
// or something kk does not read. given is src as the user named it.
func classify(src, given string) (sourceKind, error) {
	fi, err := os.Stat(src)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			if strings.Contains(given, "://") || (remotePattern.MatchString(given) && !strings.HasSuffix(given, ".gz")) {
				return 0, fmt.Errorf("%w (%s): download the pack's archive (for example the .tar.gz of its latest release) and run `kk pack import <file>`, or clone it and import the folder", ErrRemoteSource, given)
			}
			return 0, fmt.Errorf("pack source %s does not exist", given)
		}
		return 0, fmt.Errorf("pack source %s: %w", given, err)
	}
	if fi.IsDir() {
		return sourceDir, nil
	}
	if !fi.Mode().IsRegular() {
		return 0, fmt.Errorf("pack source %s is neither a folder nor a .tar.gz archive", given)
	}
	f, err := os.Open(src)
	if err != nil {
		return 0, fmt.Errorf("pack source %s: %w", given, err)
	}
	defer func() { _ = f.Close() }()
	magic := make([]byte, 2)
	if _, err := io.ReadFull(f, magic); err != nil || !bytes.Equal(magic, []byte{0x1f, 0x8b}) {
		return 0, fmt.Errorf("pack source %s is neither a folder nor a gzip-compressed tar archive (.tar.gz)", given)
	}
	return sourceArchive, nil
}

// stager copies the entries of a source into a private folder, checking
// each against the limits.
type stager struct {
	source  string // as given, for messages
	dst     string // the private folder
	limits  Limits
	entries int
	total   int64
	seen    map[string]bool
}

func (s *stager) unsafe(entry, format string, args ...any) error {
	return &UnsafeError{Source: s.source, Entry: entry, Msg: fmt.Sprintf(format, args...)}
}

// cleanName checks an entry name and returns it in clean slash form
// without a leading "./"; "" stands for the top of the source.
func (s *stager) cleanName(name string) (string, error) {
	switch {
	case name == "":
		return "", s.unsafe(name, "has an empty name")
	case strings.ContainsRune(name, 0):
		return "", s.unsafe(name, "has a NUL byte in its name")
	case strings.ContainsRune(name, '\\'):
		return "", s.unsafe(name, "has a backslash in its name")
	case strings.HasPrefix(name, "/") || (len(name) > 1 && name[1] == ':'):
		return "", s.unsafe(name, "has an absolute path")
	}
	var segs []string
	for _, seg := range strings.Split(strings.TrimSuffix(name, "/"), "/") {
		switch seg {
		case "..":
			return "", s.unsafe(name, "climbs out of the pack with \"..\"")
		case ".", "":
			continue
		}
		segs = append(segs, seg)
	}
	return strings.Join(segs, "/"), nil
}

// count admits one more entry.
func (s *stager) count(name string) error {
	s.entries++
	if s.entries > s.limits.MaxEntries {
		return s.unsafe(name, "is one entry too many: a pack holds at most %d files and folders", s.limits.MaxEntries)
	}
	return nil
}

// checkSize admits a file of the given size.
func (s *stager) checkSize(name string, size int64) error {
	limit := s.limits.MaxFileSize
	what := "file"
	if strings.HasSuffix(name, ".md") {
		limit, what = s.limits.MaxLeafSize, "markdown file"
	}
	if size > limit {
		return s.unsafe(name, "is %d bytes; a %s in a pack may be at most %d", size, what, limit)
	}
	s.total += size
	if s.total > s.limits.MaxTotalSize {
		return s.unsafe(name, "brings the pack's unpacked size over the limit of %d bytes", s.limits.MaxTotalSize)
	}
	return nil
}

// mkdir creates the folder rel (clean, slash form) in the private folder.
func (s *stager) mkdir(entry, rel string) error {
	if rel == "" {
		return nil
	}
	p := filepath.Join(s.dst, filepath.FromSlash(rel))
	if err := os.MkdirAll(p, 0o755); err != nil {
		return s.unsafe(entry, "cannot be unpacked as a folder: %v", err)
	}
	return nil
}

// writeFile copies size bytes from r to rel in the private folder. The
// file must not exist yet: an entry given twice is refused.
func (s *stager) writeFile(entry, rel string, r io.Reader, size int64) error {
	if rel == "" {
		return s.unsafe(entry, "is a file at the top of the pack's path")
	}
	if s.seen[rel] {
		return s.unsafe(entry, "appears twice")
	}
	s.seen[rel] = true
	if dir := path.Dir(rel); dir != "." {
		if err := s.mkdir(entry, dir); err != nil {
			return err
		}
	}
	p := filepath.Join(s.dst, filepath.FromSlash(rel))
	f, err := os.OpenFile(p, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return s.unsafe(entry, "cannot be unpacked: %v", err)
	}
	n, err := io.Copy(f, io.LimitReader(r, size+1))
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("%s: unpacking %s: %w", s.source, entry, err)
	}
	if n != size {
		return s.unsafe(entry, "holds %d bytes but declares %d", n, size)
	}
	return nil
}

// extractArchive unpacks the .tar.gz at src into s.dst. Only folders and
// regular files are accepted; links, devices and other special entries
// are refused.
func (s *stager) extractArchive(src string) error {
	f, err := os.Open(src)
	if err != nil {
		return fmt.Errorf("pack source %s: %w", src, err)
	}
	defer func() { _ = f.Close() }()
	zr, err := gzip.NewReader(bufio.NewReader(f))
	if err != nil {
		return fmt.Errorf("%s: not a gzip-compressed tar archive: %w", s.source, err)
	}
	defer func() { _ = zr.Close() }()
	tr := tar.NewReader(zr)
	for {
		hdr, err := tr.Next()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return fmt.Errorf("%s: reading the archive: %w", s.source, err)
		}
		if hdr.Typeflag == tar.TypeXGlobalHeader {
			continue // archive-wide metadata (git archive writes the commit id)
		}
		if err := s.count(hdr.Name); err != nil {
			return err
		}
		rel, err := s.cleanName(hdr.Name)
		if err != nil {
			return err
		}
		switch hdr.Typeflag {
		case tar.TypeDir:
			if err := s.mkdir(hdr.Name, rel); err != nil {
				return err
			}
		case tar.TypeReg: // archive/tar reads the old TypeRegA as TypeReg
			if hdr.Size < 0 {
				return s.unsafe(hdr.Name, "declares a negative size")
			}
			if err := s.checkSize(hdr.Name, hdr.Size); err != nil {
				return err
			}
			if err := s.writeFile(hdr.Name, rel, tr, hdr.Size); err != nil {
				return err
			}
		case tar.TypeSymlink:
			return s.unsafe(hdr.Name, "is a symbolic link (to %q); packs hold only folders and regular files", hdr.Linkname)
		case tar.TypeLink:
			return s.unsafe(hdr.Name, "is a hard link (to %q); packs hold only folders and regular files", hdr.Linkname)
		case tar.TypeChar, tar.TypeBlock:
			return s.unsafe(hdr.Name, "is a device; packs hold only folders and regular files")
		case tar.TypeFifo:
			return s.unsafe(hdr.Name, "is a named pipe; packs hold only folders and regular files")
		default:
			return s.unsafe(hdr.Name, "has tar entry type %q; packs hold only folders and regular files", string(hdr.Typeflag))
		}
	}
}

// copyEntry copies the file or folder at src/rel (rel clean, slash form)
// into s.dst, refusing symlinks and special files.
func (s *stager) copyEntry(src, rel string) error {
	p := filepath.Join(src, filepath.FromSlash(rel))
	return filepath.WalkDir(p, func(q string, d fs.DirEntry, err error) error {
		if err != nil {
			return fmt.Errorf("%s: %w", s.source, err)
		}
		r, rerr := filepath.Rel(src, q)
		if rerr != nil {
			return rerr
		}
		name := filepath.ToSlash(r)
		if err := s.count(name); err != nil {
			return err
		}
		switch t := d.Type(); {
		case t&fs.ModeSymlink != 0:
			return s.unsafe(name, "is a symbolic link; packs hold only folders and regular files")
		case d.IsDir():
			return s.mkdir(name, name)
		case !t.IsRegular():
			return s.unsafe(name, "is not a regular file; packs hold only folders and regular files")
		}
		fi, err := d.Info()
		if err != nil {
			return fmt.Errorf("%s: %w", s.source, err)
		}
		if err := s.checkSize(name, fi.Size()); err != nil {
			return err
		}
		f, err := os.Open(q)
		if err != nil {
			return fmt.Errorf("%s: %w", s.source, err)
		}
		defer func() { _ = f.Close() }()
		return s.writeFile(name, name, f, fi.Size())
	})
}

// locate finds the folder holding kenkeep-pack.yaml: dir itself, or else
// the one folder directly inside it that has one. It returns the folder's
// path relative to dir ("" for dir itself).
func locate(dir, source string) (string, error) {
	if fi, err := os.Lstat(filepath.Join(dir, ManifestFile)); err == nil {
		if !fi.Mode().IsRegular() {
			return "", fmt.Errorf("%s: %s is not a regular file", source, ManifestFile)
		}
		return "", nil
	}
	ents, err := os.ReadDir(dir)
	if err != nil {
		return "", fmt.Errorf("%s: %w", source, err)
	}
	var found []string
	for _, e := range ents {
		if !e.IsDir() {
			continue
		}
		if fi, err := os.Lstat(filepath.Join(dir, e.Name(), ManifestFile)); err == nil && fi.Mode().IsRegular() {
			found = append(found, e.Name())
		}
	}
	slices.Sort(found)
	switch len(found) {
	case 0:
		return "", fmt.Errorf("%s: no %s at its top or in a folder directly inside it; a pack starts with its manifest", source, ManifestFile)
	case 1:
		return found[0], nil
	}
	list := make([]string, len(found))
	for i, f := range found {
		list[i] = f + "/" + ManifestFile
	}
	return "", fmt.Errorf("%s: %d manifests (%s); a pack has exactly one %s", source, len(found), strings.Join(list, ", "), ManifestFile)
}

package httpapi

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"unicode/utf8"
)

// encodeChunk is how much of a note is JSON-encoded at a time.
const encodeChunk = 32 << 10

// docWriter writes notes as JSON to an answer one at a time: the same
// bytes writeJSON writes for a Doc or a []Doc, without holding more than
// one note and one encoded chunk of it.
type docWriter struct {
	w   io.Writer
	buf bytes.Buffer
	enc *json.Encoder
	err error
}

func newDocWriter(w io.Writer) *docWriter {
	d := &docWriter{w: w}
	d.enc = json.NewEncoder(&d.buf)
	d.enc.SetEscapeHTML(false)
	return d
}

func (d *docWriter) raw(s string) {
	if d.err == nil {
		_, d.err = io.WriteString(d.w, s)
	}
}

// str writes s as a JSON string, encoded a chunk at a time: JSON escapes
// each character on its own, so the chunks' encodings, joined, are the
// whole string's.
func (d *docWriter) str(s string) {
	d.raw(`"`)
	for len(s) > 0 && d.err == nil {
		n := min(len(s), encodeChunk)
		for n < len(s) && !utf8.RuneStart(s[n]) {
			n++ // cut at a character's start
		}
		d.buf.Reset()
		_ = d.enc.Encode(s[:n]) // a string always encodes
		enc := bytes.TrimSuffix(d.buf.Bytes(), []byte("\n"))
		_, d.err = d.w.Write(enc[1 : len(enc)-1])
		s = s[n:]
	}
	d.raw(`"`)
}

// doc writes {"path":…,"content":…}.
func (d *docWriter) doc(path, content string) {
	d.raw(`{"path":`)
	d.str(path)
	d.raw(`,"content":`)
	d.str(content)
	d.raw(`}`)
}

// writeDoc answers one note, as writeJSON(w, 200, Doc{…}) would.
func writeDoc(w http.ResponseWriter, path, content string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusOK)
	d := newDocWriter(w)
	d.doc(path, content)
	d.raw("\n")
}

// writeDocs answers the notes at paths, in order, as a JSON array of
// {path, content}: each is read (s.read: a note gone or unreadable is
// left out) and written before the next is read, so the answer holds one
// note at a time however many it lists. It stops early when the client
// has gone.
func (s *Server) writeDocs(w http.ResponseWriter, r *http.Request, paths []string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusOK)
	d := newDocWriter(w)
	d.raw("[")
	n := 0
	for _, p := range paths {
		if d.err != nil || r.Context().Err() != nil {
			return
		}
		content, ok := s.read(r, p)
		if !ok {
			continue
		}
		if n > 0 {
			d.raw(",")
		}
		d.doc(p, content)
		n++
	}
	d.raw("]\n")
}

package gitx

import (
	"bytes"
	"compress/flate"
	"encoding/binary"
	"hash/adler32"
	"hash/maphash"
	"io"
	"sync"
)

// A knowledge worker commits the same large generated file again and
// again with a few lines changed (GRAPH.md is about 3 MB at 10,000
// notes), and compressing it whole for its loose object costs more than
// the rest of the commit. chunkedDeflate compresses such a file in
// pieces cut where its content says (so an insertion moves no cut far
// from it), each piece on its own: a deflate stream may be a
// concatenation of independently compressed parts, each ended with a
// sync flush, and zlib's checksum of the whole is combined from the
// parts'. The compressed pieces are kept, so the next version of the file
// compresses only the pieces that changed. The output is ordinary zlib,
// as git reads any; it is slightly larger than one stream would be (no
// match reaches across a cut).

const (
	// chunkedMin is the smallest object compressed in pieces.
	chunkedMin = 128 << 10
	// chunkMin and chunkMax bound a piece's size; between them a piece
	// ends before a line whose start hashes to 0 modulo chunkCut.
	chunkMin = 16 << 10
	chunkMax = 256 << 10
	chunkCut = 16
	// chunkCacheBytes bounds the uncompressed bytes the cache keeps.
	chunkCacheBytes = 64 << 20
)

// chunk is one compressed piece: its content (to tell it from another
// with the same hash), its deflate bytes ending in a sync flush, and its
// Adler-32.
type chunk struct {
	raw   []byte
	comp  []byte
	adler uint32
	used  uint64 // the write that last used it
}

type chunkCache struct {
	mu    sync.Mutex
	seed  maphash.Seed
	m     map[uint64][]*chunk
	bytes int
	write uint64
	fw    *flate.Writer
	buf   bytes.Buffer
}

// chunks is process-wide on purpose: a piece is found by its content
// (hash, then bytes), so a hit is always right, and a process's commits
// share one bounded budget (chunkCacheBytes) instead of one per Repo.
var chunks = &chunkCache{seed: maphash.MakeSeed()}

// cutPoints returns the ends of the pieces data is cut into.
func cutPoints(data []byte) []int {
	var cuts []int
	start := 0
	for i := 0; i < len(data); {
		nl := bytes.IndexByte(data[i:], '\n')
		if nl < 0 {
			break
		}
		line := i + nl + 1 // the start of the next line
		i = line
		if line >= len(data) {
			break
		}
		size := line - start
		if size < chunkMin {
			continue
		}
		head := data[line:min(len(data), line+32)]
		if size >= chunkMax || lineHash(head)%chunkCut == 0 {
			cuts = append(cuts, line)
			start = line
		}
	}
	return append(cuts, len(data))
}

// lineHash is FNV-1a of the start of a line.
func lineHash(b []byte) uint32 {
	h := uint32(2166136261)
	for _, c := range b {
		if c == '\n' {
			break
		}
		h ^= uint32(c)
		h *= 16777619
	}
	return h
}

// compress returns the deflate bytes (ending in a sync flush) and
// Adler-32 of p. c.mu is held.
func (c *chunkCache) compress(p []byte) ([]byte, uint32) {
	c.buf.Reset()
	if c.fw == nil {
		fw, err := flate.NewWriter(&c.buf, flate.BestSpeed)
		if err != nil {
			panic(err) // BestSpeed is a valid level
		}
		c.fw = fw
	} else {
		c.fw.Reset(&c.buf)
	}
	_, _ = c.fw.Write(p) // into a bytes.Buffer, which does not fail
	_ = c.fw.Flush()
	return bytes.Clone(c.buf.Bytes()), adler32.Checksum(p)
}

// piece returns p compressed, from the cache when a piece with the same
// content was compressed before. c.mu is held.
func (c *chunkCache) piece(p []byte) *chunk {
	h := maphash.Bytes(c.seed, p)
	for _, ch := range c.m[h] {
		if bytes.Equal(ch.raw, p) {
			ch.used = c.write
			return ch
		}
	}
	comp, sum := c.compress(p)
	ch := &chunk{raw: bytes.Clone(p), comp: comp, adler: sum, used: c.write}
	if c.m == nil {
		c.m = map[uint64][]*chunk{}
	}
	c.m[h] = append(c.m[h], ch)
	c.bytes += len(p)
	return ch
}

// evict drops the pieces the last few writes did not use once the cache
// holds more than chunkCacheBytes. c.mu is held.
func (c *chunkCache) evict() {
	if c.bytes <= chunkCacheBytes {
		return
	}
	for h, list := range c.m {
		keep := list[:0]
		for _, ch := range list {
			if c.write-ch.used < 2 {
				keep = append(keep, ch)
			} else {
				c.bytes -= len(ch.raw)
			}
		}
		if len(keep) == 0 {
			delete(c.m, h)
		} else {
			c.m[h] = keep
		}
	}
}

// writeZlib writes header and data to w as one zlib stream, data
// compressed in pieces (see chunkedDeflate above).
func (c *chunkCache) writeZlib(w io.Writer, header, data []byte) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.write++
	defer c.evict()
	// The zlib header: deflate with a 32 KB window, the fastest level.
	if _, err := w.Write([]byte{0x78, 0x01}); err != nil {
		return err
	}
	hc, sum := c.compress(header)
	if _, err := w.Write(hc); err != nil {
		return err
	}
	start := 0
	for _, end := range cutPoints(data) {
		ch := c.piece(data[start:end])
		if _, err := w.Write(ch.comp); err != nil {
			return err
		}
		sum = adler32Combine(sum, ch.adler, end-start)
		start = end
	}
	// An empty final block (fixed Huffman codes), then the checksum.
	var tail [6]byte
	tail[0], tail[1] = 0x03, 0x00
	binary.BigEndian.PutUint32(tail[2:], sum)
	_, err := w.Write(tail[:])
	return err
}

// adler32Combine returns the Adler-32 of the concatenation of two inputs
// from their checksums and the length of the second (zlib's
// adler32_combine).
func adler32Combine(a1, a2 uint32, len2 int) uint32 {
	const base = 65521
	rem := uint32(len2 % base)
	sum1 := a1 & 0xffff
	sum2 := (rem * sum1) % base
	sum1 += (a2 & 0xffff) + base - 1
	sum2 += (a1 >> 16) + (a2 >> 16) + base - rem
	if sum1 >= base {
		sum1 -= base
	}
	if sum1 >= base {
		sum1 -= base
	}
	if sum2 >= base<<1 {
		sum2 -= base << 1
	}
	if sum2 >= base {
		sum2 -= base
	}
	return sum1 | sum2<<16
}

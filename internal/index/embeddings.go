package index

import (
	"context"
	"encoding/binary"
	"fmt"
	"math"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/kk-project/kk/internal/embed"
	"github.com/kk-project/kk/internal/store"
)

// Semantic search, when config.yaml names an embedding provider: each
// node's vector (embedText: title, description, phrasings, the start of
// the body) is stored in the embeddings table and recomputed only when
// that text or the model changes. A search then also ranks the nodes by
// cosine similarity to the query's vector and fuses the two rankings by
// reciprocal rank. Without a provider none of this runs and nothing
// reaches the network.

// Tunables of the vector side.
var (
	// embedBatch is how many texts go in one embedding request.
	embedBatch = 32
	// refreshPerSearch is how many stale vectors a search recomputes
	// before answering; kk sync recomputes all of them.
	refreshPerSearch = 16
	// vectorTop is how many nodes the vector side ranks.
	vectorTop = 50
	// rrfK is reciprocal rank fusion's constant: a node ranked r by one
	// side gets 1/(rrfK + r) from it.
	rrfK = 60.0
	// defaultMinSimilarity is the least cosine similarity a node found by
	// the vector side alone needs (EmbedConfig.MinSimilarity overrides).
	defaultMinSimilarity = 0.5
	// quickVectorTime bounds the vector side of a Quick search.
	quickVectorTime = 300 * time.Millisecond
)

// EmbedderFor returns the embedder config.yaml configures for k, and the
// least similarity of its vector-only matches; nil when none is
// configured.
func EmbedderFor(k *store.KB) (embed.Embedder, float64, error) {
	cfg, err := k.LoadConfig()
	if err != nil {
		return nil, 0, err
	}
	return embedderFrom(cfg)
}

// embedderFrom is EmbedderFor from a reading of config.yaml.
func embedderFrom(cfg store.Config) (embed.Embedder, float64, error) {
	e, err := embed.NewEmbedder(cfg.Embeddings, os.Getenv, nil)
	if err != nil || e == nil {
		return nil, 0, err
	}
	minSim := defaultMinSimilarity
	if cfg.Embeddings.MinSimilarity > 0 {
		minSim = cfg.Embeddings.MinSimilarity
	}
	return e, minSim, nil
}

// SetEmbedder makes the handle's searches hybrid with e (nil: lexical
// only); minSim is the least cosine similarity of a node found by meaning
// alone.
func (db *DB) SetEmbedder(e embed.Embedder, minSim float64) {
	db.embedder, db.minSim = e, minSim
}

// useConfiguredEmbedder sets the embedder config.yaml configures. A bad
// embeddings section is reported; the index stays usable, lexical.
func (db *DB) useConfiguredEmbedder(cfg store.Config) error {
	e, minSim, err := embedderFrom(cfg)
	if err != nil {
		return err
	}
	db.SetEmbedder(e, minSim)
	return nil
}

// RefreshEmbeddings computes the vectors of the nodes whose text or
// model changed since theirs was computed, at most limit of them (0: all),
// and returns how many it computed and how many remain stale. It does
// nothing without an embedder.
func (db *DB) RefreshEmbeddings(ctx context.Context, limit int) (done, left int, err error) {
	if db.embedder == nil {
		return 0, 0, nil
	}
	model := db.embedder.Model()
	rows, err := db.r.QueryContext(ctx, `SELECT n.rid, n.title, n.description, d.raw_phrasings, n.body, d.embed_sha
		FROM nodes n JOIN search_docs d ON d.rid = n.rid LEFT JOIN embeddings e ON e.rid = n.rid
		WHERE e.rid IS NULL OR e.text_sha <> d.embed_sha OR e.model <> ? ORDER BY n.rid`, model)
	if err != nil {
		return 0, 0, fmt.Errorf("reading index %s: %w", db.Path, err)
	}
	type stale struct {
		rid       int64
		text, sha string
	}
	var todo []stale
	for rows.Next() {
		var s stale
		var title, desc, phrasings, body string
		if err := rows.Scan(&s.rid, &title, &desc, &phrasings, &body, &s.sha); err != nil {
			rows.Close()
			return 0, 0, fmt.Errorf("reading index %s: %w", db.Path, err)
		}
		var ph []string
		if phrasings != "" {
			ph = strings.Split(phrasings, "\n")
		}
		s.text = embedText(title, desc, ph, authoredText(body))
		todo = append(todo, s)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return 0, 0, fmt.Errorf("reading index %s: %w", db.Path, err)
	}
	if limit > 0 && len(todo) > limit {
		left = len(todo) - limit
		todo = todo[:limit]
	}
	for start := 0; start < len(todo); start += embedBatch {
		batch := todo[start:min(len(todo), start+embedBatch)]
		texts := make([]string, len(batch))
		for i, s := range batch {
			texts[i] = s.text
		}
		vecs, err := db.embedder.Embed(ctx, texts)
		if err != nil {
			return done, left + len(todo) - start, err
		}
		tx, err := db.w.BeginTx(ctx, nil)
		if err != nil {
			return done, left + len(todo) - start, fmt.Errorf("writing index %s: %w", db.Path, err)
		}
		for i, s := range batch {
			// A node removed or changed since it was read keeps no vector
			// of the old text (the insert fails on the missing node, or the
			// sha no longer matches and the next refresh redoes it).
			if _, err := tx.ExecContext(ctx, `INSERT INTO embeddings(rid, text_sha, model, vec)
				SELECT rid, ?, ?, ? FROM nodes WHERE rid = ?
				ON CONFLICT(rid) DO UPDATE SET text_sha = excluded.text_sha, model = excluded.model, vec = excluded.vec`,
				s.sha, model, encodeVec(vecs[i]), s.rid); err != nil {
				tx.Rollback()
				return done, left + len(todo) - start, fmt.Errorf("writing index %s: %w", db.Path, err)
			}
		}
		if err := tx.Commit(); err != nil {
			return done, left + len(todo) - start, fmt.Errorf("writing index %s: %w", db.Path, err)
		}
		done += len(batch)
	}
	return done, left, nil
}

// unit returns v scaled to length 1 (v itself when it is all zeros).
func unit(v []float32) []float32 {
	var norm float64
	for _, x := range v {
		norm += float64(x) * float64(x)
	}
	if norm == 0 {
		return v
	}
	norm = math.Sqrt(norm)
	out := make([]float32, len(v))
	for i, x := range v {
		out[i] = float32(float64(x) / norm)
	}
	return out
}

// encodeVec stores a vector as little-endian float32s, scaled to length 1
// so that a dot product is the cosine similarity.
func encodeVec(v []float32) []byte {
	v = unit(v)
	out := make([]byte, 4*len(v))
	for i, x := range v {
		binary.LittleEndian.PutUint32(out[4*i:], math.Float32bits(x))
	}
	return out
}

// similarity is the cosine similarity of a unit query vector q and a
// stored (unit) vector; 0 when their lengths differ.
func similarity(q []float32, stored []byte) float64 {
	if len(stored) != 4*len(q) {
		return 0
	}
	var dot float64
	for i, x := range q {
		dot += float64(x) * float64(math.Float32frombits(binary.LittleEndian.Uint32(stored[4*i:])))
	}
	return dot
}

// vectorHit is a node the vector side ranked.
type vectorHit struct {
	rid int64
	sim float64
}

// vectorRank embeds the text and ranks the nodes within the request's
// filters by cosine similarity, best first, at most vectorTop of them.
func (db *DB) vectorRank(ctx context.Context, r Request) ([]vectorHit, error) {
	vecs, err := db.embedder.Embed(ctx, []string{r.Text})
	if err != nil {
		return nil, err
	}
	q := unit(vecs[0])
	where, args := filterSQL(r)
	query := `SELECT e.rid, e.vec FROM embeddings e JOIN nodes n ON n.rid = e.rid WHERE e.model = ?`
	if len(where) > 0 {
		query += " AND " + strings.Join(where, " AND ")
	}
	rows, err := db.r.QueryContext(ctx, query, append([]any{db.embedder.Model()}, args...)...)
	if err != nil {
		return nil, fmt.Errorf("searching index %s: %w", db.Path, err)
	}
	defer rows.Close()
	var out []vectorHit
	for rows.Next() {
		var h vectorHit
		var vec []byte
		if err := rows.Scan(&h.rid, &vec); err != nil {
			return nil, fmt.Errorf("searching index %s: %w", db.Path, err)
		}
		h.sim = similarity(q, vec)
		out = append(out, h)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("searching index %s: %w", db.Path, err)
	}
	slices.SortStableFunc(out, func(a, b vectorHit) int {
		if a.sim != b.sim {
			if a.sim > b.sim {
				return -1
			}
			return 1
		}
		return int(a.rid - b.rid)
	})
	if len(out) > vectorTop {
		out = out[:vectorTop]
	}
	return out, nil
}

// fuse merges the lexical ranking (cands, best first; empty when the
// relevance threshold refused the text) with the vector ranking by
// reciprocal rank: a node's score is the sum over the rankings that hold
// it of 1/(rrfK + rank). A node only the vector side found must reach
// minSim. The fused candidates are read from the index.
func (db *DB) fuse(ctx context.Context, cands []*candidate, vec []vectorHit) ([]*candidate, error) {
	score := map[int64]float64{}
	byRid := map[int64]*candidate{}
	for i, c := range cands {
		score[c.rid] += 1 / (rrfK + float64(i+1))
		byRid[c.rid] = c
	}
	var missing []any
	for i, h := range vec {
		if _, lexical := byRid[h.rid]; !lexical && h.sim < db.minSim {
			continue
		}
		score[h.rid] += 1 / (rrfK + float64(i+1))
		if _, ok := byRid[h.rid]; !ok {
			missing = append(missing, h.rid)
		}
	}
	if len(missing) > 0 {
		rows, err := db.r.QueryContext(ctx, `SELECT rid, id, path, type, title, description FROM nodes WHERE rid IN (`+marks(len(missing))+`)`, missing...)
		if err != nil {
			return nil, fmt.Errorf("searching index %s: %w", db.Path, err)
		}
		for rows.Next() {
			c := &candidate{}
			if err := rows.Scan(&c.rid, &c.hit.ID, &c.hit.Path, &c.hit.Type, &c.hit.Title, &c.hit.Description); err != nil {
				rows.Close()
				return nil, fmt.Errorf("searching index %s: %w", db.Path, err)
			}
			byRid[c.rid] = c
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return nil, fmt.Errorf("searching index %s: %w", db.Path, err)
		}
	}
	out := make([]*candidate, 0, len(score))
	for rid, s := range score {
		if c, ok := byRid[rid]; ok {
			c.score = s
			out = append(out, c)
		}
	}
	sortCandidates(out)
	return out, nil
}

// hybrid adds the vector side to the lexical candidates (best first) and
// fuses the two rankings. A few stale vectors are recomputed first
// (refreshPerSearch), except in a Quick search, whose vector side is
// bounded by quickVectorTime. When the provider fails or is too slow, the
// lexical ranking is returned as it is: a search never fails for want of
// embeddings.
func (db *DB) hybrid(ctx context.Context, r Request, cands []*candidate) ([]*candidate, error) {
	if r.Quick {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, quickVectorTime)
		defer cancel()
	} else if _, _, err := db.RefreshEmbeddings(ctx, refreshPerSearch); err != nil {
		db.setEmbedErr(err)
	}
	vec, err := db.vectorRank(ctx, r)
	if err != nil {
		db.setEmbedErr(err)
		return cands, nil
	}
	return db.fuse(ctx, cands, vec)
}

func (db *DB) setEmbedErr(err error) {
	db.embedMu.Lock()
	db.embedErr = err
	db.embedMu.Unlock()
}

// EmbedErr returns the last error of the embedding provider met by a
// search of this handle (searches then fall back to lexical ranking).
func (db *DB) EmbedErr() error {
	db.embedMu.Lock()
	defer db.embedMu.Unlock()
	return db.embedErr
}

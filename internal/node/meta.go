package node

import (
	"encoding/json"
	"fmt"
	"strings"
	"time"
)

// Front matter keys of a node's audit metadata that kk writes (besides
// OKF's sources and generated).
const (
	KeyCreatedAt = "kk_created_at"
	KeyUpdatedAt = "kk_updated_at"
	KeyLinks     = "kk_links"
	KeyTextRef   = "kk_text_ref"
)

// Meta is what a node records about itself for audit (seed 003's
// created_at, updated_at, source, links and text_ref), as the read faces
// return it.
type Meta struct {
	CreatedAt string `json:"created_at,omitempty"`
	UpdatedAt string `json:"updated_at,omitempty"`
	// Source is the first of Sources: where the node's facts came from
	// when it was made.
	Source  string   `json:"source,omitempty"`
	Sources []string `json:"sources,omitempty"`
	Links   []string `json:"links,omitempty"`
	TextRef string   `json:"text_ref,omitempty"`
}

// Meta returns the node's audit metadata: kk_created_at (else the time of
// OKF generated, when it names one) and kk_updated_at (else the created
// time); OKF sources, each as a string (a record as its uri, url, path or
// id, else as JSON); kk_links; kk_text_ref.
func (n *Node) Meta() Meta {
	var m Meta
	m.CreatedAt = timeString(extraValue(n, KeyCreatedAt))
	if m.CreatedAt == "" {
		if g, ok := n.Generated.(map[string]any); ok {
			for _, k := range []string{"at", "date", "time"} {
				if s := timeString(g[k]); s != "" {
					m.CreatedAt = s
					break
				}
			}
		}
	}
	m.UpdatedAt = timeString(extraValue(n, KeyUpdatedAt))
	if m.UpdatedAt == "" {
		m.UpdatedAt = m.CreatedAt
	}
	m.Sources = sourceStrings(n.Sources)
	if len(m.Sources) > 0 {
		m.Source = m.Sources[0]
	}
	if list, ok := extraValue(n, KeyLinks).([]any); ok {
		for _, l := range list {
			if s, ok := l.(string); ok && strings.TrimSpace(s) != "" {
				m.Links = append(m.Links, s)
			}
		}
	}
	if s, ok := extraValue(n, KeyTextRef).(string); ok {
		m.TextRef = strings.TrimSpace(s)
	}
	return m
}

// WithFallbackTime returns m with t (a file's modification time) as the
// created and updated time it lacks.
func (m Meta) WithFallbackTime(t time.Time) Meta {
	if t.IsZero() {
		return m
	}
	s := t.UTC().Format(time.RFC3339)
	if m.CreatedAt == "" {
		m.CreatedAt = s
	}
	if m.UpdatedAt == "" {
		m.UpdatedAt = s
	}
	return m
}

func extraValue(n *Node, key string) any {
	v, _ := n.Extra(key)
	return v
}

// timeString is a front matter time value as text ("" for none).
func timeString(v any) string {
	switch t := v.(type) {
	case string:
		return strings.TrimSpace(t)
	case time.Time:
		return t.UTC().Format(time.RFC3339)
	}
	return ""
}

// sourceStrings flattens OKF sources (a string, or a list of strings and
// records) into strings.
func sourceStrings(v any) []string {
	var out []string
	add := func(item any) {
		switch s := item.(type) {
		case string:
			if s = strings.TrimSpace(s); s != "" {
				out = append(out, s)
			}
		case map[string]any:
			for _, k := range []string{"uri", "url", "path", "id", "source"} {
				if str, ok := s[k].(string); ok && strings.TrimSpace(str) != "" {
					out = append(out, strings.TrimSpace(str))
					return
				}
			}
			if b, err := json.Marshal(s); err == nil {
				out = append(out, string(b))
			}
		case nil:
		default:
			out = append(out, fmt.Sprint(s))
		}
	}
	switch s := v.(type) {
	case []any:
		for _, item := range s {
			add(item)
		}
	default:
		add(s)
	}
	return out
}

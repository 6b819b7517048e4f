package graph

import (
	"bytes"
	"encoding/json"
	"errors"
	"reflect"
	"strings"

	"github.com/kk-project/kk/internal/op"
)

// QueryGraphParams is the parameter object of query_graph (seed 002).
// paths may be a comma- or newline-separated string or a JSON array.
// taskFile is kk's addition: a task markdown file whose "Context Files"
// section adds paths to a context query.
type QueryGraphParams struct {
	Operation        string   `json:"operation"`
	EntityType       string   `json:"entityType,omitempty"`
	ID               string   `json:"id,omitempty"`
	ProjectID        string   `json:"projectId,omitempty"`
	Paths            PathList `json:"paths,omitzero"`
	TaskFile         string   `json:"taskFile,omitempty"`
	Query            string   `json:"query,omitempty"`
	MoleculeID       string   `json:"moleculeId,omitempty"`
	OrphansOnly      bool     `json:"orphansOnly,omitempty"`
	IncludeChangelog *bool    `json:"includeChangelog,omitempty"`
	ChangelogLimit   *int     `json:"changelogLimit,omitempty"`
	Limit            *int     `json:"limit,omitempty"`
	Offset           *int     `json:"offset,omitempty"`
}

// ManageGraphParams is the parameter object of manage_graph (seed 002).
// paths, relatedAtoms and relatedMolecules may be JSON arrays or strings
// holding JSON arrays (the seed passes them as strings). moleculeId may be
// null to orphan an atom. Absent fields are left alone on update.
type ManageGraphParams struct {
	Operation        string               `json:"operation"`
	EntityType       string               `json:"entityType"`
	ID               string               `json:"id,omitempty"`
	Version          *int64               `json:"version,omitempty"`
	ProjectID        string               `json:"projectId,omitempty"`
	Name             *string              `json:"name,omitempty"`
	Paths            JSONArray[string]    `json:"paths,omitzero"`
	Knowledge        *string              `json:"knowledge,omitempty"`
	KnowledgeMode    string               `json:"knowledgeMode,omitempty"`
	MoleculeID       NullableID           `json:"moleculeId,omitzero"`
	RelatedAtoms     JSONArray[RelatedIn] `json:"relatedAtoms,omitzero"`
	RelatedMolecules JSONArray[RelatedIn] `json:"relatedMolecules,omitzero"`
	CreatedByTaskID  string               `json:"createdByTaskId,omitempty"`
	LastTaskID       string               `json:"lastTaskId,omitempty"`
	Cascade          bool                 `json:"cascade,omitempty"`
}

// ManageChangelogParams is the parameter object of manage_changelog (seed 002).
type ManageChangelogParams struct {
	Operation  string `json:"operation"`
	ParentType string `json:"parentType"`
	ParentID   string `json:"parentId"`
	ProjectID  string `json:"projectId,omitempty"`
	TaskID     string `json:"taskId,omitempty"`
	Summary    string `json:"summary,omitempty"`
	Limit      *int   `json:"limit,omitempty"`
	Offset     *int   `json:"offset,omitempty"`
}

// RelatedIn is one entry of relatedAtoms ({atomId, reason}) or
// relatedMolecules ({moleculeId, reason}).
type RelatedIn struct {
	AtomID     string `json:"atomId,omitempty"`
	MoleculeID string `json:"moleculeId,omitempty"`
	Reason     string `json:"reason"`
}

// JSONArray is a list parameter given as a JSON array or as a string
// holding one. Set records that the parameter was present.
type JSONArray[T any] struct {
	Set   bool
	Items []T
}

// IsZero reports an absent parameter.
func (a JSONArray[T]) IsZero() bool { return !a.Set }

// UnmarshalJSON implements json.Unmarshaler.
func (a *JSONArray[T]) UnmarshalJSON(b []byte) error {
	a.Set = true
	b = bytes.TrimSpace(b)
	if string(b) == "null" {
		a.Items = nil
		return nil
	}
	if len(b) > 0 && b[0] == '"' {
		// The string form is held to the rules of the object around it
		// (one array, no key twice, no NUL, nothing after it); a problem
		// is a type error, which the decoder attributes to the field.
		var s string
		if err := json.Unmarshal(b, &s); err != nil {
			return err
		}
		b = []byte(s)
		if err := op.CheckDocument(b); err != nil {
			msg := err.Error()
			if e, ok := errors.AsType[*op.Error](err); ok {
				msg = strings.TrimPrefix(e.Message, "the parameters are not a valid JSON object: ")
			}
			return stringNotArray[T](msg)
		}
		if t := bytes.TrimSpace(b); len(t) == 0 || t[0] != '[' {
			return stringNotArray[T]("it holds no JSON array")
		}
		dec := json.NewDecoder(bytes.NewReader(b))
		dec.DisallowUnknownFields()
		var items []T
		if err := dec.Decode(&items); err != nil {
			problem := strings.TrimPrefix(err.Error(), "json: ")
			if te, ok := errors.AsType[*json.UnmarshalTypeError](err); ok {
				problem = strings.TrimPrefix(te.Field+" ", " ") + op.TypeProblem(te)
			}
			return stringNotArray[T](problem)
		}
		a.Items = items
		return nil
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	var items []T
	if err := dec.Decode(&items); err != nil {
		return err
	}
	a.Items = items
	return nil
}

// stringNotArray is the error of a JSONArray given as a string that does
// not hold the array: a type error, so that the decoder names the field.
func stringNotArray[T any](problem string) error {
	return &json.UnmarshalTypeError{Value: "a string that is not a JSON array (" + op.Cut(problem) + ")", Type: reflect.TypeFor[[]T]()}
}

// MarshalJSON implements json.Marshaler.
func (a JSONArray[T]) MarshalJSON() ([]byte, error) {
	if a.Items == nil {
		return []byte("[]"), nil
	}
	return json.Marshal(a.Items)
}

// NullableID is an id parameter that may be absent, null or a string.
type NullableID struct {
	Set   bool
	Value string // "" when null
}

// IsZero reports an absent parameter.
func (n NullableID) IsZero() bool { return !n.Set }

// UnmarshalJSON implements json.Unmarshaler.
func (n *NullableID) UnmarshalJSON(b []byte) error {
	n.Set = true
	if string(bytes.TrimSpace(b)) == "null" {
		n.Value = ""
		return nil
	}
	return json.Unmarshal(b, &n.Value)
}

// MarshalJSON implements json.Marshaler.
func (n NullableID) MarshalJSON() ([]byte, error) {
	if n.Value == "" {
		return []byte("null"), nil
	}
	return json.Marshal(n.Value)
}

// PathList is the context operation's paths: a JSON array of strings or a
// string of paths separated by commas and/or line breaks.
type PathList []string

// UnmarshalJSON implements json.Unmarshaler.
func (p *PathList) UnmarshalJSON(b []byte) error {
	b = bytes.TrimSpace(b)
	if string(b) == "null" {
		*p = nil
		return nil
	}
	if len(b) > 0 && b[0] == '[' {
		var list []string
		if err := json.Unmarshal(b, &list); err != nil {
			return err
		}
		*p = list
		return nil
	}
	var s string
	if err := json.Unmarshal(b, &s); err != nil {
		return err
	}
	*p = SplitPaths(s)
	return nil
}

// SplitPaths splits a string of paths separated by commas and/or line
// breaks, dropping empty entries.
func SplitPaths(s string) []string {
	var out []string
	for _, f := range strings.FieldsFunc(s, func(r rune) bool { return r == ',' || r == '\n' || r == '\r' }) {
		if f = strings.TrimSpace(f); f != "" {
			out = append(out, f)
		}
	}
	return out
}

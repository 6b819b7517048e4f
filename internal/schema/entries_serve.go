package schema

import (
	"reflect"

	"github.com/kk-project/kk/internal/contracts"
	"github.com/kk-project/kk/internal/llm"
)

// The decisions kk serve asks a language model for.
var serveEntries = []Entry{
	{Name: "serve-placement", Title: "kk serve placement", Description: "The organizer's decision for a posted note: its folder under nodes/, title, description, type and tags, and the minimal refactors (moves of existing notes and folders) that go with it.", Type: reflect.TypeFor[contracts.ServePlacement]()},
	{Name: "serve-rerank", Title: "kk serve rerank", Description: "The search candidates for a query, most relevant first.", Type: reflect.TypeFor[contracts.ServeRerank]()},
	{Name: "serve-answer", Title: "kk serve answer", Description: "An answer synthesized from the notes read for a query, with the paths it draws on.", Type: reflect.TypeFor[contracts.ServeAnswer]()},
	{Name: "serve-ask", Title: "kk serve ask draft", Description: "A draft note answering a question (POST /ask): title, Markdown answer and tags.", Type: reflect.TypeFor[contracts.ServeAsk]()},
}

// ForLLM returns the named schema in the form an llm.Provider takes: its
// JSON, and a check of a decoded reply against it.
func ForLLM(name string) (llm.Schema, error) {
	data, err := JSON(name)
	if err != nil {
		return llm.Schema{}, err
	}
	return llm.Schema{Name: name, JSON: data, Validate: func(doc any) error { return Validate(name, doc) }}, nil
}

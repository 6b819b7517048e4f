// Package templates holds the files kk writes into a repository, embedded
// in the binary.
package templates

import "embed"

// KB holds the scaffolding of a new knowledge base.
//
//go:embed kb
var KB embed.FS

// Skills holds the harness-neutral slash-command skills, one folder per
// skill (skills/<name>/SKILL.md). The host coding agent runs them and
// calls kk's primitives for every write; the harness adapters render
// them into each harness's own skill or command format.
//
//go:embed skills
var Skills embed.FS

// Prompts holds the prompts the skills and the proposal-drain hook use
// (prompts/<name>.md). A copy under .ai/kenkeep/.config/prompts/ in the
// repository overrides the shipped one.
//
//go:embed prompts
var Prompts embed.FS

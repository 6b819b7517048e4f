// Package templates holds the files kk writes into a repository, embedded
// in the binary.
package templates

import "embed"

// KB holds the scaffolding of a new knowledge base.
//
//go:embed kb
var KB embed.FS

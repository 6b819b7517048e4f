// Package contracts holds the Go types of the JSON documents that agents
// (skills, headless harness runs) hand to kk primitives and that kk hands
// back: proposals, curator actions, rebalance and place plans, pack
// manifests. internal/schema generates each type's JSON Schema, and every
// primitive validates its input against it before touching the tree.
//
// The package depends on nothing in kk, so both the schema registry and
// the domain packages that apply the documents can import it.
package contracts

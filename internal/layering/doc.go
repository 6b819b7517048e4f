// Package layering holds no code: its test reads every package of the
// module and enforces the architecture's layers. The domain core never
// depends on a face (CLI, MCP, HTTP); a face changes the knowledge tree
// only by calling the core, never by writing files or opening the
// transaction itself; and the packages that write files at all are an
// inventory, each with its reason.
package layering

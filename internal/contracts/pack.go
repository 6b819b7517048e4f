package contracts

// PackManifest is kenkeep-pack.yaml, the file at the root of a knowledge
// pack that names it. Unknown keys are an error. kk writes schema version
// 3; it reads packs at version 2 (kenkeep's topical tree, converted on
// import with --migrate) and 3.
type PackManifest struct {
	Name          string `json:"name" yaml:"name" jsonschema:"pattern=^[a-z0-9][a-z0-9-]*$,description=Pack name: lowercase letters\\, digits and -; it becomes the folder nodes/<name>/ on import."`
	Version       string `json:"version" yaml:"version" jsonschema:"minLength=1,pattern=\\S,description=Version of the pack's content (free-form\\, such as 1.2.0)."`
	SchemaVersion int    `json:"schema_version" yaml:"schema_version" jsonschema:"enum=2,enum=3,description=Leaf format of the pack's knowledge/ tree: 3 is what kk writes; 2 (kenkeep's v2 leaves) needs kk pack import --migrate."`
	Summary       string `json:"summary" yaml:"summary" jsonschema:"minLength=1,pattern=^[^\\r\\n]*\\S[^\\r\\n]*$,description=One-line summary of the pack; on import it becomes the folder summary of nodes/<name>/."`
	Homepage      string `json:"homepage,omitempty" yaml:"homepage,omitempty" jsonschema:"format=uri,description=Where the pack is published (an absolute URL)."`
}

package layering

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"
)

const module = "github.com/kk-project/kk"

// faces are the packages that turn a user's request into a call of the
// core and its result into output (internal/web: the read-only web page,
// HTML and pictures). Every other package of the module is core (or a
// test helper, named *test).
var faces = []string{"internal/cli", "internal/mcpserver", "internal/httpapi", "internal/web", "internal/serve/server", "cmd/"}

// Imports no core package may have: a face, or the CLI framework.
var faceOnlyImports = []string{"github.com/spf13/cobra", "github.com/spf13/pflag"}

// What a face may use of the packages that write: none of the atomic file
// writer or the index files' generator, the lock's error type only (to
// map it to an exit code), and the transaction's entry points that are
// whole core operations. Update (and its Tx) is for the core: a face that
// passes its own function to the transaction holds logic every other face
// would have to repeat.
var faceMayUse = map[string][]string{
	"internal/atomicfile": nil,
	"internal/indexfiles": nil,
	"internal/lock":       {"HeldError"},
	"internal/txn":        {"Init", "Rebuild", "RebuildOptions", "Meta", "Recover", "Leftovers", "Result", "ConflictError", "Compact", "CompactResult"},
}

// Functions of package os that change the file system.
var osWriters = []string{"WriteFile", "Create", "CreateTemp", "OpenFile", "Remove", "RemoveAll", "Rename",
	"Mkdir", "MkdirAll", "MkdirTemp", "Symlink", "Link", "Chmod", "Chtimes", "Truncate", "Lchown", "Chown"}

// faceWrites lists every file-system change a face makes itself, by
// "package-relative file: enclosing function: os call", with its reason.
// None of them touches the knowledge tree. A new one fails the test until
// it is listed here (and a listed one that is gone fails too).
var faceWrites = map[string]string{
	"internal/cli/node.go: readLimited: os.OpenFile":         "opens a file the user names read-only (without blocking, for a FIFO)",
	"internal/cli/root.go: Main: os.Create":                  "KK_CPUPROFILE: a CPU profile of kk itself",
	"internal/mcpserver/resources.go: readFile: os.OpenFile": "opens a resource's file read-only (without blocking, for a FIFO)",
	"cmd/kk-search-eval/main.go: build: os.MkdirTemp":        "the evaluation's scratch copy of a pack or a nodes tree",
	"cmd/kk-search-eval/main.go: build: os.RemoveAll":        "removing that scratch copy",
	"cmd/kk-fakemodel/main.go: run: os.OpenFile":             "the fake model server's request log (end-to-end tests)",
	"cmd/kk-fakemodel/main.go: run: os.WriteFile":            "the fake model server's address file (end-to-end tests)",
	"cmd/kk-gentree/main.go: run: os.MkdirAll":               "the benchmark tree generator's output folder",
	"cmd/kk-gentree/main.go: run: os.WriteFile":              "the generator's list of source paths",
}

// fileWriters lists every core package that writes files (imports
// atomicfile, or calls an os function that changes the file system), with
// what it writes. Only internal/txn writes the knowledge tree (nodes/,
// conflicts/, the index files); a package writing anything else says so
// here.
var fileWriters = map[string]string{
	"internal/txn":               "the knowledge tree: every change, its journal, staging and audit",
	"internal/store":             "kk init's scaffold, the installed-version stamp, the writer lock file, the log files of _logs/ a face opens (KB.OpenLog)",
	"internal/index":             "the SQLite index, the one place derived state lives (under .state/)",
	"internal/atomicfile":        "the atomic file writer itself",
	"internal/lock":              "the lock files",
	"internal/curate":            "dedup --output and session stamps after the transaction commits; bootstrap scratch; run traces under _logs/",
	"internal/graph":             "the log of task files context queries read (.state/task-files.jsonl)",
	"internal/migrate":           "a private copy being migrated (MigrateCopy), never the live tree",
	"internal/pack":              "pack export's output and the private copies an import or export works on",
	"internal/session":           "session logs and captures under _sessions/ and _logs/",
	"internal/hooks":             "hook state, hook-error log and the capture's scratch file",
	"internal/harness":           "harness configuration files and installed skills",
	"internal/install":           "kk install: harness hooks, skills, MCP registration, AGENTS.md",
	"internal/githooks":          "git hooks (post-applypatch, post-checkout, post-commit, post-index-change, post-merge, post-rewrite); the scratch copy of a commit's knowledge base under the git folder that kk index rebuild --commits generates from",
	"internal/jobqueue":          "kk serve's durable job queue",
	"internal/gitx":              "git objects of kk serve's commits; the index.lock and the copy of the index it holds while git updates the index",
	"internal/serve":             "kk serve's serve.url and its rebase marker under .state/ (the tree only through the transaction)",
	"internal/benchtree":         "generated benchmark trees",
	"internal/benchtree/benchkb": "the cached benchmark trees under the temporary folder",
	"harnesses/codex":            "Codex's config.toml MCP entry",
	"harnesses/opencode":         "OpenCode's context file",
	"internal/searcheval":        "the evaluation's scratch copy of a pack",
	"internal/usage":             "the usage log (under .state/)",
	"internal/freshness":         "the last freshness check's counts (under .state/), for session start",
	"internal/treewatch":         "kk serve's watch of the tree: the barrier's transient cookie file (under .state/)",
}

type pkg struct {
	rel     string // relative to the module root, slash-separated
	files   map[string]*ast.File
	imports map[string][]string // import path (module-relative when internal) -> files
}

func isFace(rel string) bool {
	for _, f := range faces {
		if rel == f || strings.HasPrefix(rel, strings.TrimSuffix(f, "/")+"/") {
			return true
		}
	}
	return false
}

func isTestHelper(rel string) bool { return strings.HasSuffix(rel, "test") }

// load parses every non-test Go file of the module, by package folder.
func load(t *testing.T) map[string]*pkg {
	t.Helper()
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(root, "go.mod")); err != nil {
		t.Fatalf("the module root is not two folders up: %v", err)
	}
	pkgs := map[string]*pkg{}
	fset := token.NewFileSet()
	err = filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if n := d.Name(); p != root && (n == "testdata" || strings.HasPrefix(n, ".") || n == "node_modules" || n == "dist") {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(p, ".go") || strings.HasSuffix(p, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(fset, p, nil, parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		relDir, _ := filepath.Rel(root, filepath.Dir(p))
		addFile(pkgs, filepath.ToSlash(relDir), filepath.Base(p), f)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"internal/cli", "internal/txn", "internal/store", "internal/mcpserver"} {
		if pkgs[want] == nil {
			t.Fatalf("package %s not found: the walk is broken", want)
		}
	}
	return pkgs
}

// addFile adds the parsed file base of the package folder relDir to pkgs.
func addFile(pkgs map[string]*pkg, relDir, base string, f *ast.File) {
	pk := pkgs[relDir]
	if pk == nil {
		pk = &pkg{rel: relDir, files: map[string]*ast.File{}, imports: map[string][]string{}}
		pkgs[relDir] = pk
	}
	name := relDir + "/" + base
	pk.files[name] = f
	for _, imp := range f.Imports {
		path, _ := strconv.Unquote(imp.Path.Value)
		path = strings.TrimPrefix(path, module+"/")
		pk.imports[path] = append(pk.imports[path], name)
	}
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

func TestCoreImportsNoFace(t *testing.T) {
	t.Parallel()
	pkgs := load(t)
	core := 0
	for _, rel := range sortedKeys(pkgs) {
		if isFace(rel) {
			continue
		}
		core++
		for _, imp := range sortedKeys(pkgs[rel].imports) {
			files := pkgs[rel].imports[imp]
			if isFace(imp) || slices.ContainsFunc(faceOnlyImports, func(b string) bool { return imp == b || strings.HasPrefix(imp, b+"/") }) {
				t.Errorf("%s imports %s: the core must not depend on a face", files[0], imp)
			}
			if isTestHelper(imp) && !isTestHelper(rel) && !strings.HasPrefix(imp, "internal/benchtree") {
				t.Errorf("%s imports the test helper %s", files[0], imp)
			}
		}
	}
	if core < 30 {
		t.Fatalf("found only %d core packages; the walk missed some", core)
	}
}

func TestFacesWriteOnlyThroughTheCore(t *testing.T) {
	t.Parallel()
	pkgs := load(t)
	seen := map[string]bool{}
	for _, rel := range sortedKeys(pkgs) {
		if !isFace(rel) || isTestHelper(rel) {
			continue
		}
		p := pkgs[rel]
		for _, name := range sortedKeys(p.files) {
			f := p.files[name]
			osName := importName(f, "os")
			limited := map[string]string{} // name in this file -> package
			for w := range faceMayUse {
				if n := importName(f, w); n != "" {
					if n == "_" || n == "." {
						t.Errorf("%s imports %s as %q: a face changes files only by calling the core", name, w, n)
					}
					limited[n] = w
				}
			}
			for _, d := range f.Decls {
				where := "(package level)"
				if fn, ok := d.(*ast.FuncDecl); ok {
					where = fn.Name.Name
				}
				ast.Inspect(d, func(n ast.Node) bool {
					sel, ok := n.(*ast.SelectorExpr)
					if !ok {
						return true
					}
					x, ok := sel.X.(*ast.Ident)
					if !ok {
						return true
					}
					switch w, ok := limited[x.Name]; {
					case ok && !slices.Contains(faceMayUse[w], sel.Sel.Name):
						t.Errorf("%s: %s uses %s.%s: a face calls a core operation; it does not write, lock or run the transaction itself", name, where, w, sel.Sel.Name)
					case osName != "" && x.Name == osName && slices.Contains(osWriters, sel.Sel.Name):
						key := fmt.Sprintf("%s: %s: os.%s", name, where, sel.Sel.Name)
						seen[key] = true
						if _, ok := faceWrites[key]; !ok {
							t.Errorf("%s changes the file system from a face; move it into the core, or list it in faceWrites with its reason if it never touches the knowledge tree", key)
						}
					}
					return true
				})
			}
		}
	}
	for _, key := range sortedKeys(faceWrites) {
		if !seen[key] {
			t.Errorf("faceWrites lists %q, which is gone; remove it", key)
		}
	}
}

func TestFileWritersAreListed(t *testing.T) {
	t.Parallel()
	pkgs := load(t)
	writes := map[string]bool{}
	for _, rel := range sortedKeys(pkgs) {
		if isFace(rel) || isTestHelper(rel) {
			continue
		}
		p := pkgs[rel]
		if _, ok := p.imports["internal/atomicfile"]; ok {
			writes[rel] = true
		}
		for _, f := range p.files {
			osName := importName(f, "os")
			if osName == "" {
				continue
			}
			ast.Inspect(f, func(n ast.Node) bool {
				if sel, ok := n.(*ast.SelectorExpr); ok {
					if x, ok := sel.X.(*ast.Ident); ok && x.Name == osName && slices.Contains(osWriters, sel.Sel.Name) {
						writes[rel] = true
					}
				}
				return true
			})
		}
	}
	for _, rel := range sortedKeys(writes) {
		if why := fileWriters[rel]; why == "" {
			t.Errorf("package %s writes files but fileWriters does not say what; only internal/txn writes the knowledge tree, so list what %s writes, or write through the transaction", rel, rel)
		}
	}
	for _, rel := range sortedKeys(fileWriters) {
		if fileWriters[rel] != "" && !writes[rel] {
			t.Errorf("fileWriters lists %s, which writes no file any more; clear its entry", rel)
		}
	}
}

// importName is the name file f uses for the module package or standard
// package path ("" when f does not import it).
func importName(f *ast.File, path string) string {
	full := path
	if strings.HasPrefix(path, "internal/") {
		full = module + "/" + path
	}
	for _, imp := range f.Imports {
		p, _ := strconv.Unquote(imp.Path.Value)
		if p != full {
			continue
		}
		if imp.Name != nil {
			return imp.Name.Name
		}
		return full[strings.LastIndex(full, "/")+1:]
	}
	return ""
}

// Paths of the knowledge tree (store.KB methods). A write whose path is
// built from one of them, outside internal/txn, bypasses the transaction,
// unless it works on a private copy (listed in privateCopyWrites).
var treePaths = []string{"NodesDir", "NodePath", "ConflictsDir", "EntryPath", "GraphPath", "SummariesPath", "RedirectsPath"}

// privateCopyWrites lists, by "file: function", the writes of tree paths
// that are not the user's knowledge base.
var privateCopyWrites = map[string]string{
	"internal/pack/import.go: stage":            "unpacks a pack into a private copy (sk) that the import's transaction then reads",
	"internal/pack/export.go: build":            "builds a private copy (sk) from hard links of the live leaves, read only, and moves it into the pack",
	"internal/benchtree/benchtree.go: Generate": "generates a synthetic knowledge base for the benchmarks",
}

func TestOnlyTheTransactionWritesTheTree(t *testing.T) {
	t.Parallel()
	pkgs := load(t)
	seen := map[string]bool{}
	for _, rel := range sortedKeys(pkgs) {
		if rel == "internal/txn" || isTestHelper(rel) {
			continue
		}
		for _, name := range sortedKeys(pkgs[rel].files) {
			f := pkgs[rel].files[name]
			osName, afName := importName(f, "os"), importName(f, "internal/atomicfile")
			for _, d := range f.Decls {
				where := "(package level)"
				if fn, ok := d.(*ast.FuncDecl); ok {
					where = fn.Name.Name
				}
				ast.Inspect(d, func(n ast.Node) bool {
					call, ok := n.(*ast.CallExpr)
					if !ok {
						return true
					}
					sel, ok := call.Fun.(*ast.SelectorExpr)
					if !ok {
						return true
					}
					x, ok := sel.X.(*ast.Ident)
					if !ok || !((osName != "" && x.Name == osName && slices.Contains(osWriters, sel.Sel.Name)) || (afName != "" && x.Name == afName)) {
						return true
					}
					for _, arg := range call.Args {
						if tree := treePathIn(arg); tree != "" {
							key := fmt.Sprintf("%s: %s", name, where)
							seen[key] = true
							if _, ok := privateCopyWrites[key]; !ok {
								t.Errorf("%s: %s.%s writes a path built from KB.%s outside the transaction; stage it in a txn.Update instead", key, x.Name, sel.Sel.Name, tree)
							}
						}
					}
					return true
				})
			}
		}
	}
	for _, key := range sortedKeys(privateCopyWrites) {
		if !seen[key] {
			t.Errorf("privateCopyWrites lists %q, which is gone; remove it", key)
		}
	}
}

// treePathIn returns the tree path method an expression calls, if any.
func treePathIn(e ast.Expr) string {
	found := ""
	ast.Inspect(e, func(n ast.Node) bool {
		if sel, ok := n.(*ast.SelectorExpr); ok && slices.Contains(treePaths, sel.Sel.Name) {
			found = sel.Sel.Name
		}
		return found == ""
	})
	return found
}

// belowOf lists, for a core package, the packages it must not depend on,
// directly or through another package of the module, with the reason.
var belowOf = map[string]map[string]string{
	"internal/store": {
		"internal/llm":     "the knowledge store reads the model settings (internal/llmconfig, a leaf); the providers build on the store, not under it",
		"internal/harness": "the adapter framework sits above the knowledge store",
		"harnesses":        "the harness adapters sit above the knowledge store",
	},
	"internal/index": {
		"internal/llm":     "the index embeds texts through internal/embed; the model providers and their harness runs are kk serve's",
		"internal/harness": "the adapter framework sits above the index",
		"harnesses":        "the harness adapters sit above the index",
	},
	"internal/txn": {
		"internal/llm":     "the transaction writes the tree; it never asks a model",
		"internal/harness": "the adapter framework sits above the transaction",
		"harnesses":        "the harness adapters sit above the transaction",
	},
}

func TestLowerLayersDoNotDependUpward(t *testing.T) {
	t.Parallel()
	for _, p := range upwardDependencies(t, load(t), belowOf) {
		t.Error(p)
	}
}

// upwardDependencies returns, for each package below names, every
// package of pkgs it depends on (directly or through others) that below
// forbids it, with the import chain and the reason.
func upwardDependencies(t *testing.T, pkgs map[string]*pkg, below map[string]map[string]string) []string {
	t.Helper()
	var problems []string
	for _, low := range sortedKeys(below) {
		if pkgs[low] == nil {
			t.Fatalf("belowOf names %s, which is not a package", low)
		}
		// via[p] is the import chain that reached p from low.
		via := map[string][]string{low: {low}}
		queue := []string{low}
		for len(queue) > 0 {
			p := queue[0]
			queue = queue[1:]
			for _, imp := range sortedKeys(pkgs[p].imports) {
				if _, done := via[imp]; done || pkgs[imp] == nil {
					continue
				}
				via[imp] = append(slices.Clone(via[p]), imp)
				queue = append(queue, imp)
			}
		}
		for _, dep := range sortedKeys(via) {
			for _, banned := range sortedKeys(below[low]) {
				if dep == banned || strings.HasPrefix(dep, banned+"/") {
					problems = append(problems, fmt.Sprintf("%s depends on %s (%s): %s", low, dep, strings.Join(via[dep], " -> "), below[low][banned]))
				}
			}
		}
	}
	return problems
}

// rawLeafWriters lists the transaction's methods that stage a leaf's file
// other than as a node (Put, validated and versioned), with the packages
// that may call them and why.
var rawLeafWriters = map[string]map[string]string{
	"MigrateLeaf": {
		"internal/migrate": "kk migrate okf-v3 converts v2 leaves to v3",
		"internal/reorg":   "kk place apply places kenkeep's v1 leaves into the v2 tree",
	},
}

// Only the packages rawLeafWriters names stage a leaf's bytes as given: a
// leaf is otherwise staged as a node, and the transaction refuses
// WriteFile and RemoveFile of a leaf's path (TestLeavesAreStagedAsNodes).
func TestRawLeafBytesHaveNamedWriters(t *testing.T) {
	t.Parallel()
	pkgs := load(t)
	for _, rel := range sortedKeys(pkgs) {
		if rel == "internal/txn" || isTestHelper(rel) {
			continue
		}
		for _, name := range sortedKeys(pkgs[rel].files) {
			ast.Inspect(pkgs[rel].files[name], func(n ast.Node) bool {
				call, ok := n.(*ast.CallExpr)
				if !ok {
					return true
				}
				sel, ok := call.Fun.(*ast.SelectorExpr)
				if !ok {
					return true
				}
				if allowed, raw := rawLeafWriters[sel.Sel.Name]; raw {
					if _, ok := allowed[rel]; !ok {
						t.Errorf("%s calls %s, which stages a leaf's file as bytes; stage the leaf as a node (Tx.Put) or list the package in rawLeafWriters with its reason", name, sel.Sel.Name)
					}
				}
				return true
			})
		}
	}
}

// lockTakers lists, by "file: function", the code outside internal/txn
// that touches the writer lock's files (store.KB.WriterLock) or runs kk
// init's scaffold (which writes under it), with the reason. Every write
// takes the lock through the transaction: txn.Update for the knowledge
// tree, txn.Locked for what is written beside it (session logs, a
// harness's files), txn.Init for the scaffold.
var lockTakers = map[string]string{
	"internal/store/kb.go: LockPath":       "names the lock's file for older binaries and messages; takes nothing",
	"internal/checks/doctor.go: checkLock": "kk doctor's probe: takes the lock for a moment only to name its holder",
}

// Only the transaction takes the writer lock: one wait, one containment
// check and one holder format for every write (TestOnlyTheTransactionTakesTheWriterLock).
func TestOnlyTheTransactionTakesTheWriterLock(t *testing.T) {
	t.Parallel()
	pkgs := load(t)
	seen := map[string]bool{}
	for _, rel := range sortedKeys(pkgs) {
		if rel == "internal/txn" || isTestHelper(rel) {
			continue
		}
		for _, name := range sortedKeys(pkgs[rel].files) {
			for _, d := range pkgs[rel].files[name].Decls {
				where := "(package level)"
				if fn, ok := d.(*ast.FuncDecl); ok {
					where = fn.Name.Name
				}
				ast.Inspect(d, func(n ast.Node) bool {
					sel, ok := n.(*ast.SelectorExpr)
					if !ok || (sel.Sel.Name != "WriterLock" && sel.Sel.Name != "Scaffold") {
						return true
					}
					key := name + ": " + where
					seen[key] = true
					if _, ok := lockTakers[key]; !ok {
						t.Errorf("%s uses %s: only internal/txn takes the writer lock; write through txn.Update, or beside the tree through txn.Locked", key, sel.Sel.Name)
					}
					return true
				})
			}
		}
	}
	for _, key := range sortedKeys(lockTakers) {
		if !seen[key] {
			t.Errorf("lockTakers lists %s, which no longer uses the writer lock; take it out", key)
		}
	}
}

// operationChoosers lists, by "file: function", the code outside the MCP
// face that looks at a value's operation name, with the reason it is not
// a request's dispatch. A tool's parameter object names its operation
// (query_graph get|search|context, …); the core has one function per
// operation (graph.Get, graph.Create, …), the MCP face alone chooses one
// by its name, and every other face runs the operation it stands for.
var operationChoosers = map[string]string{
	"internal/reorg/rebalance.go: apply":          "a rebalance plan is a list of steps of four kinds, and applying one is the core's work",
	"internal/cli/rebalance.go: runRebalanceMove": "prints a moved leaf and a split leaf differently",
}

// The face that chooses an operation by its name.
const operationFace = "internal/mcpserver"

func TestOnlyTheMCPFaceChoosesAnOperation(t *testing.T) {
	t.Parallel()
	for _, p := range operationDispatches(load(t), operationChoosers) {
		t.Error(p)
	}
}

// operationDispatches returns every function of pkgs outside the MCP face
// that chooses what to do by an operation's name and that allowed does
// not list, and every listed function that no longer does.
func operationDispatches(pkgs map[string]*pkg, allowed map[string]string) []string {
	var problems []string
	seen := map[string]bool{}
	for _, rel := range sortedKeys(pkgs) {
		if rel == operationFace || isTestHelper(rel) {
			continue
		}
		for _, name := range sortedKeys(pkgs[rel].files) {
			f := pkgs[rel].files[name]
			for _, d := range f.Decls {
				fn, ok := d.(*ast.FuncDecl)
				if !ok {
					continue
				}
				for _, at := range operationChoices(fn) {
					key := fmt.Sprintf("%s: %s", name, fn.Name.Name)
					seen[key] = true
					if _, ok := allowed[key]; !ok {
						problems = append(problems, fmt.Sprintf("%s: %s chooses what to do by an operation's name (%s); call the core's function for the operation (graph.Get, graph.Create, …): only %s dispatches on the name, or list the function in operationChoosers with the reason it is no dispatch",
							key, at, "switch or comparison with a constant", operationFace))
					}
				}
			}
		}
	}
	for _, key := range sortedKeys(allowed) {
		if !seen[key] {
			problems = append(problems, fmt.Sprintf("operationChoosers lists %q, which looks at no operation name any more; remove it", key))
		}
	}
	return problems
}

// operationChoices returns where fn switches on an operation name, or
// compares one with a constant: a switch whose tag is (or is set from) a
// value named operation, with a constant case, or an == / != between such
// a value and a constant.
func operationChoices(fn *ast.FuncDecl) []string {
	var out []string
	ast.Inspect(fn, func(n ast.Node) bool {
		switch x := n.(type) {
		case *ast.SwitchStmt:
			tag := x.Tag
			if id, ok := tag.(*ast.Ident); ok && x.Init != nil {
				if as, ok := x.Init.(*ast.AssignStmt); ok && len(as.Lhs) == 1 && len(as.Rhs) == 1 {
					if l, ok := as.Lhs[0].(*ast.Ident); ok && l.Name == id.Name {
						tag = as.Rhs[0]
					}
				}
			}
			if tag == nil || !namesOperation(tag) {
				return true
			}
			for _, s := range x.Body.List {
				for _, e := range s.(*ast.CaseClause).List {
					if isConstant(e) {
						out = append(out, "switch "+exprString(x.Tag))
						return true
					}
				}
			}
		case *ast.BinaryExpr:
			if (x.Op == token.EQL || x.Op == token.NEQ) &&
				(namesOperation(x.X) && isConstant(x.Y) || namesOperation(x.Y) && isConstant(x.X)) {
				out = append(out, exprString(x.X)+" "+x.Op.String()+" "+exprString(x.Y))
			}
		}
		return true
	})
	return out
}

// namesOperation reports whether e is a variable or field named operation
// (in any case).
func namesOperation(e ast.Expr) bool {
	switch x := e.(type) {
	case *ast.Ident:
		return strings.EqualFold(x.Name, "operation")
	case *ast.SelectorExpr:
		return strings.EqualFold(x.Sel.Name, "operation")
	case *ast.CallExpr: // operationOf(p)
		return false
	}
	return false
}

// isConstant reports whether e is a string literal or a constant of
// another package (contracts.OpSplitLeaf).
func isConstant(e ast.Expr) bool {
	switch x := e.(type) {
	case *ast.BasicLit:
		return x.Kind == token.STRING
	case *ast.SelectorExpr:
		_, ok := x.X.(*ast.Ident)
		return ok && ast.IsExported(x.Sel.Name)
	}
	return false
}

func exprString(e ast.Expr) string {
	switch x := e.(type) {
	case *ast.Ident:
		return x.Name
	case *ast.SelectorExpr:
		return exprString(x.X) + "." + x.Sel.Name
	case *ast.BasicLit:
		return x.Value
	}
	return "…"
}

package main

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"
)

// goreleaserConfig is the part of .goreleaser.yaml the code depends on.
type goreleaserConfig struct {
	Before struct {
		Hooks []string `yaml:"hooks"`
	} `yaml:"before"`
	Builds []struct {
		Main    string   `yaml:"main"`
		Binary  string   `yaml:"binary"`
		Ldflags []string `yaml:"ldflags"`
		Goos    []string `yaml:"goos"`
		Goarch  []string `yaml:"goarch"`
	} `yaml:"builds"`
	Archives []struct {
		Files []yaml.Node `yaml:"files"`
	} `yaml:"archives"`
	Sboms []struct {
		Artifacts string `yaml:"artifacts"`
	} `yaml:"sboms"`
	Signs []struct {
		Artifacts string   `yaml:"artifacts"`
		Cmd       string   `yaml:"cmd"`
		Args      []string `yaml:"args"`
		Signature string   `yaml:"signature"`
	} `yaml:"signs"`
	HomebrewCasks []struct {
		Manpages    []string          `yaml:"manpages"`
		Completions map[string]string `yaml:"completions"`
		SkipUpload  bool              `yaml:"skip_upload"`
	} `yaml:"homebrew_casks"`
	Scoops []struct {
		SkipUpload bool `yaml:"skip_upload"`
	} `yaml:"scoops"`
}

const module = "github.com/kk-project/kk"

func readGoreleaser(t *testing.T) goreleaserConfig {
	t.Helper()
	data, err := os.ReadFile("../../.goreleaser.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var cfg goreleaserConfig
	if err := yaml.Unmarshal(data, &cfg); err != nil {
		t.Fatalf(".goreleaser.yaml: %v", err)
	}
	if len(cfg.Builds) != 1 || len(cfg.Archives) != 1 {
		t.Fatalf(".goreleaser.yaml has %d builds and %d archives; this test expects one of each", len(cfg.Builds), len(cfg.Archives))
	}
	return cfg
}

// TestGoreleaserBuild ties the build of .goreleaser.yaml to the code: it
// builds this package, for six targets, and every -X link flag names a
// string variable that exists.
func TestGoreleaserBuild(t *testing.T) {
	b := readGoreleaser(t).Builds[0]
	if b.Main != "./cmd/kk" || b.Binary != "kk" {
		t.Errorf("build main %q binary %q; want ./cmd/kk and kk", b.Main, b.Binary)
	}
	if n := len(b.Goos) * len(b.Goarch); n != 6 {
		t.Errorf("%d targets (%v × %v); want 6", n, b.Goos, b.Goarch)
	}
	set := regexp.MustCompile(`-X (\S+)\.(\w+)=(\S+)`)
	seen := map[string]bool{}
	for _, flags := range b.Ldflags {
		for _, m := range set.FindAllStringSubmatch(flags, -1) {
			pkg, name := m[1], m[2]
			seen[name] = true
			rel, ok := strings.CutPrefix(pkg, module+"/")
			if !ok {
				t.Errorf("-X %s.%s: not a package of %s", pkg, name, module)
				continue
			}
			if !stringVar(t, filepath.Join("..", "..", filepath.FromSlash(rel)), name) {
				t.Errorf("-X %s.%s: %s has no package-level string variable %s (the link flag would set nothing)", pkg, name, rel, name)
			}
		}
	}
	for _, name := range []string{"version", "commit", "date"} {
		if !seen[name] {
			t.Errorf("ldflags set no %s variable; kk version would not report it", name)
		}
	}
}

// stringVar reports whether the package in dir declares a package-level
// variable name of type string, which is what -X can set.
func stringVar(t *testing.T, dir, name string) bool {
	t.Helper()
	fset := token.NewFileSet()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var files []*ast.File
	for _, e := range entries {
		if name := e.Name(); strings.HasSuffix(name, ".go") && !strings.HasSuffix(name, "_test.go") {
			f, err := parser.ParseFile(fset, filepath.Join(dir, name), nil, 0)
			if err != nil {
				t.Fatal(err)
			}
			files = append(files, f)
		}
	}
	for _, f := range files {
		for _, d := range f.Decls {
			g, ok := d.(*ast.GenDecl)
			if !ok || g.Tok != token.VAR {
				continue
			}
			for _, s := range g.Specs {
				vs := s.(*ast.ValueSpec)
				for i, n := range vs.Names {
					if n.Name != name {
						continue
					}
					if id, ok := vs.Type.(*ast.Ident); ok {
						return id.Name == "string"
					}
					if vs.Type == nil && i < len(vs.Values) {
						lit, ok := vs.Values[i].(*ast.BasicLit)
						return ok && lit.Kind == token.STRING
					}
				}
			}
		}
	}
	return false
}

// TestGoreleaserArchives checks that what the archives, the SBOMs and the
// Homebrew and Scoop files name exists or is made by the before hook.
func TestGoreleaserArchives(t *testing.T) {
	cfg := readGoreleaser(t)
	hookOut := map[string]bool{}
	hookScript := regexp.MustCompile(`^bash (scripts/\S+\.sh) (\S+)$`)
	for _, h := range cfg.Before.Hooks {
		m := hookScript.FindStringSubmatch(h)
		if m == nil {
			t.Errorf("before hook %q: expected `bash scripts/<name>.sh <folder>`", h)
			continue
		}
		src, err := os.ReadFile(filepath.Join("..", "..", m[1]))
		if err != nil {
			t.Errorf("before hook %q: %v", h, err)
			continue
		}
		// The completion scripts the hook writes: "$out/<name>".
		for _, w := range regexp.MustCompile(`>"\$out/([^"]+)"`).FindAllStringSubmatch(string(src), -1) {
			hookOut[m[2]+"/"+w[1]] = true
		}
	}
	for _, want := range []string{"completions/kk.bash", "completions/_kk", "completions/kk.fish", "completions/kk.ps1", "notices/THIRD_PARTY_NOTICES.md"} {
		if !hookOut[want] {
			t.Errorf("the before hooks do not write %s", want)
		}
	}
	var srcs []string
	for _, f := range cfg.Archives[0].Files {
		switch f.Kind {
		case yaml.ScalarNode:
			srcs = append(srcs, f.Value)
		case yaml.MappingNode:
			var m struct{ Src string }
			if err := f.Decode(&m); err != nil {
				t.Fatal(err)
			}
			srcs = append(srcs, m.Src)
		}
	}
	for _, want := range []string{"README.md", "LICENSE", "notices/THIRD_PARTY_NOTICES.md", "completions/*", "docs/man/*.1"} {
		if !slices.Contains(srcs, want) {
			t.Errorf("archives do not carry %s (files: %v)", want, srcs)
		}
	}
	for _, src := range srcs {
		if strings.HasPrefix(src, "completions/") || hookOut[src] {
			continue // written by the before hooks
		}
		matches, _ := filepath.Glob(filepath.Join("..", "..", src))
		if len(matches) == 0 {
			t.Errorf("archive file %q matches nothing in the repository", src)
		}
	}
	if len(cfg.Sboms) != 1 || cfg.Sboms[0].Artifacts != "archive" {
		t.Errorf("want one SBOM per archive, got %+v", cfg.Sboms)
	}
	if len(cfg.HomebrewCasks) != 1 || !cfg.HomebrewCasks[0].SkipUpload || len(cfg.Scoops) != 1 || !cfg.Scoops[0].SkipUpload {
		t.Errorf("want one Homebrew cask and one Scoop manifest, generated and not published")
	}
	for _, c := range cfg.HomebrewCasks {
		for shell, path := range c.Completions {
			if !hookOut[path] {
				t.Errorf("Homebrew cask completion %s: %s is not written by the before hook", shell, path)
			}
		}
		for _, page := range c.Manpages {
			if _, err := os.Stat(filepath.Join("..", "..", "docs", "man", filepath.Base(page))); err != nil || !strings.HasPrefix(page, "man/man1/") {
				t.Errorf("Homebrew cask man page %s: not in docs/man (archived under man/man1/)", page)
			}
		}
		// The cask installs every page the archives carry.
		pages, _ := filepath.Glob(filepath.Join("..", "..", "docs", "man", "*.1"))
		for _, p := range pages {
			if !slices.Contains(c.Manpages, "man/man1/"+filepath.Base(p)) {
				t.Errorf("the Homebrew cask does not install man/man1/%s; list every page of docs/man under manpages", filepath.Base(p))
			}
		}
	}
}

// TestGoreleaserSigns: checksums.txt is signed with an SSH key by
// ssh-keygen, as checksums.txt.sig, which scripts/install.sh checks; and
// the release key install.sh carries, when it has one, is an Ed25519 key.
func TestGoreleaserSigns(t *testing.T) {
	cfg := readGoreleaser(t)
	if len(cfg.Signs) != 1 {
		t.Fatalf("want one signature (of checksums.txt), got %+v", cfg.Signs)
	}
	s := cfg.Signs[0]
	args := strings.Join(s.Args, " ")
	if s.Artifacts != "checksum" || s.Cmd != "ssh-keygen" || s.Signature != "${artifact}.sig" ||
		!strings.Contains(args, "-Y sign -n file -f {{ .Env.KK_SIGNING_KEY }} ${artifact}") {
		t.Errorf("signs: %+v; want checksums.txt signed by `ssh-keygen -Y sign -n file -f $KK_SIGNING_KEY` into checksums.txt.sig", s)
	}
	data, err := os.ReadFile(filepath.Join("..", "..", "scripts", "install.sh"))
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`(?m)^# kk-release-key-begin\nrelease_key='([^']*)'\n# kk-release-key-end$`).FindSubmatch(data)
	if m == nil {
		t.Fatal("scripts/install.sh has no release_key between its kk-release-key lines")
	}
	if key := string(m[1]); key != "" && !regexp.MustCompile(`^ssh-ed25519 [A-Za-z0-9+/]{68}$`).MatchString(key) {
		t.Errorf("install.sh's release key %q is not an ssh-ed25519 public key", key)
	}
	for _, want := range []string{"ssh-keygen -Y verify", "-I kk-release -n file", "checksums.txt.sig"} {
		if !strings.Contains(string(data), want) {
			t.Errorf("install.sh does not run %q", want)
		}
	}
}

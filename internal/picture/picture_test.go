package picture

import (
	"bytes"
	"os/exec"
	"slices"
	"strings"
	"testing"
)

// sample is a small edges-view picture: a chain REQ-1 → SC-1.2 → … and a
// separate pair, with ids and titles Mermaid and dot must escape.
func sample() *Picture {
	p := &Picture{View: ViewEdges,
		Nodes: []Node{
			{ID: "REQ-1", Type: "req", Title: `Say "hi" & <b>bold</b> #1`},
			{ID: "SC-1.2", Type: "scenario", Title: "end"},
			{ID: "test-a", Type: "test", Title: "TestA"},
			{ID: "links-a", Type: "symbol", Title: `back\slash`},
			{ID: "adr-1", Type: "adr", Title: "adr-1"},
			{ID: "lone", Type: "flag", Title: "Lone\nflag"},
		},
		Edges: []Edge{
			{Type: "specified_by", From: "REQ-1", To: "SC-1.2"},
			{Type: "verified_by", From: "REQ-1", To: "test-a"},
			{Type: "covered_by", From: "links-a", To: "test-a"},
			{Type: "constrained_by", From: "links-a", To: "adr-1"},
		},
	}
	p.sort()
	return p
}

func ids(p *Picture) []string {
	var out []string
	for _, n := range p.Nodes {
		out = append(out, n.ID)
	}
	return out
}

func TestAroundDepth(t *testing.T) {
	for _, tc := range []struct {
		around string
		depth  int
		want   []string
	}{
		{"REQ-1", 0, []string{"REQ-1"}},
		{"req-1", 1, []string{"REQ-1", "SC-1.2", "test-a"}},                     // ids ignore case
		{"test-a", 1, []string{"links-a", "REQ-1", "test-a"}},                   // either direction
		{"REQ-1", 2, []string{"links-a", "REQ-1", "SC-1.2", "test-a"}},          // through test-a
		{"REQ-1", 3, []string{"adr-1", "links-a", "REQ-1", "SC-1.2", "test-a"}}, // lone is not connected
		{"lone", 5, []string{"lone"}},
	} {
		p := sample()
		if err := p.filter(Options{Around: tc.around, Depth: tc.depth}); err != nil {
			t.Fatalf("around %s depth %d: %v", tc.around, tc.depth, err)
		}
		if got := ids(p); !slices.Equal(got, tc.want) {
			t.Errorf("around %s depth %d: nodes %v, want %v", tc.around, tc.depth, got, tc.want)
		}
		for _, e := range p.Edges {
			if !slices.Contains(tc.want, e.From) || !slices.Contains(tc.want, e.To) {
				t.Errorf("around %s depth %d: edge %v leaves the kept nodes", tc.around, tc.depth, e)
			}
		}
	}
}

func TestAroundUnknownID(t *testing.T) {
	p := sample()
	err := p.filter(Options{Around: "REQ-9", Depth: 1})
	if err == nil || !strings.HasPrefix(err.Error(), "--around: ") || !strings.Contains(err.Error(), `"REQ-9"`) {
		t.Fatalf("error %v, want one naming --around and the id", err)
	}
	// An id --types left out is reported as such.
	p = sample()
	err = p.filter(Options{Types: []string{"test"}, Around: "REQ-1", Depth: 1})
	if err == nil || !strings.Contains(err.Error(), "of the types test") {
		t.Fatalf("error %v, want one saying --types left the id out", err)
	}
}

func TestTypes(t *testing.T) {
	p := sample()
	if err := p.filter(Options{Types: []string{"req", "test"}}); err != nil {
		t.Fatal(err)
	}
	if got, want := ids(p), []string{"REQ-1", "test-a"}; !slices.Equal(got, want) {
		t.Errorf("nodes %v, want %v", got, want)
	}
	if len(p.Edges) != 1 || p.Edges[0].Type != "verified_by" {
		t.Errorf("edges %v, want the verified_by edge only", p.Edges)
	}
	// Types filter first, then --around walks what is left.
	p = sample()
	if err := p.filter(Options{Types: []string{"req", "scenario", "symbol"}, Around: "REQ-1", Depth: 5}); err != nil {
		t.Fatal(err)
	}
	if got, want := ids(p), []string{"REQ-1", "SC-1.2"}; !slices.Equal(got, want) {
		t.Errorf("nodes %v, want %v", got, want)
	}
	err := sample().filter(Options{Types: []string{"requirement"}})
	if err == nil || !strings.HasPrefix(err.Error(), `--type: "requirement" is not an entity type; use `) {
		t.Fatalf("error %v, want one naming --types", err)
	}
}

func TestCheckOptions(t *testing.T) {
	for _, tc := range []struct {
		o    Options
		flag string
	}{
		{Options{Format: "svg"}, "format"},
		{Options{View: "atoms"}, "view"},
		{Options{Depth: -1}, "depth"},
		{Options{Types: []string{"req", " "}}, "type"},
	} {
		err := tc.o.check()
		fe, ok := err.(*FlagError)
		if !ok || fe.Flag != tc.flag {
			t.Errorf("%+v: error %v, want a FlagError of --%s", tc.o, err, tc.flag)
		}
	}
	o := Options{Types: []string{" REQ ", "test"}}
	if err := o.check(); err != nil {
		t.Fatal(err)
	}
	if o.Format != FormatMermaid || o.View != ViewEdges || !slices.Equal(o.Types, []string{"req", "test"}) {
		t.Errorf("defaults: %+v", o)
	}
}

func TestMermaidIDs(t *testing.T) {
	nodes := []Node{{ID: "a-b"}, {ID: "a.b"}, {ID: "a_b_2"}, {ID: "end"}, {ID: "o-x"}, {ID: "Ünï"}, {ID: "SC-1.2"}}
	got := mermaidIDs(nodes)
	want := map[string]string{"a-b": "n_a_b", "a.b": "n_a_b_2", "a_b_2": "n_a_b_2_2", "end": "n_end", "o-x": "n_o_x", "ünï": "n__n_", "sc-1.2": "n_SC_1_2"}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("mermaid id of %s: %q, want %q", k, got[k], v)
		}
	}
	seen := map[string]bool{}
	for _, v := range got {
		if seen[v] {
			t.Errorf("mermaid id %s given twice", v)
		}
		seen[v] = true
		for _, r := range v {
			if !(r == '_' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9') {
				t.Errorf("mermaid id %q holds %q", v, r)
			}
		}
	}
}

func TestEscaping(t *testing.T) {
	for in, want := range map[string]string{
		`Say "hi"`:       "Say #quot;hi#quot;",
		"a & <b> #1":     "a #amp; #lt;b#gt; #35;1",
		"`code` | 50%":   "#96;code#96; #124; 50#37;",
		`back\slash`:     "back#92;slash",
		"two\nlines\r\n": "two lines ",
		"#quot;":         "#35;quot;",
	} {
		if got := mermaidText.Replace(in); got != want {
			t.Errorf("mermaid %q: %q, want %q", in, got, want)
		}
	}
	for in, want := range map[string]string{
		`Say "hi"`:   `Say \"hi\"`,
		`back\slash`: `back\\slash`,
		`end\`:       `end\\`,
		"two\nlines": "two lines",
	} {
		if got := dotText.Replace(in); got != want {
			t.Errorf("dot %q: %q, want %q", in, got, want)
		}
	}
}

func TestMermaid(t *testing.T) {
	got := sample().mermaid()
	want := `flowchart LR
  n_adr_1["adr-1"]:::adr
  n_links_a["links-a<br/>back#92;slash"]:::symbol
  n_lone["lone<br/>Lone flag"]:::flag
  n_REQ_1["REQ-1<br/>Say #quot;hi#quot; #amp; #lt;b#gt;bold#lt;/b#gt; #35;1"]:::req
  n_SC_1_2["SC-1.2<br/>end"]:::scenario
  n_test_a["test-a<br/>TestA"]:::test
  n_links_a -->|"constrained_by"| n_adr_1
  n_links_a -->|"covered_by"| n_test_a
  n_REQ_1 -->|"specified_by"| n_SC_1_2
  n_REQ_1 -->|"verified_by"| n_test_a
  classDef req fill:#fff3cd,stroke:#555,color:#000
  classDef scenario fill:#e8f5e9,stroke:#555,color:#000
  classDef test fill:#d1ecf1,stroke:#555,color:#000
  classDef adr fill:#f8d7da,stroke:#555,color:#000
  classDef flag fill:#fde2c8,stroke:#555,color:#000
  classDef symbol fill:#eeeeee,stroke:#555,color:#000
`
	if got != want {
		t.Errorf("mermaid:\n%s\nwant:\n%s", got, want)
	}
}

// molecules is a molecules-view picture: two molecules, one with atoms,
// and an orphan atom related to a molecule.
func molecules() *Picture {
	p := &Picture{View: ViewMolecules,
		Nodes: []Node{
			{ID: "molecule-http", Type: "molecule", Title: "HTTP"},
			{ID: "molecule-empty", Type: "molecule", Title: "Empty"},
			{ID: "map-handlers", Type: "map", Title: "Handlers"},
			{ID: "map-errors", Type: "map", Title: `The "errors"`},
			{ID: "map-orphan", Type: "map", Title: "Orphan"},
		},
		Edges: []Edge{
			{Type: EdgeMemberOf, From: "map-handlers", To: "molecule-http"},
			{Type: EdgeMemberOf, From: "map-errors", To: "molecule-http"},
			{Type: "related", From: "map-orphan", To: "molecule-http"},
		},
	}
	p.sort()
	return p
}

func TestMoleculesRendering(t *testing.T) {
	p := molecules()
	got := p.mermaid()
	want := `flowchart LR
  n_map_orphan["map-orphan<br/>Orphan"]:::map
  n_molecule_empty["molecule-empty<br/>Empty"]:::molecule
  subgraph n_molecule_http ["molecule-http<br/>HTTP"]
    n_map_errors["map-errors<br/>The #quot;errors#quot;"]:::map
    n_map_handlers["map-handlers<br/>Handlers"]:::map
  end
  class n_molecule_http molecule
  n_map_orphan -.->|"related"| n_molecule_http
  classDef map fill:#e3f2fd,stroke:#555,color:#000
  classDef molecule fill:#ede7f6,stroke:#555,color:#000
`
	if got != want {
		t.Errorf("mermaid:\n%s\nwant:\n%s", got, want)
	}
	dot := p.dot()
	for _, line := range []string{
		`  subgraph "cluster_molecule-http" {`,
		`    "molecule-http" [label="molecule-http\nHTTP", shape=folder, fillcolor="#ede7f6"];`,
		`    "map-errors" [label="map-errors\nThe \"errors\"", fillcolor="#e3f2fd"];`,
		`  "molecule-empty" [label="molecule-empty\nEmpty", shape=folder, fillcolor="#ede7f6"];`,
		`  "map-orphan" -> "molecule-http" [label="related", style=dashed];`,
	} {
		if !strings.Contains(dot, line+"\n") {
			t.Errorf("dot lacks %q:\n%s", line, dot)
		}
	}
	if strings.Contains(dot, EdgeMemberOf) || strings.Contains(got, EdgeMemberOf) {
		t.Errorf("member_of is drawn as an edge; it should be the nesting")
	}
	// Without the molecules, the atoms stand alone.
	p = molecules()
	if err := p.filter(Options{Types: []string{"map"}}); err != nil {
		t.Fatal(err)
	}
	if s := p.mermaid(); strings.Contains(s, "subgraph") || !strings.Contains(s, "  n_map_errors[") {
		t.Errorf("mermaid without molecules:\n%s", s)
	}
}

// TestDotRuns feeds every rendering to Graphviz when dot is installed.
func TestDotRuns(t *testing.T) {
	dot, err := exec.LookPath("dot")
	if err != nil {
		t.Skip("Graphviz dot is not on PATH")
	}
	for name, p := range map[string]*Picture{"edges": sample(), "molecules": molecules()} {
		cmd := exec.Command(dot, "-Tsvg")
		cmd.Stdin = strings.NewReader(p.dot())
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		out, err := cmd.Output()
		if err != nil || stderr.Len() > 0 {
			t.Fatalf("%s: dot -Tsvg: %v\n%s\n%s", name, err, stderr.String(), p.dot())
		}
		if !bytes.Contains(out, []byte("<svg")) {
			t.Errorf("%s: dot printed no SVG", name)
		}
		// Escaped titles come out as written.
		for _, want := range []string{`back\slash`, "Say &quot;hi&quot; &amp; &lt;b&gt;bold&lt;/b&gt; #1", "The &quot;errors&quot;"} {
			if name == "edges" && strings.Contains(want, "errors") || name == "molecules" && !strings.Contains(want, "errors") {
				continue
			}
			if !bytes.Contains(out, []byte(">"+want+"</text>")) {
				t.Errorf("%s: the SVG lacks the text %q", name, want)
			}
		}
	}
}

package harness

import (
	"context"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

func writeFile(t *testing.T, p, data string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
}

func exists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}

func TestShippedSkills(t *testing.T) {
	skills, err := ShippedSkills()
	if err != nil {
		t.Fatal(err)
	}
	if len(skills) == 0 {
		t.Fatal("no shipped skills")
	}
	for name, src := range skills {
		if !strings.Contains(string(src), "name: "+name) {
			t.Errorf("%s: SKILL.md does not name the skill", name)
		}
	}
	if got := SkillsOrShipped(nil); len(got) != len(skills) {
		t.Errorf("SkillsOrShipped(nil) has %d skills", len(got))
	}
	mine := map[string][]byte{"x": nil}
	if got := SkillsOrShipped(mine); len(got) != 1 {
		t.Errorf("SkillsOrShipped replaced the given skills")
	}
}

func TestSkillFiles(t *testing.T) {
	files := SkillFiles(".x/skills", map[string][]byte{"kk-add-x": []byte("b"), "kk-add": []byte("a")})
	if !slices.Equal(Names(files), []string{"kk-add", "kk-add-x"}) {
		t.Errorf("names %v (want name order)", Names(files))
	}
	if !slices.Equal(Rels(files), []string{".x/skills/kk-add/SKILL.md", ".x/skills/kk-add-x/SKILL.md"}) {
		t.Errorf("rels %v", Rels(files))
	}
	if !slices.Equal(Dirs(files), []string{".x/skills/kk-add", ".x/skills/kk-add-x"}) {
		t.Errorf("dirs %v", Dirs(files))
	}
}

func TestWriteAndRemoveFiles(t *testing.T) {
	root := t.TempDir()
	ctx := context.Background()
	files := []File{{Rel: "a/one.md", Data: []byte("1")}, {Rel: "a/b/two.md", Data: []byte("2")}}
	ch, err := WriteFiles(ctx, root, files)
	if err != nil || !slices.Equal(ch, []Change{{"a/one.md", "created"}, {"a/b/two.md", "created"}}) {
		t.Fatalf("first write: %v %v", ch, err)
	}
	if ch, err := WriteFiles(ctx, root, files); err != nil || len(ch) != 0 {
		t.Fatalf("second write: %v %v", ch, err)
	}
	files[1].Data = []byte("2'")
	if ch, err := WriteFiles(ctx, root, files); err != nil || !slices.Equal(ch, []Change{{"a/b/two.md", "updated"}}) {
		t.Fatalf("update: %v %v", ch, err)
	}
	missing, stale := DiffFiles(root, append(files, File{Rel: "a/three.md"}))
	if len(missing) != 1 || len(stale) != 0 {
		t.Errorf("diff: %v %v", missing, stale)
	}
	if got := FileProblems(root, append(files, File{Rel: "a/three.md"}, File{Rel: "a/one.md", Data: []byte("other")})); !slices.Equal(got, []string{
		"1 of 4 are missing (a/three.md)", "1 differ from this kk's (a/one.md)",
	}) {
		t.Errorf("problems %q", got)
	}
	if got := FileProblems(root, files); got != nil {
		t.Errorf("no problems expected: %q", got)
	}

	// phase: a folder where a file should go is an error naming the file.
	writeFile(t, filepath.Join(root, "c", "x"), "")
	if _, err := WriteFiles(ctx, root, []File{{Rel: "c/x/y.md", Data: []byte("y")}}); err == nil || !strings.HasPrefix(err.Error(), "writing c/x/y.md: ") {
		t.Errorf("blocked write: %v", err)
	}

	// phase: a done context stops before the next file.
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	if ch, err := WriteFiles(cctx, root, []File{{Rel: "d.md", Data: []byte("d")}}); err != context.Canceled || len(ch) != 0 || exists(filepath.Join(root, "d.md")) {
		t.Errorf("canceled write: %v %v", ch, err)
	}
	if _, err := RemoveFiles(cctx, root, []string{"a/one.md"}); err != context.Canceled || !exists(filepath.Join(root, "a/one.md")) {
		t.Errorf("canceled removal: %v", err)
	}

	ch, err = RemoveFiles(ctx, root, []string{"a/one.md", "a/b/two.md", "a/gone.md"})
	if err != nil || !slices.Equal(ch, []Change{{"a/one.md", "removed"}, {"a/b/two.md", "removed"}}) {
		t.Fatalf("remove: %v %v", ch, err)
	}
	writeFile(t, filepath.Join(root, "keep", "user.md"), "mine")
	RemoveEmptyDirs(root, "a/b", "keep", "a", "", ".")
	if exists(filepath.Join(root, "a")) || !exists(filepath.Join(root, "keep", "user.md")) {
		t.Error("RemoveEmptyDirs removed the wrong folders")
	}
	if _, err := RemoveFiles(ctx, root, []string{"keep"}); err == nil || !strings.HasPrefix(err.Error(), "removing keep: ") {
		t.Errorf("removing a full folder: %v", err)
	}
}

func TestAddChange(t *testing.T) {
	ch := AddChange(nil, "a", "")
	ch = AddChange(ch, "b", "created")
	if !slices.Equal(ch, []Change{{"b", "created"}}) {
		t.Errorf("got %v", ch)
	}
}

func TestRenderSkill(t *testing.T) {
	src := "---\nname: kk-x\ndescription: Do x.\nversion: 3\nlicense: MIT\nmetadata:\n  owner: me\n---\n\n# kk-x\n\nBody.\n"
	out, err := RenderSkill("kk-x", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	got := string(out)
	for _, want := range []string{"name: kk-x\n", "description: Do x.\n", "license: MIT\n", "  managed-by: kk\n", "  owner: me\n", "  version: '3'\n", "\n# kk-x\n\nBody.\n"} {
		if !strings.Contains(got, want) {
			t.Errorf("rendered skill lacks %q:\n%s", want, got)
		}
	}
	if strings.Contains(got, "\nversion:") {
		t.Errorf("version stayed a top-level key:\n%s", got)
	}
	for name, src := range map[string]string{
		"kk-x":  "---\nname: kk-y\ndescription: d\n---\nb\n",
		"kk-z":  "---\nname: kk-z\n---\nb\n",
		"kk-m":  "---\nname: kk-m\ndescription: d\nmetadata: 3\n---\nb\n",
		"kk-nf": "no front matter\n",
	} {
		if _, err := RenderSkill(name, []byte(src)); err == nil || !strings.Contains(err.Error(), "skill "+name) {
			t.Errorf("%s: error %v", name, err)
		}
	}
	for _, name := range []string{"", "a/b", ".hidden"} {
		if _, err := RenderSkills(map[string][]byte{name: []byte(src)}); err == nil || !strings.Contains(err.Error(), "is not a folder name") {
			t.Errorf("name %q: %v", name, err)
		}
	}
}

func TestManagedSkills(t *testing.T) {
	root := t.TempDir()
	dir := ".agents/skills"
	skill := func(name string) []byte {
		return []byte("---\nname: " + name + "\ndescription: Does " + name + ".\n---\n\nBody.\n")
	}
	rendered, err := RenderSkills(map[string][]byte{"kk-a": skill("kk-a"), "kk-old": skill("kk-old")})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := InstallManagedSkills(root, dir, rendered); err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(root, dir, "kk-a", "notes.txt"), "stray")
	writeFile(t, filepath.Join(root, dir, "mine", "SKILL.md"), string(skill("mine")))
	// kk-old is no longer shipped: the upgrade removes it, and the stray
	// file in kk's folder, and leaves the user's skill.
	rendered, _ = RenderSkills(map[string][]byte{"kk-a": skill("kk-a")})
	ch, err := InstallManagedSkills(root, dir, rendered)
	want := []Change{{".agents/skills/kk-a/notes.txt", "removed"}, {".agents/skills/kk-old", "removed"}}
	if err != nil || !slices.Equal(ch, want) {
		t.Fatalf("upgrade: %v %v", ch, err)
	}
	if !exists(filepath.Join(root, dir, "mine", "SKILL.md")) {
		t.Error("the user's skill was removed")
	}
	if ch, err := InstallManagedSkills(root, dir, rendered); err != nil || len(ch) != 0 {
		t.Errorf("second install: %v %v", ch, err)
	}
	ch, err = UninstallManagedSkills(root, dir, map[string][]byte{"kk-a": nil})
	if err != nil || !slices.Equal(ch, []Change{{".agents/skills/kk-a", "removed"}}) {
		t.Fatalf("uninstall: %v %v", ch, err)
	}
	if !exists(filepath.Join(root, dir, "mine")) {
		t.Error("uninstall removed the user's skill")
	}
	if err := os.RemoveAll(filepath.Join(root, dir, "mine")); err != nil {
		t.Fatal(err)
	}
	if _, err := UninstallManagedSkills(root, dir, nil); err != nil {
		t.Fatal(err)
	}
	if exists(filepath.Join(root, ".agents")) {
		t.Error("the emptied skills folder and its parent stay")
	}
}

func TestCheckSkills(t *testing.T) {
	root := t.TempDir()
	dir := ".x/skills"
	shipped, _ := ShippedSkills()
	if c := CheckManagedSkills(root, dir, "fake"); c.Name != "fake skills" || c.Level != LevelError || !strings.HasPrefix(c.Message, "missing from .x/skills: ") {
		t.Errorf("managed, missing: %+v", c)
	}
	if c := CheckSkillCopies(root, dir, "reinstall", "upgrade"); c.Name != "skills" || c.Level != LevelWarn || c.Fix != "reinstall" {
		t.Errorf("copies, missing: %+v", c)
	}
	rendered, _ := RenderSkills(shipped)
	if _, err := InstallManagedSkills(root, dir, rendered); err != nil {
		t.Fatal(err)
	}
	if c := CheckManagedSkills(root, dir, "fake"); c.Level != LevelOK {
		t.Errorf("managed, installed: %+v", c)
	}
	if c := CheckSkillCopies(root, dir, "reinstall", "upgrade"); c.Level != LevelWarn || c.Fix != "upgrade" || !strings.Contains(c.Message, "differ from this kk's") {
		t.Errorf("copies, rendered instead: %+v", c)
	}
	for _, f := range SkillFiles(dir, shipped) {
		writeFile(t, filepath.Join(root, f.Rel), string(f.Data))
	}
	if c := CheckSkillCopies(root, dir, "reinstall", "upgrade"); c.Level != LevelOK || !strings.HasSuffix(c.Message, "skills in .x/skills are current") {
		t.Errorf("copies, installed: %+v", c)
	}
	if c := CheckManagedSkills(root, dir, "fake"); c.Level != LevelWarn || !strings.HasPrefix(c.Message, "differ from this kk version's: .x/skills/") {
		t.Errorf("managed, copies instead: %+v", c)
	}
}

func TestSkillNames(t *testing.T) {
	re := regexp.MustCompile(`^[a-z0-9][a-z0-9-]*$`)
	names, err := SkillNames(map[string][]byte{"kk-b": nil, "kk-a": nil}, re.MatchString, "want lowercase letters")
	if err != nil || !slices.Equal(names, []string{"kk-a", "kk-b"}) {
		t.Errorf("names %v %v", names, err)
	}
	_, err = SkillNames(map[string][]byte{"../x": nil, "Y": nil, "ok": nil}, re.MatchString, "want lowercase letters")
	if err == nil || err.Error() != `skill name "../x": want lowercase letters` {
		t.Errorf("bad names: %v (the first in order)", err)
	}
}

func TestCheckRoot(t *testing.T) {
	root := t.TempDir()
	writeFile(t, filepath.Join(root, "f"), "")
	if err := CheckRoot(root); err != nil {
		t.Error(err)
	}
	for _, bad := range []string{"", filepath.Join(root, "f"), filepath.Join(root, "none")} {
		if err := CheckRoot(bad); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
}

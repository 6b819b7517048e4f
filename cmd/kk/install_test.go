package main

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// fakeRelease writes a release folder laid out as goreleaser writes it:
// one archive per platform in the build matrix, each holding an
// executable kk that prints its version, a man page and the completions;
// and checksums.txt.
func fakeRelease(t *testing.T, version string) string {
	t.Helper()
	dir := t.TempDir()
	var sums strings.Builder
	for _, goos := range []string{"linux", "darwin"} {
		for _, goarch := range []string{"amd64", "arm64"} {
			name := fmt.Sprintf("kk_%s_%s_%s.tar.gz", version, goos, goarch)
			data := tarGz(t, map[string]string{
				"kk":                  "#!/bin/sh\necho \"kk " + version + " " + goos + "/" + goarch + "\"\n",
				"README.md":           "# kk\n",
				"LICENSE":             "MIT\n",
				"man/man1/kk.1":       ".TH KK 1\n",
				"man/man1/kk-node.1":  ".TH KK-NODE 1\n",
				"completions/kk.bash": "# bash\n",
				"completions/_kk":     "#compdef kk\n",
				"completions/kk.fish": "# fish\n",
				"completions/kk.ps1":  "# powershell\n",
			})
			if err := os.WriteFile(filepath.Join(dir, name), data, 0o644); err != nil {
				t.Fatal(err)
			}
			sum := sha256.Sum256(data)
			fmt.Fprintf(&sums, "%s  %s\n", hex.EncodeToString(sum[:]), name)
		}
	}
	if err := os.WriteFile(filepath.Join(dir, "checksums.txt"), []byte(sums.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	return dir
}

func tarGz(t *testing.T, files map[string]string) []byte {
	t.Helper()
	var buf bytes.Buffer
	gz := gzip.NewWriter(&buf)
	tw := tar.NewWriter(gz)
	for _, name := range []string{"kk", "README.md", "LICENSE", "man/man1/kk.1", "man/man1/kk-node.1", "completions/kk.bash", "completions/_kk", "completions/kk.fish", "completions/kk.ps1"} {
		mode := int64(0o644)
		if name == "kk" {
			mode = 0o755
		}
		if err := tw.WriteHeader(&tar.Header{Name: name, Mode: mode, Size: int64(len(files[name])), Typeflag: tar.TypeReg}); err != nil {
			t.Fatal(err)
		}
		if _, err := tw.Write([]byte(files[name])); err != nil {
			t.Fatal(err)
		}
	}
	if err := tw.Close(); err != nil {
		t.Fatal(err)
	}
	if err := gz.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// runInstall runs scripts/install.sh with the given arguments and returns
// its stderr and whether it succeeded. KK_RELEASE_KEY is the test's own
// (releaseKey), unless the arguments start with "KK_RELEASE_KEY=…".
func runInstall(t *testing.T, args ...string) (string, bool) {
	t.Helper()
	env := append(os.Environ(), "KK_VERSION=", "KK_PREFIX=", "KK_BASE_URL=", "PATH=/usr/bin:/bin", "KK_RELEASE_KEY=")
	for len(args) > 0 && strings.HasPrefix(args[0], "KK_RELEASE_KEY=") {
		env = append(env, args[0])
		args = args[1:]
	}
	cmd := exec.Command("sh", append([]string{filepath.Join("..", "..", "scripts", "install.sh")}, args...)...)
	cmd.Env = env
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	cmd.Stdout = &stderr
	err := cmd.Run()
	return stderr.String(), err == nil
}

func hostPlatform(t *testing.T) string {
	if runtime.GOOS != "linux" && runtime.GOOS != "darwin" || runtime.GOARCH != "amd64" && runtime.GOARCH != "arm64" {
		t.Skipf("install.sh serves linux and darwin on amd64 and arm64, not %s/%s", runtime.GOOS, runtime.GOARCH)
	}
	return runtime.GOOS + "/" + runtime.GOARCH
}

// TestInstallScript serves a release over HTTP on the loopback interface
// and installs from it with scripts/install.sh.
func TestInstallScript(t *testing.T) {
	platform := hostPlatform(t)
	rel := fakeRelease(t, "1.2.3")
	srv := httptest.NewServer(http.FileServer(http.Dir(rel)))
	defer srv.Close()

	for _, tc := range []struct {
		name string
		args []string
	}{
		{"a version", []string{"--version", "1.2.3"}},
		{"a v-prefixed version", []string{"--version=v1.2.3"}},
		{"the only release in checksums.txt", nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			prefix := filepath.Join(t.TempDir(), "prefix")
			stderr, ok := runInstall(t, append([]string{"--base-url", srv.URL, "--prefix", prefix}, tc.args...)...)
			if !ok {
				t.Fatalf("install failed:\n%s", stderr)
			}
			if !strings.Contains(stderr, "installed kk 1.2.3 in "+prefix+"/bin/kk") || !strings.Contains(stderr, "is not on your PATH") {
				t.Errorf("stderr:\n%s", stderr)
			}
			out, err := exec.Command(filepath.Join(prefix, "bin", "kk")).Output()
			if err != nil || string(out) != "kk 1.2.3 "+platform+"\n" {
				t.Errorf("installed kk printed %q, %v; want the %s build", out, err, platform)
			}
			for _, f := range []string{"share/man/man1/kk.1", "share/man/man1/kk-node.1", "share/bash-completion/completions/kk", "share/zsh/site-functions/_kk", "share/fish/vendor_completions.d/kk.fish"} {
				if _, err := os.Stat(filepath.Join(prefix, f)); err != nil {
					t.Errorf("not installed: %s", f)
				}
			}
		})
	}

	t.Run("a version that is not there", func(t *testing.T) {
		prefix := filepath.Join(t.TempDir(), "prefix")
		stderr, ok := runInstall(t, "--base-url", srv.URL, "--prefix", prefix, "--version", "9.9.9")
		if ok || !strings.Contains(stderr, "lists no kk archive for "+platform+" version 9.9.9") {
			t.Errorf("ok=%v stderr:\n%s", ok, stderr)
		}
	})
}

// TestInstallScriptRefusesTampering changes an archive after checksums.txt
// was written: the install must stop and install nothing.
func TestInstallScriptRefusesTampering(t *testing.T) {
	platform := hostPlatform(t)
	rel := fakeRelease(t, "1.2.3")
	archive := filepath.Join(rel, "kk_1.2.3_"+strings.ReplaceAll(platform, "/", "_")+".tar.gz")
	evil := tarGz(t, map[string]string{"kk": "#!/bin/sh\necho evil\n"})
	if err := os.WriteFile(archive, evil, 0o644); err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(http.FileServer(http.Dir(rel)))
	defer srv.Close()
	prefix := filepath.Join(t.TempDir(), "prefix")
	stderr, ok := runInstall(t, "--base-url", srv.URL, "--prefix", prefix, "--version", "1.2.3")
	if ok {
		t.Fatalf("a tampered archive was installed:\n%s", stderr)
	}
	if !strings.Contains(stderr, "checksum mismatch for kk_1.2.3_") || !strings.Contains(stderr, "nothing was installed") {
		t.Errorf("stderr:\n%s", stderr)
	}
	if _, err := os.Stat(prefix); !os.IsNotExist(err) {
		t.Errorf("the prefix was written to: %v", err)
	}
}

// signRelease signs the release's checksums.txt as goreleaser's signs
// section does (ssh-keygen -Y sign with a new Ed25519 key) and returns the
// public key, for KK_RELEASE_KEY.
func signRelease(t *testing.T, rel string) string {
	t.Helper()
	if _, err := exec.LookPath("ssh-keygen"); err != nil {
		t.Skip("no ssh-keygen (OpenSSH) on PATH to sign a release with")
	}
	key := filepath.Join(t.TempDir(), "kk-release")
	if out, err := exec.Command("ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", "kk-release", "-f", key).CombinedOutput(); err != nil {
		t.Fatalf("ssh-keygen: %v\n%s", err, out)
	}
	if out, err := exec.Command("ssh-keygen", "-Y", "sign", "-n", "file", "-f", key, filepath.Join(rel, "checksums.txt")).CombinedOutput(); err != nil {
		t.Fatalf("ssh-keygen -Y sign: %v\n%s", err, out)
	}
	pub, err := os.ReadFile(key + ".pub")
	if err != nil {
		t.Fatal(err)
	}
	f := strings.Fields(string(pub))
	return f[0] + " " + f[1]
}

// TestInstallScriptSignature: a release whose checksums.txt is signed by
// the release key installs; a checksums.txt changed after signing (an
// attacker who replaced an archive and its checksum), a missing signature
// or another key's signature install nothing; --skip-signature installs
// with a warning.
func TestInstallScriptSignature(t *testing.T) {
	platform := hostPlatform(t)
	rel := fakeRelease(t, "1.2.3")
	pub := signRelease(t, rel)
	srv := httptest.NewServer(http.FileServer(http.Dir(rel)))
	defer srv.Close()
	install := func(args ...string) (string, bool, string) {
		prefix := filepath.Join(t.TempDir(), "prefix")
		stderr, ok := runInstall(t, append(args, "--base-url", srv.URL, "--prefix", prefix, "--version", "1.2.3")...)
		return stderr, ok, prefix
	}
	stderr, ok, prefix := install("KK_RELEASE_KEY=" + pub)
	if !ok || !strings.Contains(stderr, "checksums.txt is signed by the kk release key") {
		t.Fatalf("a signed release: ok=%v\n%s", ok, stderr)
	}
	if out, err := exec.Command(filepath.Join(prefix, "bin", "kk")).Output(); err != nil || string(out) != "kk 1.2.3 "+platform+"\n" {
		t.Errorf("installed kk printed %q, %v", out, err)
	}
	// a key that did not sign this release
	otherRel := fakeRelease(t, "1.2.3")
	otherPub := signRelease(t, otherRel)
	if stderr, ok, prefix := install("KK_RELEASE_KEY=" + otherPub); ok || !strings.Contains(stderr, "is not signed by the kk release key") || exists(prefix) {
		t.Errorf("another key: ok=%v\n%s", ok, stderr)
	}

	// an archive replaced, and its line in checksums.txt with it
	archive := filepath.Join(rel, "kk_1.2.3_"+strings.ReplaceAll(platform, "/", "_")+".tar.gz")
	evil := tarGz(t, map[string]string{"kk": "#!/bin/sh\necho evil\n"})
	if err := os.WriteFile(archive, evil, 0o644); err != nil {
		t.Fatal(err)
	}
	sums, err := os.ReadFile(filepath.Join(rel, "checksums.txt"))
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(evil)
	var lines []string
	for _, l := range strings.Split(strings.TrimSpace(string(sums)), "\n") {
		if strings.HasSuffix(l, filepath.Base(archive)) {
			l = hex.EncodeToString(sum[:]) + "  " + filepath.Base(archive)
		}
		lines = append(lines, l)
	}
	if err := os.WriteFile(filepath.Join(rel, "checksums.txt"), []byte(strings.Join(lines, "\n")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if stderr, ok, prefix := install("KK_RELEASE_KEY=" + pub); ok || !strings.Contains(stderr, "is not signed by the kk release key") || !strings.Contains(stderr, "nothing was installed") || exists(prefix) {
		t.Errorf("a changed checksums.txt: ok=%v\n%s", ok, stderr)
	}
	// --skip-signature trusts checksums.txt alone, and says so
	if stderr, ok, _ := install("KK_RELEASE_KEY="+pub, "--skip-signature"); !ok || !strings.Contains(stderr, "warning: --skip-signature") {
		t.Errorf("--skip-signature: ok=%v\n%s", ok, stderr)
	}
	// no signature at all
	if err := os.Remove(filepath.Join(rel, "checksums.txt.sig")); err != nil {
		t.Fatal(err)
	}
	if stderr, ok, _ := install("KK_RELEASE_KEY=" + pub); ok || !strings.Contains(stderr, "the release is not signed") {
		t.Errorf("no signature: ok=%v\n%s", ok, stderr)
	}
}

func exists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}

// TestInstallScriptHelp: --help prints the usage and exits 0, also when
// the script comes on standard input (curl … | sh -s -- --help), where $0
// is the shell and not the script.
func TestInstallScriptHelp(t *testing.T) {
	script, err := os.ReadFile(filepath.Join("..", "..", "scripts", "install.sh"))
	if err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{{"-s", "--", "--help"}, {"-s", "--", "-h"}} {
		cmd := exec.Command("sh", args...)
		cmd.Stdin = bytes.NewReader(script)
		var stdout, stderr bytes.Buffer
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		if err := cmd.Run(); err != nil || stderr.Len() > 0 {
			t.Errorf("sh %v < install.sh: %v, stderr %q", args, err, stderr.String())
		}
		for _, want := range []string{"Install kk from a release.", "--version", "--prefix", "--skip-signature", "ssh-keygen -Y verify"} {
			if !strings.Contains(stdout.String(), want) {
				t.Errorf("sh %v < install.sh: the help lacks %q:\n%s", args, want, stdout.String())
			}
		}
	}
}

// TestInstallSnapshot installs from a goreleaser snapshot build when
// KK_RELEASE_DIST names its dist folder (scripts/release-snapshot.sh does),
// and checks that the installed kk is that build.
func TestInstallSnapshot(t *testing.T) {
	dist := os.Getenv("KK_RELEASE_DIST")
	if dist == "" {
		t.Skip("KK_RELEASE_DIST is not set; scripts/release-snapshot.sh runs this against a snapshot build")
	}
	hostPlatform(t)
	srv := httptest.NewServer(http.FileServer(http.Dir(dist)))
	defer srv.Close()
	prefix := filepath.Join(t.TempDir(), "prefix")
	// The snapshot is signed with the key KK_RELEASE_KEY names
	// (release-snapshot.sh makes one for it).
	stderr, ok := runInstall(t, "KK_RELEASE_KEY="+os.Getenv("KK_RELEASE_KEY"), "--base-url", srv.URL, "--prefix", prefix)
	if !ok {
		t.Fatalf("install failed:\n%s", stderr)
	}
	if os.Getenv("KK_RELEASE_KEY") != "" && !strings.Contains(stderr, "checksums.txt is signed by the kk release key") {
		t.Errorf("the snapshot's signature was not checked:\n%s", stderr)
	}
	out, err := exec.Command(filepath.Join(prefix, "bin", "kk"), "version", "--json").Output()
	if err != nil {
		t.Fatalf("installed kk version: %v", err)
	}
	var v struct{ Version, Commit, Module, Platform string }
	if err := json.Unmarshal(out, &v); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	if !strings.HasSuffix(v.Version, "-next") || v.Module != module || v.Platform != runtime.GOOS+"/"+runtime.GOARCH {
		t.Errorf("installed kk reports %+v; want a snapshot version of %s for this platform", v, module)
	}
	for _, f := range []string{"share/man/man1/kk.1", "share/bash-completion/completions/kk", "share/zsh/site-functions/_kk", "share/fish/vendor_completions.d/kk.fish"} {
		if _, err := os.Stat(filepath.Join(prefix, f)); err != nil {
			t.Errorf("not installed from the snapshot: %s", f)
		}
	}
}

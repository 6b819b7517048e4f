package install

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
)

// ErrNotOnPath is returned by LookPath for a program it cannot find.
var ErrNotOnPath = errors.New("not found on PATH")

// LookPath finds the executable name in the folders of pathList (a PATH
// value), like exec.LookPath but with the PATH given, so that callers can
// use the environment they were handed. A name with a path separator is
// checked as is.
func LookPath(pathList, name string) (string, error) {
	if name == "" {
		return "", fmt.Errorf("empty program name: %w", ErrNotOnPath)
	}
	if strings.ContainsRune(name, '/') || strings.ContainsRune(name, filepath.Separator) {
		if executable(name) {
			return name, nil
		}
		return "", fmt.Errorf("%s is not an executable file", name)
	}
	names := []string{name}
	if runtime.GOOS == "windows" && filepath.Ext(name) == "" {
		names = []string{name + ".exe", name + ".cmd", name + ".bat", name}
	}
	for _, dir := range filepath.SplitList(pathList) {
		if dir == "" {
			continue
		}
		for _, n := range names {
			p := filepath.Join(dir, n)
			if executable(p) {
				return p, nil
			}
		}
	}
	return "", fmt.Errorf("%s: %w", name, ErrNotOnPath)
}

func executable(p string) bool {
	fi, err := os.Stat(p)
	if err != nil || fi.IsDir() {
		return false
	}
	return runtime.GOOS == "windows" || fi.Mode().Perm()&0o111 != 0
}

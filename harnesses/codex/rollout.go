package codex

import (
	"bufio"
	"encoding/json"
	"os"
	"os/user"
	"path/filepath"
	"slices"
	"strings"
	"time"
)

// now is the clock findRollout uses to pick the day folders.
var now = time.Now

// codexHome is Codex's state folder: $CODEX_HOME, else ~/.codex, the
// home folder found as Codex finds it: $HOME, else the account's entry in
// the user database.
func codexHome() string {
	if h := os.Getenv("CODEX_HOME"); h != "" {
		return h
	}
	home, err := os.UserHomeDir()
	if err != nil || home == "" {
		home = accountHome()
	}
	if home == "" {
		return ""
	}
	return filepath.Join(home, ".codex")
}

// accountHome is the home folder of the user running kk in the user
// database, "" when it names none.
var accountHome = func() string {
	u, err := user.Current()
	if err != nil {
		return ""
	}
	return u.HomeDir
}

// findRollout returns the rollout file of session id, or "". Codex writes
// sessions/YYYY/MM/DD/rollout-<timestamp>-<id>.jsonl under its home, by
// UTC date (harnesses.md §2.3): today's and yesterday's folders are
// searched by file name, then today's files by their session_meta line.
func findRollout(id string) string {
	home := codexHome()
	if home == "" || id == "" || strings.Trim(id, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_") != "" {
		return ""
	}
	t := now().UTC()
	days := []string{dayDir(home, t), dayDir(home, t.AddDate(0, 0, -1))}
	// Codex names rollouts by the id in lower case; a payload may spell
	// it otherwise, and kk names the session's log by it lowercased.
	for _, d := range days {
		for _, name := range slices.Compact([]string{id, strings.ToLower(id)}) {
			matches, _ := filepath.Glob(filepath.Join(d, "rollout-*-"+name+".jsonl"))
			if len(matches) > 0 {
				slices.Sort(matches)
				return matches[len(matches)-1]
			}
		}
	}
	files, _ := filepath.Glob(filepath.Join(days[0], "rollout-*.jsonl"))
	slices.Sort(files)
	for _, f := range files {
		if strings.EqualFold(sessionOf(f), id) {
			return f
		}
	}
	return ""
}

// dayDir is the rollout folder of t's day.
func dayDir(home string, t time.Time) string {
	return filepath.Join(home, "sessions", t.Format("2006"), t.Format("01"), t.Format("02"))
}

// sessionOf returns the session id in a rollout's first line
// ({"type":"session_meta","payload":{"id":…}}), or "".
func sessionOf(path string) string {
	f, err := os.Open(path)
	if err != nil {
		return ""
	}
	defer func() { _ = f.Close() }()
	first, _ := bufio.NewReaderSize(f, 64<<10).ReadBytes('\n')
	var l struct {
		Type    string `json:"type"`
		Payload struct {
			ID string `json:"id"`
		} `json:"payload"`
	}
	if json.Unmarshal(first, &l) != nil || l.Type != "session_meta" {
		return ""
	}
	return l.Payload.ID
}

package cursor

import (
	"encoding/json"
	"fmt"
	"os"
	"os/user"
	"path/filepath"
	"regexp"
	"sort"
	"strings"

	"github.com/kk-project/kk/internal/harness"
)

// ParseHookInput implements harness.Adapter. It reads the part of a
// Cursor hook's stdin kk uses (harnesses.md §3.1): every event carries
// conversation_id, hook_event_name and workspace_roots (sessionStart and
// sessionEnd also session_id, the conversation id), beforeSubmitPrompt
// prompt; the CLI always sends "transcript_path": null. A field of
// another type than kk reads is passed over (another field backs it up:
// cwd backs workspace_roots up) and recorded in in.Mistyped, an error
// only for the hooks that read it (harness.HookInput.Check).
//
// The session id is the conversation id as Cursor sends it (a UUID; the
// hook runtime turns any other id into one). Without a transcript_path
// the transcript is looked for under Cursor's storage; when none is found
// TranscriptPath stays empty and capture records nothing. The search is
// skipped at sessionStart and beforeSubmitPrompt, whose hooks do not read
// it.
func (a *Adapter) ParseHookInput(data []byte) (harness.HookInput, error) {
	m, err := harness.DecodePayload(data, "Cursor hook payload")
	if err != nil {
		return harness.HookInput{}, err
	}
	var in harness.HookInput
	for _, k := range []string{"conversation_id", "session_id"} {
		if in.SessionID == "" {
			harness.ReadString(m, &in.SessionID, &in.Mistyped.SessionID, k)
			in.SessionID = strings.TrimSpace(in.SessionID)
		}
	}
	if in.SessionID != "" {
		in.Mistyped.SessionID = ""
	}
	harness.ReadString(m, &in.HarnessEvent, &in.Mistyped.HarnessEvent, "hook_event_name")
	harness.ReadString(m, &in.Prompt, &in.Mistyped.Prompt, "prompt")
	harness.ReadString(m, &in.TranscriptPath, &in.Mistyped.TranscriptPath, "transcript_path")
	in.CWD, in.Mistyped.CWD = firstRoot(m["workspace_roots"])
	if in.CWD == "" {
		var bad string
		harness.ReadString(m, &in.CWD, &bad, "cwd")
		if in.Mistyped.CWD == "" {
			in.Mistyped.CWD = bad
		}
	}
	if in.CWD == "" {
		in.CWD = a.env("CURSOR_PROJECT_DIR")
	}
	if in.CWD != "" {
		in.Mistyped.CWD = ""
	}
	if in.TranscriptPath == "" && !noTranscript[in.HarnessEvent] {
		in.TranscriptPath = a.findTranscript(in.SessionID, in.CWD)
		if in.TranscriptPath == "" && in.SessionID != "" {
			in.NoTranscript = a.notFound(in.SessionID)
		}
	}
	return in, nil
}

// firstRoot is the session's folder of a workspace_roots value: the first
// root holding a knowledge base (.ai/kenkeep), else the first non-empty
// one (a workspace of several folders lists them all, and the knowledge
// base need not be in the first), or the error of a value that is no
// array (bad).
func firstRoot(raw json.RawMessage) (root, bad string) {
	if raw == nil || string(raw) == "null" {
		return "", ""
	}
	var list []json.RawMessage
	if json.Unmarshal(raw, &list) != nil {
		kind := map[byte]string{'"': "a string", '{': "an object", 't': "a boolean", 'f': "a boolean"}[raw[0]]
		if kind == "" {
			kind = "a number"
		}
		return "", `hook payload field "workspace_roots" is ` + kind + `, want an array of strings`
	}
	var roots []string
	for _, r := range list {
		var s string
		if json.Unmarshal(r, &s) == nil && s != "" {
			roots = append(roots, s)
		}
	}
	if len(roots) > 1 {
		for _, r := range roots {
			if fi, err := os.Stat(filepath.Join(r, ".ai", "kenkeep")); err == nil && fi.IsDir() {
				return r, ""
			}
		}
	}
	if len(roots) > 0 {
		return roots[0], ""
	}
	return "", ""
}

// noTranscript are the events whose hooks never read the transcript; the
// search for it is skipped there, since Cursor waits for sessionStart
// hooks before the first turn.
var noTranscript = map[string]bool{"sessionStart": true, "beforeSubmitPrompt": true}

// safeID is a conversation id that can be part of a file name or a glob
// pattern.
var safeID = regexp.MustCompile(`^[A-Za-z0-9_-]+$`)

// findTranscript locates a conversation's transcript (harnesses.md §3.3):
// $CURSOR_TRANSCRIPT_PATH, else
// ~/.cursor/projects/<slug>/agent-transcripts/<id>.jsonl (CLI) or
// …/<id>/<id>.jsonl (IDE), else the newest *.jsonl naming the id under any
// project's agent-transcripts. It returns "" when there is none.
func (a *Adapter) findTranscript(conv, cwd string) string {
	if p := a.env("CURSOR_TRANSCRIPT_PATH"); p != "" && isFile(p) {
		return p
	}
	if !safeID.MatchString(conv) {
		return ""
	}
	projects := a.projectsDir()
	if projects == "" {
		return ""
	}
	// The id as sent, and lowercased (the UUID form the files are named by).
	ids := []string{conv}
	if lower := strings.ToLower(conv); lower != conv {
		ids = append(ids, lower)
	}
	if cwd != "" {
		dir := filepath.Join(projects, slug(cwd), "agent-transcripts")
		for _, c := range ids {
			for _, p := range []string{filepath.Join(dir, c+".jsonl"), filepath.Join(dir, c, c+".jsonl")} {
				if isFile(p) {
					return p
				}
			}
		}
	}
	var found []string
	for _, c := range ids {
		for _, pattern := range []string{"*/agent-transcripts/*" + c + "*.jsonl", "*/agent-transcripts/*/*" + c + "*.jsonl"} {
			m, _ := filepath.Glob(filepath.Join(projects, pattern)) // the pattern is well formed
			found = append(found, m...)
		}
	}
	sort.Strings(found)
	newest, newestTime := "", int64(0)
	for _, p := range found {
		fi, err := os.Stat(p)
		if err != nil || !fi.Mode().IsRegular() {
			continue
		}
		if t := fi.ModTime().UnixNano(); newest == "" || t > newestTime {
			newest, newestTime = p, t
		}
	}
	return newest
}

// notFound says why no transcript of conversation conv was found.
func (a *Adapter) notFound(conv string) string {
	projects := a.projectsDir()
	if projects == "" {
		return "Cursor sent no transcript_path, and HOME (or USERPROFILE) is not set, so ~/.cursor/projects, where Cursor keeps its transcripts, cannot be searched: set HOME where Cursor runs its hooks, or CURSOR_TRANSCRIPT_PATH"
	}
	return fmt.Sprintf("Cursor sent no transcript_path, and no transcript of conversation %q was found under %s", conv, filepath.Join(projects, "*", "agent-transcripts"))
}

// projectsDir is ~/.cursor/projects, or "" when there is no home folder
// ($HOME, %USERPROFILE%, else the user database's).
func (a *Adapter) projectsDir() string {
	home := a.env("HOME")
	if home == "" {
		home = a.env("USERPROFILE")
	}
	if home == "" {
		// As Cursor (Node's os.homedir) finds it without HOME.
		home = accountHome()
	}
	if home == "" {
		return ""
	}
	return filepath.Join(home, ".cursor", "projects")
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

// slug is Cursor's name for a workspace's folder under ~/.cursor/projects:
// the absolute path without its leading slash, every character other than
// an ASCII letter or digit replaced by "-".
func slug(dir string) string {
	if abs, err := filepath.Abs(dir); err == nil {
		dir = abs
	}
	s := strings.TrimPrefix(filepath.ToSlash(dir), "/")
	return strings.Map(func(r rune) rune {
		if r < 128 && (r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9') {
			return r
		}
		return '-'
	}, s)
}

func isFile(p string) bool {
	fi, err := os.Stat(p)
	return err == nil && fi.Mode().IsRegular()
}

// HookOutput implements harness.Adapter. Only sessionStart can hand
// context to Cursor (capped at harness.ContextLimit); beforeSubmitPrompt
// has no field for it. The graph
// hint is stop's {"followup_message": …}, which Cursor sends as the next
// user message (bounded by its loop limit).
func (*Adapter) HookOutput(event harness.Event, context string) ([]byte, bool) {
	if event == harness.GraphHint {
		return append(harness.MustRawJSON(struct {
			FollowupMessage string `json:"followup_message"`
		}{harness.CapContext(context)}), '\n'), true
	}
	if event != harness.SessionStart {
		return nil, false
	}
	// Cursor documents no limit for additional_context (delivery was
	// measured whole up to 60 KB, harnesses.md §3.1): the context is cut
	// as for Claude Code (CapContext), which keeps a large ENTRY.md from
	// filling the first turn and says where the rest is.
	return harness.MustRawJSON(struct {
		AdditionalContext string `json:"additional_context"`
	}{harness.CapContext(context)}), true
}

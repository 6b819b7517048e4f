package harness

import (
	"strings"

	"github.com/kk-project/kk/internal/safetext"
)

// Harnesses put text of their own into the user turns of their
// transcripts: instructions files, environment and date blocks, skill
// bodies, and the context kk's own hooks injected. None of it is what the
// user said, and a session log (and the cursory test) must see only the
// user's words. Each adapter names the blocks its harness adds; StripTags
// takes them out.

// StripTags returns s without the blocks <tag>…</tag> of the given tags
// (an opening tag may carry attributes), trimmed. Blocks are also found
// HTML-escaped, &lt;tag&gt;…&lt;/tag&gt;, as Gemini CLI writes hook
// context. An opening tag with no closing tag after it is left alone: the
// text may be the user's own.
func StripTags(s string, tags ...string) string {
	for _, tag := range tags {
		s = stripTag(s, "<"+tag, ">", "</"+tag+">")
		s = stripTag(s, "&lt;"+tag, "&gt;", "&lt;/"+tag+"&gt;")
	}
	return strings.TrimSpace(s)
}

// stripTag removes every open…close block of s, where open is an opening
// tag's start ("<name"), followed by attributes and end (">").
func stripTag(s, open, end, close string) string {
	if !strings.Contains(s, open) {
		return s
	}
	var b strings.Builder
	rest := s
	for {
		i := strings.Index(rest, open)
		if i < 0 {
			break
		}
		after := rest[i+len(open):]
		// The name must end here: "<skill>" or "<skill attr…>", not "<skills>".
		if after == "" || !(strings.HasPrefix(after, end) || after[0] == ' ' || after[0] == '\t' || after[0] == '\n') {
			b.WriteString(rest[:i+len(open)])
			rest = after
			continue
		}
		j := strings.Index(after, close)
		if j < 0 {
			break
		}
		b.WriteString(rest[:i])
		rest = after[j+len(close):]
	}
	b.WriteString(rest)
	return b.String()
}

// HasTag reports whether s holds an opening <tag> (or its escaped form) of
// any of tags: tests use it to prove a turn carries nothing injected.
func HasTag(s string, tags ...string) bool {
	for _, tag := range tags {
		for _, open := range []string{"<" + tag + ">", "<" + tag + " ", "&lt;" + tag + "&gt;"} {
			if strings.Contains(s, open) {
				return true
			}
		}
	}
	return false
}

// InjectedTags are the blocks the harnesses kk supports are known to put
// into user turns. The conformance suite checks that no parsed user turn
// of a recorded transcript still holds one.
var InjectedTags = []string{
	"system-reminder",      // Claude Code
	"skill",                // Codex CLI: a skill's body
	"environment_context",  // Codex CLI
	"user_instructions",    // Codex CLI
	"session_context",      // Gemini CLI: its setup message
	"hook_context",         // Gemini CLI: context hooks added (kk's ENTRY.md)
	"current_datetime",     // Copilot CLI
	"system_reminder",      // Copilot CLI: context of a userPromptSubmitted hook
	"reminder",             // Copilot CLI
	"local-command-caveat", // Claude Code
}

// Defang is safetext.Defang: hook context with its markup tags and
// control characters disarmed.
func Defang(text string) string { return safetext.Defang(text) }

// ReplaceControls is safetext.ReplaceControls: text with its control
// characters written as U+FFFD.
func ReplaceControls(s string) string { return safetext.ReplaceControls(s) }

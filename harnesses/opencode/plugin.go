package opencode

import (
	"bytes"
	_ "embed"
	"encoding/json"
	"fmt"
	"regexp"
	"strings"
)

// pluginTemplate is the plugin's source with the kk command as the string
// literal commandPlaceholder.
//
//go:embed plugin/kk.mjs
var pluginTemplate []byte

const commandPlaceholder = `"__KK_COMMAND__"`

// pluginHeader is the first line of every plugin kk writes; uninstall
// removes the plugin file only when it starts with it.
var pluginHeader = func() []byte {
	first, _, _ := bytes.Cut(pluginTemplate, []byte("\n"))
	return first
}()

// renderPlugin returns the plugin invoking kk as command (a program path,
// run without a shell).
func renderPlugin(command string) ([]byte, error) {
	if command == "" {
		command = "kk"
	}
	if strings.ContainsAny(command, "\n\r") {
		return nil, fmt.Errorf("kk command %q spans lines", command)
	}
	lit, err := json.Marshal(command) // a JSON string is a JavaScript string literal
	if err != nil {
		return nil, err
	}
	if bytes.Count(pluginTemplate, []byte(commandPlaceholder)) != 1 {
		panic("plugin template must hold the command placeholder once")
	}
	return bytes.Replace(pluginTemplate, []byte(commandPlaceholder), lit, 1), nil
}

// pluginCommand matches the line of an installed plugin that names kk.
var pluginCommand = regexp.MustCompile(`(?m)^const KK = (".*");$`)

// installedCommand returns the kk command an installed plugin runs.
func installedCommand(src []byte) (string, bool) {
	m := pluginCommand.FindSubmatch(src)
	if m == nil {
		return "", false
	}
	var s string
	if json.Unmarshal(m[1], &s) != nil {
		return "", false
	}
	return s, true
}

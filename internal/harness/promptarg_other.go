//go:build !windows

package harness

// DefaultPromptArgMax is the PromptArgMax of a harness with no reason for
// another: Linux refuses a single argument over 128 KiB (MAX_ARG_STRLEN).
const DefaultPromptArgMax = 64 << 10

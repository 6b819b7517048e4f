package harness

// DefaultPromptArgMax is the PromptArgMax of a harness with no reason for
// another: Windows refuses a whole command line over 32,767 characters.
const DefaultPromptArgMax = 24 << 10

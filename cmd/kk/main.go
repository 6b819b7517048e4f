// Command kk is project memory for coding agents.
package main

import (
	"os"

	"github.com/kk-project/kk/internal/cli"
)

func main() { os.Exit(cli.Main()) }

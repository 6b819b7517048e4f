//go:build !unix

package serve

import "time"

// processCPU is not measured here.
func processCPU() time.Duration { return 0 }

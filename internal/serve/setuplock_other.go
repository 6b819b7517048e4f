//go:build !unix

package serve

import "context"

// lockSetup does nothing where flock does not exist: two kk serve
// started at once on a new folder are not kept apart there.
func lockSetup(context.Context, string) (func(), error) { return func() {}, nil }

//go:build !unix

package serve

// lockSetup does nothing where flock does not exist: two kk serve
// started at once on a new folder are not kept apart there.
func lockSetup(string) (func(), error) { return func() {}, nil }

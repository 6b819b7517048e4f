package txn

import "context"

// Faults are failures a test injects into the transactions run with a
// context (WithFaults), to show that a changeset is present whole or not
// at all. Nothing in kk sets them; a context without them runs every
// transaction as it is.
type Faults struct {
	// Write, when set, is called before each file a transaction writes
	// (path relative to .ai/kenkeep); an error it returns fails that
	// write, as a full disk would.
	Write func(rel string) error
	// At, when set, is called at named points of a commit: "journal"
	// (the journal's folder made, the journal not written yet), "applied"
	// (every file replaced), "remove" (before each removal), "recorded"
	// (index synced and audit record appended, journal not yet dropped).
	At func(point string)
}

type faultsKey struct{}

// WithFaults returns a context whose transactions inject f.
func WithFaults(ctx context.Context, f Faults) context.Context {
	return context.WithValue(ctx, faultsKey{}, f)
}

func faultsOf(ctx context.Context) Faults {
	f, _ := ctx.Value(faultsKey{}).(Faults)
	return f
}

// at calls the At fault of ctx, if any, at point.
func at(ctx context.Context, point string) {
	if f := faultsOf(ctx).At; f != nil {
		f(point)
	}
}

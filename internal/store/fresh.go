package store

import "time"

// RacyWindow is the racy-timestamp window of the one rule by which kk
// trusts a file it recorded before without reading it again (Unchanged):
// a file whose mtime is this close to (or after) the moment it was
// recorded may have changed again within the file system's timestamp
// granularity without its size or mtime showing it.
const RacyWindow = 2 * time.Second

// Unchanged is that rule. A file recorded with size and mtime (Unix
// nanoseconds) by a look that began at recorded is taken as unchanged,
// unread, when it still has that size and mtime and the mtime is older
// than recorded by more than RacyWindow. Anything else is read again and
// compared by the sha256 of its bytes. The branch index's sync (leaves and
// extractor sources) and the generated index files follow it.
func Unchanged(size, mtime, recSize, recMtime, recorded int64) bool {
	return size == recSize && mtime == recMtime && mtime < recorded-int64(RacyWindow)
}

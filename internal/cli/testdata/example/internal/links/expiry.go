package links

import "time"

// Expired reports whether l is older than ttl at now.
func Expired(l Link, now time.Time, ttl time.Duration) bool {
	return now.Sub(l.Created) >= ttl
}

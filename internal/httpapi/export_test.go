package httpapi

// Routes lists the server's routes as "METHOD pattern", for the tests
// that check a rule holds on every route.
func (s *Server) Routes() []string {
	var out []string
	for _, r := range s.routeTable() {
		out = append(out, r.method+" "+r.pattern)
	}
	return out
}

// HealthReason is healthReason, for the tests.
var HealthReason = healthReason

// MaxConnsFor is maxConnsFor, for the tests.
var MaxConnsFor = maxConnsFor

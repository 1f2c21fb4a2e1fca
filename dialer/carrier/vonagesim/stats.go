package vonagesim

// The simulator's counters and the waits on them.

import "context"

// Stats returns a snapshot of the counters.
func (s *Server) Stats() Stats { return s.counters.Get() }

// PeakInFlight is Stats().PeakInFlight.
func (s *Server) PeakInFlight() int { return s.Stats().PeakInFlight }

// ResetPeak sets the peak to the current number of calls in flight.
func (s *Server) ResetPeak() {
	s.counters.Update(func(st *Stats) { st.PeakInFlight = st.InFlight })
}

// CreatesTo is the number of calls created to number to (digits, as sent).
func (s *Server) CreatesTo(to string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.byTo[to]
}

// CreatesByTo returns the number of calls created per To number.
func (s *Server) CreatesByTo() map[string]int {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make(map[string]int, len(s.byTo))
	for k, v := range s.byTo {
		out[k] = v
	}
	return out
}

// Wait blocks until cond holds for the counters (checked at once and after
// every change) or ctx ends, returning ctx's error then. cond runs with the
// counters' lock held: it must not call the Server.
func (s *Server) Wait(ctx context.Context, cond func(Stats) bool) error {
	return s.counters.Wait(ctx, cond)
}

// WaitFinal blocks until at least n calls are over (Stats.Final) or ctx
// ends.
func (s *Server) WaitFinal(ctx context.Context, n int) error {
	return s.Wait(ctx, func(st Stats) bool { return st.Final >= n })
}

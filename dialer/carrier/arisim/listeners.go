package arisim

// The peak of events websockets open at once. Asterisk hands an
// application to one websocket connection only (the latest takes it from
// the others), so clients sharing one application must take turns; tests
// of several clients read PeakListeners to check that they never
// overlapped. The simulator itself keeps serving every websocket of an
// application, so an overlap shows in the counters rather than as lost
// events.

// settleListeners raises PeakListeners to Listeners; it runs after every
// change of the counters.
func settleListeners(st *Stats) {
	if st.Listeners > st.PeakListeners {
		st.PeakListeners = st.Listeners
	}
}

// ResetPeakListeners sets PeakListeners to the number of events websockets
// open now.
func (s *Server) ResetPeakListeners() {
	s.counters.Update(func(st *Stats) { st.PeakListeners = st.Listeners })
}

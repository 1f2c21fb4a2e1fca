package arisim

import "testing"

// PeakListeners counts the events websockets open at once.
func TestPeakListeners(t *testing.T) {
	s := Start(Config{})
	defer s.Close()
	listen(t, s, s.App())
	listen(t, s, s.App())
	waitStats(t, s, "two listeners", func(st Stats) bool { return st.Listeners == 2 })
	if n := s.DropEvents(); n != 2 {
		t.Fatalf("dropped %d websockets, want 2", n)
	}
	listen(t, s, s.App())
	if st := s.Stats(); st.PeakListeners != 2 || st.Listeners != 1 {
		t.Fatalf("peak %d with %d open, want 2 with 1", st.PeakListeners, st.Listeners)
	}
	s.ResetPeakListeners()
	if st := s.Stats(); st.PeakListeners != 1 {
		t.Fatalf("peak after reset %d, want 1", st.PeakListeners)
	}
}

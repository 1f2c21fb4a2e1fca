package simkit

import "sync"

// Gate is the fault injection in front of a simulated API, in the order a
// provider applies it: the 401 mode, the simulator's own credential check,
// a budget of 429s for the next call creates, then the test's fault
// function. R is the simulator's request description, F its fault. The
// zero value lets everything through. Safe for concurrent use.
type Gate[R, F any] struct {
	mu           sync.Mutex
	unauthorized bool
	limitNext    int
	fault        func(R) *F
}

// SetUnauthorized turns the 401 mode on or off: while on, every request is
// refused as if the credentials were wrong.
func (g *Gate[R, F]) SetUnauthorized(on bool) {
	g.mu.Lock()
	g.unauthorized = on
	g.mu.Unlock()
}

// LimitNext answers n more call creates (after the budget left) with the
// simulator's 429.
func (g *Gate[R, F]) LimitNext(n int) {
	g.mu.Lock()
	g.limitNext += n
	g.mu.Unlock()
}

// SetFault sets the function asked about every request that passed the
// other checks (nil: none); a non-nil fault is answered instead of serving
// the request. It is called without any simulator lock held.
func (g *Gate[R, F]) SetFault(f func(R) *F) {
	g.mu.Lock()
	g.fault = f
	g.mu.Unlock()
}

// Check returns the fault to answer for req, or nil to serve it:
// unauthorized() when the 401 mode is on or authorized is false,
// limited() for a create (isCreate) while the 429 budget lasts, else the
// fault function's answer.
func (g *Gate[R, F]) Check(req R, authorized, isCreate bool, unauthorized, limited func() *F) *F {
	g.mu.Lock()
	var f *F
	switch {
	case g.unauthorized || !authorized:
		f = unauthorized()
	case isCreate && g.limitNext > 0:
		g.limitNext--
		f = limited()
	}
	fault := g.fault
	g.mu.Unlock()
	if f == nil && fault != nil {
		f = fault(req)
	}
	return f
}

package console

import (
	"sync/atomic"
	"testing"
)

// CountPasswordChecks counts the argon2id checks of sign-in from now until
// t ends: the calls of auth.VerifyPassword (real) and auth.VerifyDummy
// (dummy). Not for parallel tests: it swaps package variables.
func CountPasswordChecks(t testing.TB) func() (real, dummy int64) {
	var r, d atomic.Int64
	vp, vd := verifyPassword, verifyDummy
	verifyPassword = func(hash, pw string) (bool, error) { r.Add(1); return vp(hash, pw) }
	verifyDummy = func(pw string) { d.Add(1); vd(pw) }
	t.Cleanup(func() { verifyPassword, verifyDummy = vp, vd })
	return func() (int64, int64) { return r.Load(), d.Load() }
}

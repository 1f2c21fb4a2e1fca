package console

import (
	"context"
	"fmt"
	"math"
	"net/http"
	"strconv"
	"time"

	"github.com/outdial/outdial/web/auth"
)

// Passwords cost memory and time on purpose: one argon2id hash at
// auth.HashParams takes 19 MiB and tens of milliseconds. The console
// computes at most maxConcurrentHashes of them at once (sign-in, the
// set-password page, the account page); the others wait their turn, so a
// flood of sign-ins queues instead of exhausting memory. Failed attempts
// are throttled as API.md 17 says (throttled, recordFailure).

// maxConcurrentHashes bounds the argon2id hashes computed at once: 3 × 19
// MiB.
const maxConcurrentHashes = 3

// The password functions the console calls: variables so that a test can
// count which ran (the same time for an unknown email and a wrong password
// means the same work).
var (
	verifyPassword = auth.VerifyPassword
	verifyDummy    = auth.VerifyDummy
	hashPassword   = auth.HashPassword
)

// hashing runs fn, which computes one argon2id hash, once a slot is free;
// it gives up when the browser goes away first.
func (c *Console) hashing(ctx context.Context, fn func()) error {
	select {
	case c.hashSlots <- struct{}{}:
	case <-ctx.Done():
		return fmt.Errorf("wait to hash a password: %w", context.Cause(ctx))
	}
	defer func() { <-c.hashSlots }()
	fn()
	return nil
}

// checkPassword reports whether pw is the password of hash, a stored
// argon2id string. An empty hash (no password set yet) does the work of
// a check and fails, in the same time.
func (c *Console) checkPassword(ctx context.Context, hash, pw string) (ok bool, err error) {
	var verr error
	if err := c.hashing(ctx, func() {
		if hash == "" {
			verifyDummy(pw)
			return
		}
		ok, verr = verifyPassword(hash, pw)
	}); err != nil {
		return false, err
	}
	if verr != nil {
		return false, fmt.Errorf("check password: %w", verr)
	}
	return ok, nil
}

// newPasswordHash hashes pw (checked against the policy by the caller).
func (c *Console) newPasswordHash(ctx context.Context, pw string) (string, error) {
	var hash string
	var herr error
	if err := c.hashing(ctx, func() { hash, herr = hashPassword(pw) }); err != nil {
		return "", err
	}
	return hash, herr
}

// throttled returns how long the sign-in of email from r's peer address
// must wait: auth.Throttle over the failures of the last auth.Window for
// the email and, apart, for the address, the longer wait when both are
// limited; 0 when neither is.
func (c *Console) throttled(r *http.Request, email string, now time.Time) (time.Duration, error) {
	byEmail, byAddress, err := c.db.SignInFailures(r.Context(), email, peerAddress(r), now.Add(-auth.Window))
	if err != nil {
		return 0, err
	}
	var wait time.Duration
	if d, limited := auth.Throttle(byEmail, now); limited {
		wait = d
	}
	if d, limited := auth.Throttle(byAddress, now); limited {
		wait = max(wait, d)
	}
	return wait, nil
}

// recordFailure counts a failed password or second factor of email from
// r's peer address at now.
func (c *Console) recordFailure(r *http.Request, email string, now time.Time) error {
	return c.db.RecordSignInFailure(r.Context(), email, peerAddress(r), now)
}

// tooManyAttempts answers 429 with Retry-After (whole seconds) and page
// (a template showing data) saying how long to wait.
func (c *Console) tooManyAttempts(w http.ResponseWriter, r *http.Request, s *session, wait time.Duration, page, title string, data any) error {
	w.Header().Set("Retry-After", strconv.FormatInt(int64(math.Ceil(wait.Seconds())), 10))
	return c.renderStatus(w, r, s, http.StatusTooManyRequests, page, title, "", data)
}

// waitMessage says how long to wait before trying again.
func waitMessage(wait time.Duration) string {
	mins := int64(math.Ceil(wait.Minutes()))
	if mins <= 1 {
		return "Too many failed attempts. Try again in a minute."
	}
	return "Too many failed attempts. Try again in " + strconv.FormatInt(mins, 10) + " minutes."
}

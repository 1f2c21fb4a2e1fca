package console

import (
	"net/http"
	"strings"

	"github.com/outdial/outdial/store"
)

// Password sign-in (API.md 17). Every way a password sign-in fails (an
// unknown email, a disabled user, one without a password yet, a wrong
// password) gets the same status and page after the same work: one
// argon2id check (a dummy one when there is no hash to check) and one
// failure recorded. The throttle is read before anything is checked, and
// a refused attempt (429) checks and records nothing.

// signInFailed is the message of every failed password sign-in.
const signInFailed = "That email and password do not match an account that may sign in."

// signInPassword checks an email and password and starts a session for
// the user: a full one, or one waiting for the second factor (and then the
// code page) when the user has turned one on.
func signInPassword(c *Console, w http.ResponseWriter, r *http.Request) error {
	ctx := r.Context()
	next := safeNext(r.PostFormValue("next"))
	email := strings.TrimSpace(r.PostFormValue("email"))
	pw := r.PostFormValue("password")
	form := signInForm{Next: next, Email: email}
	fail := func(msg string) error {
		form.PasswordError = msg
		return c.renderStatus(w, r, nil, http.StatusUnprocessableEntity, "signin.html", "Sign in", "", form)
	}
	if email == "" || pw == "" {
		return fail("Enter your email and your password.")
	}
	now := c.now()
	wait, err := c.throttled(r, email, now)
	if err != nil {
		return err
	}
	if wait > 0 {
		form.PasswordError = waitMessage(wait)
		return c.tooManyAttempts(w, r, nil, wait, "signin.html", "Sign in", form)
	}
	u, err := c.db.UserForSignIn(ctx, email)
	known := err == nil
	if err != nil && store.ErrorCode(err) != store.ENOTFOUND {
		return err
	}
	// An unknown user's hash is "": checkPassword does a dummy check.
	ok, err := c.checkPassword(ctx, u.PasswordHash, pw)
	if err != nil {
		return err
	}
	if !ok || !known || u.Disabled {
		if err := c.recordFailure(r, email, now); err != nil {
			return err
		}
		return fail(signInFailed)
	}
	p := store.Principal{UserID: u.ID}
	if u.TOTPEnabled {
		token, _, err := c.db.CreatePendingSession(ctx, p)
		if err != nil {
			return err
		}
		c.setSessionCookie(w, token)
		http.Redirect(w, r, secondFactorPath+"?next="+queryEscape(next), http.StatusSeeOther)
		return nil
	}
	token, _, err := c.db.CreateSession(ctx, p)
	if err != nil {
		return err
	}
	c.setSessionCookie(w, token)
	http.Redirect(w, r, next, http.StatusSeeOther)
	return nil
}

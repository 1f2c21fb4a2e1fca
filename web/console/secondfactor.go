package console

import (
	"context"
	"net/http"
	"strings"
	"time"

	"github.com/outdial/outdial/store"
	"github.com/outdial/outdial/web/auth"
)

// The second step of a password sign-in (API.md 17): after a correct
// password, a user with a second factor holds a session that waits for it
// (store.Session.SecondFactorPending), good for nothing but this page. Its
// field code takes a TOTP code of the current time step or one on either
// side, each step once (store.UseTOTPStep accepts a step only after the
// last one, in one statement), or a recovery code, each once. A wrong code
// counts as a failed sign-in of the user's email, and the throttle of the
// password form applies here too.

// secondFactorPath is the code page.
const secondFactorPath = signInPath + "/code"

// codeForm is the data of signin_code.html.
type codeForm struct {
	Next, Error string
	// CSRF is the waiting session's token: the page is rendered as
	// signed out (no navigation), so its form carries the token itself.
	CSRF string
}

// secondFactorPage shows the code form to a session that waits for its
// second factor; anyone else goes to the sign-in page (or, signed in, on to
// next).
func secondFactorPage(c *Console, w http.ResponseWriter, r *http.Request, s *session) error {
	next := safeNext(r.URL.Query().Get("next"))
	if s == nil || !s.SecondFactorPending {
		if s != nil {
			http.Redirect(w, r, next, http.StatusSeeOther)
			return nil
		}
		http.Redirect(w, r, signInPath+"?next="+queryEscape(next), http.StatusSeeOther)
		return nil
	}
	return c.render(w, r, nil, "signin_code.html", "Two-factor authentication", "", codeForm{Next: next, CSRF: s.CSRFToken})
}

// secondFactor checks the code and, when it is right, replaces the waiting
// session by a full one (a new cookie) and goes on to next; a wrong code
// shows the form again (422).
func secondFactor(c *Console, w http.ResponseWriter, r *http.Request, s *session) error {
	ctx := r.Context()
	next := safeNext(r.PostFormValue("next"))
	if s == nil || !s.SecondFactorPending {
		http.Redirect(w, r, signInPath+"?next="+queryEscape(next), http.StatusSeeOther)
		return nil
	}
	if !validCSRF(r, s) {
		c.renderError(w, r, nil, http.StatusForbidden, "This form has expired. Sign in again.")
		return nil
	}
	form := codeForm{Next: next, CSRF: s.CSRFToken}
	now := c.now()
	u, err := c.db.GetUser(ctx, s.OrganizationID, s.UserID)
	if store.ErrorCode(err) == store.ENOTFOUND {
		c.clearSessionCookie(w)
		http.Redirect(w, r, signInPath, http.StatusSeeOther)
		return nil
	}
	if err != nil {
		return err
	}
	wait, err := c.throttled(r, u.Email, now)
	if err != nil {
		return err
	}
	if wait > 0 {
		form.Error = waitMessage(wait)
		return c.tooManyAttempts(w, r, nil, wait, "signin_code.html", "Two-factor authentication", form)
	}
	ok, err := c.useSecondFactor(ctx, u, r.PostFormValue("code"), now, true)
	if err != nil {
		return err
	}
	if !ok {
		if err := c.recordFailure(r, u.Email, now); err != nil {
			return err
		}
		form.Error = "That code is not right, or was already used. Type the current code of your authenticator app, or one of your recovery codes."
		return c.renderStatus(w, r, nil, http.StatusUnprocessableEntity, "signin_code.html", "Two-factor authentication", "", form)
	}
	token, _, err := c.db.CompleteSecondFactor(ctx, s.token)
	if store.ErrorCode(err) == store.ENOTFOUND {
		c.clearSessionCookie(w)
		http.Redirect(w, r, signInPath+"?next="+queryEscape(next), http.StatusSeeOther)
		return nil
	}
	if err != nil {
		return err
	}
	c.setSessionCookie(w, token)
	http.Redirect(w, r, next, http.StatusSeeOther)
	return nil
}

// useSecondFactor checks code against u's second factor at now and uses it
// up: a TOTP code (its time step is then used), or, with recovery, one of
// the user's unused recovery codes. False for a wrong or used code, or a
// user without a second factor.
func (c *Console) useSecondFactor(ctx context.Context, u store.User, code string, now time.Time, recovery bool) (bool, error) {
	code = strings.TrimSpace(code)
	if code == "" {
		return false, nil
	}
	su, err := c.db.UserForSignIn(ctx, u.Email)
	if store.ErrorCode(err) == store.ENOTFOUND {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	if su.ID != u.ID || !su.TOTPEnabled || su.TOTPSecret == "" {
		return false, nil
	}
	if step, ok := auth.MatchTOTP(su.TOTPSecret.Reveal(), code, now, su.TOTPLastStep); ok {
		return c.db.UseTOTPStep(ctx, su.ID, step)
	}
	if !recovery {
		return false, nil
	}
	return c.db.UseRecoveryCode(ctx, su.ID, auth.HashRecoveryCode(code))
}

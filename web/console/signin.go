package console

import (
	"net/http"
	"strings"

	"github.com/outdial/outdial/store"
)

// Signing in: paste an API key into the form (POST /console/sign-in), or
// follow a one-time link (GET /console/sign-in/link?token=...); either sets
// the session cookie and goes on to the page the operator wanted (next).
// Signing out is a form with the CSRF token (POST /console/sign-out).

// signInPath is the sign-in page.
const signInPath = Prefix + "sign-in"

// signInForm is the data of signin.html.
type signInForm struct {
	Next  string
	Error string
}

// signInPage shows the sign-in form; a signed-in browser goes on to next.
func signInPage(c *Console, w http.ResponseWriter, r *http.Request, s *session) error {
	next := safeNext(r.URL.Query().Get("next"))
	if s != nil {
		http.Redirect(w, r, next, http.StatusSeeOther)
		return nil
	}
	return c.render(w, r, nil, "signin.html", "Sign in", "", signInForm{Next: next})
}

// signIn checks the pasted API key and starts a session for it; a bad key
// shows the form again (422) with the reason.
func signIn(c *Console, w http.ResponseWriter, r *http.Request, _ *session) error {
	next := safeNext(r.PostFormValue("next"))
	key := strings.TrimSpace(r.PostFormValue("api_key"))
	fail := func(msg string) error {
		return c.renderStatus(w, r, nil, http.StatusUnprocessableEntity, "signin.html", "Sign in", "", signInForm{Next: next, Error: msg})
	}
	if key == "" {
		return fail("Paste an API key to sign in.")
	}
	p, err := c.db.Authenticate(r.Context(), key)
	if store.ErrorCode(err) == store.ENOTFOUND {
		return fail("That API key is not valid (unknown or revoked).")
	}
	if err != nil {
		return err
	}
	token, _, err := c.db.CreateSession(r.Context(), p)
	if err != nil {
		return err
	}
	c.setSessionCookie(w, token)
	http.Redirect(w, r, next, http.StatusSeeOther)
	return nil
}

// signInLink redeems a one-time sign-in link. A link that is unknown, used,
// expired or whose key was revoked shows the sign-in form (400) saying so.
func signInLink(c *Console, w http.ResponseWriter, r *http.Request, _ *session) error {
	token, _, err := c.db.RedeemSignInLink(r.Context(), r.URL.Query().Get("token"))
	if store.ErrorCode(err) == store.ENOTFOUND {
		return c.renderStatus(w, r, nil, http.StatusBadRequest, "signin.html", "Sign in", "",
			signInForm{Next: Prefix, Error: "This sign-in link does not work: it was already used, has expired, or its API key was revoked. Sign in with an API key."})
	}
	if err != nil {
		return err
	}
	c.setSessionCookie(w, token)
	http.Redirect(w, r, Prefix, http.StatusSeeOther)
	return nil
}

// signOut ends the session and goes back to the sign-in page.
func signOut(c *Console, w http.ResponseWriter, r *http.Request, s *session) error {
	if err := c.db.DeleteSession(r.Context(), s.token); err != nil {
		return err
	}
	c.clearSessionCookie(w)
	http.Redirect(w, r, signInPath, http.StatusSeeOther)
	return nil
}

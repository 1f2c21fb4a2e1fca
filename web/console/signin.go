package console

import (
	"net/http"
	"strings"

	"github.com/outdial/outdial/store"
)

// Signing in (API.md 14, 17): an email and password (signInPassword,
// then the code page of secondfactor.go for a user with a second factor),
// or an API key pasted into the other form (signInKey; both forms post to
// POST /console/sign-in, told apart by their fields), or a one-time link
// (GET /console/sign-in/link?token=...); each sets the session cookie and
// goes on to the page the operator wanted (next). Signing out is a form
// with the CSRF token (POST /console/sign-out).

// signInPath is the sign-in page.
const signInPath = Prefix + "sign-in"

// signInForm is the data of signin.html.
type signInForm struct {
	Next string
	// Error is the key form's message; PasswordError the password
	// form's (Email is then what was typed).
	Error, PasswordError string
	Email                string
	// Notice is a message that is not an error (the password was set).
	Notice string
}

// signInPage shows the sign-in forms; a signed-in browser goes on to next.
func signInPage(c *Console, w http.ResponseWriter, r *http.Request, s *session) error {
	next := safeNext(r.URL.Query().Get("next"))
	if signedIn(s) != nil {
		http.Redirect(w, r, next, http.StatusSeeOther)
		return nil
	}
	f := signInForm{Next: next}
	if r.URL.Query().Has("password_set") {
		f.Notice = "Your password is set. Sign in with your email and password."
	}
	return c.render(w, r, nil, "signin.html", "Sign in", "", f)
}

// signIn signs in with the form that was sent: the one with the fields
// email and password, or the one with api_key.
func signIn(c *Console, w http.ResponseWriter, r *http.Request, _ *session) error {
	if r.PostForm == nil {
		if err := r.ParseForm(); err != nil {
			return c.renderStatus(w, r, nil, http.StatusBadRequest, "signin.html", "Sign in", "",
				signInForm{Next: Prefix, Error: "This form could not be read. Try again."})
		}
	}
	if r.PostForm.Has("email") || r.PostForm.Has("password") {
		return signInPassword(c, w, r)
	}
	return signInKey(c, w, r)
}

// signInKey checks the pasted API key and starts a session for it; a bad
// key shows the form again (422) with the reason.
func signInKey(c *Console, w http.ResponseWriter, r *http.Request) error {
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

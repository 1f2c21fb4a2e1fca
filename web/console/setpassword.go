package console

import (
	"errors"
	"net/http"

	"github.com/outdial/outdial/store"
	"github.com/outdial/outdial/web/auth"
)

// The set-password page (API.md 17): `outdial user create` and an admin's
// POST /api/v1/users hand out `<public-url>/console/set-password?token=…`.
// The page asks for the password twice; a password the policy refuses
// (auth.CheckPassword) is shown with the reason and leaves the link as it
// was; a good one is hashed and set, which uses the link up, and the
// browser goes to the sign-in page (the user signs in with the new
// password, and with it through any second factor the organization
// requires). A link that no longer works (used or expired: 410; unknown:
// 404) shows a page saying so, with nothing to fill in.

// setPasswordPath is the set-password page: web.SetPasswordPath, which
// web's links are made with (web imports this package, not the other way
// round; a test checks they agree).
const setPasswordPath = Prefix + "set-password"

// setPasswordForm is the data of setpassword.html.
type setPasswordForm struct {
	Token, Email string
	// Error says why the password was refused; Gone that the link no
	// longer works (no form then).
	Error string
	Gone  string
}

// linkGone is the page of a link that does not work: 404 when it never
// existed, 410 when it was used or has expired.
func linkGone(c *Console, w http.ResponseWriter, r *http.Request, err error) error {
	status := http.StatusGone
	msg := "This link to set a password no longer works: it was already used, or more than 24 hours have passed. Ask an admin of your organization for a new one, or sign in if you have set your password."
	if store.ErrorCode(err) == store.ENOTFOUND {
		status = http.StatusNotFound
		msg = "This link to set a password does not work: check that it was copied whole, or ask an admin of your organization for a new one."
	}
	return c.renderStatus(w, r, nil, status, "setpassword.html", "Set your password", "", setPasswordForm{Gone: msg})
}

// setPasswordPage shows the form of a link that works.
func setPasswordPage(c *Console, w http.ResponseWriter, r *http.Request, _ *session) error {
	token := r.URL.Query().Get("token")
	u, err := c.db.PasswordLinkUser(r.Context(), token)
	if code := store.ErrorCode(err); code == store.ENOTFOUND || code == store.EGONE {
		return linkGone(c, w, r, err)
	}
	if err != nil {
		return err
	}
	return c.render(w, r, nil, "setpassword.html", "Set your password", "", setPasswordForm{Token: token, Email: u.Email})
}

// setPassword sets the password of a link that works: the form again
// (422) with the reason when the two do not match or the policy refuses
// it, else the sign-in page.
func setPassword(c *Console, w http.ResponseWriter, r *http.Request, _ *session) error {
	ctx := r.Context()
	token := r.PostFormValue("token")
	u, err := c.db.PasswordLinkUser(ctx, token)
	if code := store.ErrorCode(err); code == store.ENOTFOUND || code == store.EGONE {
		return linkGone(c, w, r, err)
	}
	if err != nil {
		return err
	}
	pw := r.PostFormValue("password")
	form := setPasswordForm{Token: token, Email: u.Email}
	if msg := passwordProblem(pw, r.PostFormValue("confirm")); msg != "" {
		form.Error = msg
		return c.renderStatus(w, r, nil, http.StatusUnprocessableEntity, "setpassword.html", "Set your password", "", form)
	}
	hash, err := c.newPasswordHash(ctx, pw)
	if err != nil {
		return err
	}
	_, err = c.db.SetPasswordWithLink(ctx, token, hash)
	if code := store.ErrorCode(err); code == store.ENOTFOUND || code == store.EGONE {
		return linkGone(c, w, r, err) // used by another request meanwhile
	}
	if err != nil {
		return err
	}
	http.Redirect(w, r, signInPath+"?password_set=1", http.StatusSeeOther)
	return nil
}

// passwordProblem says why a new password (typed twice: pw and confirm)
// is refused, "" when it is not: the two differ, or the policy refuses it.
func passwordProblem(pw, confirm string) string {
	if pw != confirm {
		return "The two passwords are not the same."
	}
	err := auth.CheckPassword(pw)
	switch {
	case err == nil:
		return ""
	case errors.Is(err, auth.ErrPasswordTooShort):
		return "This password is too short: use at least 15 characters (a few unrelated words make a good one)."
	case errors.Is(err, auth.ErrPasswordTooLong):
		return "This password is too long: use at most 128 characters."
	case errors.Is(err, auth.ErrPasswordCommon):
		return "This password is on a list of common or breached passwords: choose another."
	default:
		return "This password cannot be used: " + err.Error() + "."
	}
}

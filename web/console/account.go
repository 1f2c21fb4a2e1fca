package console

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"html/template"
	"net/http"
	"strconv"
	"strings"

	"github.com/outdial/outdial/store"
	"github.com/outdial/outdial/web/auth"
)

// The account page (API.md 17): the signed-in user's own password and
// second factor. Nothing here goes through the public API (it has no
// route for one's own credentials): the page uses the store, as sign-in
// does, and records each change in the audit trail as user.update of the
// user, with the console's route. A session signed in with an API key has
// no password or second factor: its page says so. While the organization
// requires a second factor the user lacks, this page (and signing out) is
// all the console serves (console.go's wrap sends every page here).

// accountPath is the account page.
const accountPath = Prefix + "account"

// totpRequiredMessage is the refusal of anything else while the
// organization requires a second factor the user has not turned on.
const totpRequiredMessage = "Your organization requires two-factor authentication: turn it on in your account first."

// accountView is the data of account.html.
type accountView struct {
	// KeyName is set (and nothing else but Role) for an API key's session.
	KeyName string
	Role    string
	Email   string
	// TOTPEnabled: the second factor is on; RecoveryLeft of its codes are
	// unused.
	TOTPEnabled  bool
	RecoveryLeft int
	// MustTurnOn: the organization requires a second factor the user has
	// not turned on.
	MustTurnOn bool
	// Notice says what was just done; PasswordError and TOTPError why a
	// form was refused.
	Notice, PasswordError, TOTPError string
	// Enroll is the enrollment in progress, shown after "Turn on".
	Enroll *enrollment
	// RecoveryCodes are shown once, right after the second factor is on.
	RecoveryCodes []string
}

// enrollment is a second factor being turned on: its enrolment URL as a
// link and a QR code, and its secret as text.
type enrollment struct {
	URL    template.URL
	QRCode template.URL // a data: URL of the PNG
	Secret string
}

// accountNotices are the notices of ?done= after a change.
var accountNotices = map[string]string{
	"password": "Your password is changed.",
	"totp-off": "Two-factor authentication is off.",
}

// accountUser returns the view of s's account with its user (zero for a
// key's session, whose view then says so).
func (c *Console) accountUser(ctx context.Context, s *session) (accountView, store.User, error) {
	v := accountView{Role: string(s.Role)}
	if s.UserID == 0 {
		v.KeyName = s.ActorName
		return v, store.User{}, nil
	}
	u, err := c.db.GetUser(ctx, s.OrganizationID, s.UserID)
	if err != nil {
		return v, u, err
	}
	v.Email, v.TOTPEnabled, v.MustTurnOn = u.Email, u.TOTPEnabled, s.TOTPRequired && !u.TOTPEnabled
	if u.TOTPEnabled {
		if v.RecoveryLeft, err = c.db.RecoveryCodesLeft(ctx, u.ID); err != nil {
			return v, u, err
		}
	}
	return v, u, nil
}

// accountPage shows the account.
func accountPage(c *Console, w http.ResponseWriter, r *http.Request, s *session) error {
	v, _, err := c.accountUser(r.Context(), s)
	if err != nil {
		return err
	}
	v.Notice = accountNotices[r.URL.Query().Get("done")]
	return c.render(w, r, s, "account.html", "Account", "account", v)
}

// userAccount is accountUser for a form that changes a user's credentials:
// a key's session is answered 403 (ok false).
func (c *Console) userAccount(w http.ResponseWriter, r *http.Request, s *session) (accountView, store.User, bool, error) {
	if s.UserID == 0 {
		c.renderError(w, r, s, http.StatusForbidden, "You are signed in with an API key, which has no password or second factor.")
		return accountView{}, store.User{}, false, nil
	}
	v, u, err := c.accountUser(r.Context(), s)
	return v, u, err == nil, err
}

// accountPassword changes the password: the current one must be right
// (a wrong one counts as a failed sign-in, and the sign-in throttle
// applies) and the new one pass the policy.
func accountPassword(c *Console, w http.ResponseWriter, r *http.Request, s *session) error {
	v, u, ok, err := c.userAccount(w, r, s)
	if !ok {
		return err
	}
	ctx := r.Context()
	refuse := func(status int, msg string) error {
		v.PasswordError = msg
		return c.renderStatus(w, r, s, status, "account.html", "Account", "account", v)
	}
	now := c.now()
	if wait, err := c.throttled(r, u.Email, now); err != nil {
		return err
	} else if wait > 0 {
		v.PasswordError = waitMessage(wait)
		return c.tooManyAttempts(w, r, s, wait, "account.html", "Account", v)
	}
	if ok, err := c.currentPassword(ctx, u, r.PostFormValue("current_password")); err != nil {
		return err
	} else if !ok {
		if err := c.recordFailure(r, u.Email, now); err != nil {
			return err
		}
		return refuse(http.StatusUnprocessableEntity, "Your current password is not right.")
	}
	pw := r.PostFormValue("password")
	if msg := passwordProblem(pw, r.PostFormValue("confirm")); msg != "" {
		return refuse(http.StatusUnprocessableEntity, msg)
	}
	hash, err := c.newPasswordHash(ctx, pw)
	if err != nil {
		return err
	}
	if err := c.db.SetPassword(ctx, u.ID, hash); err != nil {
		return err
	}
	c.auditAccount(r, s, "password", "****", "****")
	http.Redirect(w, r, accountPath+"?done=password", http.StatusSeeOther)
	return nil
}

// currentPassword reports whether pw is u's password.
func (c *Console) currentPassword(ctx context.Context, u store.User, pw string) (bool, error) {
	su, err := c.db.UserForSignIn(ctx, u.Email)
	if err != nil {
		return false, err
	}
	if su.ID != u.ID || pw == "" {
		return false, nil
	}
	return c.checkPassword(ctx, su.PasswordHash, pw)
}

// accountTOTPStart begins turning the second factor on: a new secret, kept
// as the enrollment in progress, shown as a link, a QR code and text.
func accountTOTPStart(c *Console, w http.ResponseWriter, r *http.Request, s *session) error {
	v, u, ok, err := c.userAccount(w, r, s)
	if !ok {
		return err
	}
	if u.TOTPEnabled {
		http.Redirect(w, r, accountPath, http.StatusSeeOther)
		return nil
	}
	secret, _, err := auth.NewTOTPKey(u.Email)
	if err != nil {
		return err
	}
	if err := c.db.SetPendingTOTP(r.Context(), u.ID, secret); err != nil {
		return err
	}
	if v.Enroll, err = newEnrollment(u.Email, secret); err != nil {
		return err
	}
	return c.render(w, r, s, "account.html", "Account", "account", v)
}

// newEnrollment is the page's view of secret for email.
func newEnrollment(email, secret string) (*enrollment, error) {
	link := auth.TOTPURL(email, secret)
	png, err := auth.QRCodePNG(link)
	if err != nil {
		return nil, err
	}
	return &enrollment{URL: template.URL(link), //nolint:gosec // built by auth.TOTPURL, not typed by anyone
		QRCode: template.URL("data:image/png;base64," + base64.StdEncoding.EncodeToString(png)), //nolint:gosec // our PNG
		Secret: secret}, nil
}

// accountTOTPConfirm turns the second factor on once a code of the
// enrollment in progress matches, and shows the new recovery codes, once.
// The confirming code's time step is used up: it cannot sign in after.
func accountTOTPConfirm(c *Console, w http.ResponseWriter, r *http.Request, s *session) error {
	v, u, ok, err := c.userAccount(w, r, s)
	if !ok {
		return err
	}
	ctx := r.Context()
	secret, err := c.db.PendingTOTP(ctx, u.ID)
	if store.ErrorCode(err) == store.ENOTFOUND || u.TOTPEnabled {
		http.Redirect(w, r, accountPath, http.StatusSeeOther)
		return nil
	}
	if err != nil {
		return err
	}
	step, matched := auth.MatchTOTP(secret.Reveal(), r.PostFormValue("code"), c.now(), 0)
	if !matched {
		if v.Enroll, err = newEnrollment(u.Email, secret.Reveal()); err != nil {
			return err
		}
		v.TOTPError = "That code does not match. Type the 6-digit code your authenticator app shows now for Outdial."
		return c.renderStatus(w, r, s, http.StatusUnprocessableEntity, "account.html", "Account", "account", v)
	}
	codes, hashes := auth.NewRecoveryCodes()
	if err := c.db.EnableTOTP(ctx, u.ID, secret.Reveal(), hashes); err != nil {
		return err
	}
	if _, err := c.db.UseTOTPStep(ctx, u.ID, step); err != nil {
		return err
	}
	c.auditAccount(r, s, "totp_enabled", false, true)
	v.TOTPEnabled, v.MustTurnOn, v.RecoveryLeft, v.RecoveryCodes = true, false, len(codes), codes
	v.Notice = "Two-factor authentication is on."
	return c.render(w, r, s, "account.html", "Account", "account", v)
}

// accountTOTPOff turns the second factor off, given a current code or the
// password (a wrong one counts as a failed sign-in); not while the
// organization requires one (409).
func accountTOTPOff(c *Console, w http.ResponseWriter, r *http.Request, s *session) error {
	v, u, ok, err := c.userAccount(w, r, s)
	if !ok {
		return err
	}
	ctx := r.Context()
	if !u.TOTPEnabled {
		http.Redirect(w, r, accountPath, http.StatusSeeOther)
		return nil
	}
	refuse := func(status int, msg string) error {
		v.TOTPError = msg
		return c.renderStatus(w, r, s, status, "account.html", "Account", "account", v)
	}
	sec, err := c.db.OrganizationSecurity(ctx, s.OrganizationID)
	if err != nil {
		return err
	}
	if sec.RequireTOTP {
		return refuse(http.StatusConflict, "Your organization requires two-factor authentication: it stays on.")
	}
	now := c.now()
	if wait, err := c.throttled(r, u.Email, now); err != nil {
		return err
	} else if wait > 0 {
		v.TOTPError = waitMessage(wait)
		return c.tooManyAttempts(w, r, s, wait, "account.html", "Account", v)
	}
	var proven bool
	if code := r.PostFormValue("code"); code != "" {
		proven, err = c.useSecondFactor(ctx, u, code, now, false)
	} else {
		proven, err = c.currentPassword(ctx, u, r.PostFormValue("password"))
	}
	if err != nil {
		return err
	}
	if !proven {
		if err := c.recordFailure(r, u.Email, now); err != nil {
			return err
		}
		return refuse(http.StatusUnprocessableEntity, "Type a current code of your authenticator app, or your password, to turn two-factor authentication off.")
	}
	if err := c.db.DisableTOTP(ctx, u.ID); err != nil {
		return err
	}
	c.auditAccount(r, s, "totp_enabled", true, false)
	http.Redirect(w, r, accountPath+"?done=totp-off", http.StatusSeeOther)
	return nil
}

// auditAccount records a change of the user's own credentials (field,
// from, to; a password is masked) in the audit trail as user.update, with
// the console route's pattern. A failure is logged: the change is made.
func (c *Console) auditAccount(r *http.Request, s *session, field string, from, to any) {
	changes, _ := json.Marshal(map[string]map[string]any{field: {"from": from, "to": to}})
	id := s.UserID
	e := store.AuditEntry{OrganizationID: s.OrganizationID, ActorType: store.AuditActorUser, ActorID: s.UserID,
		ActorName: s.ActorName, Action: "user.update", Method: r.Method, Route: strings.TrimPrefix(r.Pattern, r.Method+" "), TargetType: "user",
		TargetID: &id, Changes: changes, Status: http.StatusOK, Address: peerAddress(r)}
	if err := c.db.RecordAudit(context.WithoutCancel(r.Context()), e); err != nil {
		c.log.ErrorContext(r.Context(), "console: audit account change", "field", field,
			"user_id", strconv.FormatInt(id, 10), "error", err.Error())
	}
}

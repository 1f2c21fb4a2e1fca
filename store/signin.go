package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/outdial/outdial/store/sqlcdb"
)

// What the console's password sign-in needs from the store (API.md 17):
// the user with its password hash and second factor, and the failed
// attempts of the last SignInFailureWindow per email and per address, kept
// in the database so that every node counts the same ones. The throttle's
// rule itself is the caller's.

// SignInFailureWindow is how long a failed sign-in counts; older ones are
// swept when a new one is recorded.
const SignInFailureWindow = 15 * time.Minute

// SignInUser is a user as sign-in checks it.
type SignInUser struct {
	User
	// PasswordHash is the argon2id string; "" until a password is set.
	PasswordHash string
	// TOTPSecret is the second factor's base32 secret, unsealed; "" when
	// TOTPEnabled is false.
	TOTPSecret Secret
	// TOTPLastStep is the last TOTP time step accepted (UseTOTPStep).
	TOTPLastStep int64
	// RequireTOTP: the user's organization requires a second factor.
	RequireTOTP bool
}

// totpAD binds a sealed TOTP secret (column col of users) to its user.
func totpAD(col string, userID int64) string {
	return "users/" + col + "/" + strconv.FormatInt(userID, 10)
}

// UserForSignIn returns the user whose email is email (in any case), with
// what sign-in checks. ENOTFOUND when no user has it (never had, or was
// deleted); a disabled user is returned (Disabled) for the caller to
// refuse in the same time as a wrong password.
func (db *DB) UserForSignIn(ctx context.Context, email string) (SignInUser, error) {
	r, err := db.rq.UserForSignIn(ctx, NormalizeEmail(email))
	if errors.Is(err, sql.ErrNoRows) {
		return SignInUser{}, Errorf(ENOTFOUND, "no user has this email")
	}
	if err != nil {
		return SignInUser{}, fmt.Errorf("user for sign-in: %w", err)
	}
	u := sqlcdb.User{ID: r.ID, OrganizationID: r.OrganizationID, Email: r.Email, EmailKey: r.EmailKey, Role: r.Role,
		Disabled: r.Disabled, PasswordHash: r.PasswordHash, TotpEnabled: r.TotpEnabled, CreatedAt: r.CreatedAt, UpdatedAt: r.UpdatedAt}
	out := SignInUser{User: userOf(u), PasswordHash: r.PasswordHash.String, TOTPLastStep: r.TotpLastStep, RequireTOTP: r.RequireTotp == 1}
	if r.TotpEnabled == 1 && r.TotpSecret != nil {
		plain, err := db.sealer.Open(r.TotpSecret, totpAD("totp_secret", r.ID))
		if err != nil {
			return SignInUser{}, fmt.Errorf("open the second factor of user %d: %w", r.ID, err)
		}
		out.TOTPSecret = Secret(plain)
	}
	return out, nil
}

// RecordSignInFailure records a failed sign-in (a wrong password, an
// unknown email, a wrong second factor) for email (normalized as
// NormalizeEmail) from address at at, and sweeps the failures older than
// SignInFailureWindow before at.
func (db *DB) RecordSignInFailure(ctx context.Context, email, address string, at time.Time) error {
	return db.inBatch(ctx, func(q sqlcdb.Querier) error {
		if _, err := q.SweepSignInFailures(ctx, at.Add(-SignInFailureWindow).UnixMilli()); err != nil {
			return fmt.Errorf("sweep sign-in failures: %w", err)
		}
		if err := q.InsertSignInFailure(ctx, sqlcdb.InsertSignInFailureParams{
			EmailKey: NormalizeEmail(email), Address: address, At: at.UnixMilli()}); err != nil {
			return fmt.Errorf("record sign-in failure: %w", err)
		}
		return nil
	})
}

// SignInFailures returns the times of the failed sign-ins after since for
// email (normalized) and, apart, from address, oldest first.
func (db *DB) SignInFailures(ctx context.Context, email, address string, since time.Time) (byEmail, byAddress []time.Time, err error) {
	s := since.UnixMilli()
	e, err := db.rq.SignInFailuresByEmail(ctx, sqlcdb.SignInFailuresByEmailParams{EmailKey: NormalizeEmail(email), Since: s})
	if err != nil {
		return nil, nil, fmt.Errorf("sign-in failures: %w", err)
	}
	a, err := db.rq.SignInFailuresByAddress(ctx, sqlcdb.SignInFailuresByAddressParams{Address: address, Since: s})
	if err != nil {
		return nil, nil, fmt.Errorf("sign-in failures: %w", err)
	}
	return times(e), times(a), nil
}

func times(ms []int64) []time.Time {
	out := make([]time.Time, len(ms))
	for i, v := range ms {
		out[i] = fromMS(v)
	}
	return out
}

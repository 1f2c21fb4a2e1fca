package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/outdial/outdial/store/sqlcdb"
)

// Set-password links (API.md 17): outdial user create and POST /users
// print a link <public-url>/console/set-password?token=<token>. It works
// until a password is set through it or PasswordLinkTTL passes; only the
// token's SHA-256 is stored. A used or expired link is kept for
// passwordLinkKeep after its expiry, so that opening it again says it no
// longer works (EGONE) rather than that it never existed (ENOTFOUND).

// PasswordLinkTTL is how long a set-password link works.
const PasswordLinkTTL = 24 * time.Hour

// passwordLinkKeep is how long an expired link's row stays.
const passwordLinkKeep = 7 * 24 * time.Hour

// createPasswordLink stores token's link for userID at now, sweeping the
// links expired longer than passwordLinkKeep; it runs inside the caller's
// transaction.
func createPasswordLink(ctx context.Context, q sqlcdb.Querier, userID int64, token string, now int64) error {
	if _, err := q.SweepPasswordLinks(ctx, now-passwordLinkKeep.Milliseconds()); err != nil {
		return fmt.Errorf("sweep password links: %w", err)
	}
	if err := q.CreatePasswordLink(ctx, sqlcdb.CreatePasswordLinkParams{TokenHash: hashKey(token), UserID: userID,
		CreatedAt: now, ExpiresAt: now + PasswordLinkTTL.Milliseconds()}); err != nil {
		return fmt.Errorf("insert password link: %w", err)
	}
	return nil
}

// CreatePasswordLink returns the token of a new set-password link for the
// organization's user userID (an admin sends a new one, e.g. after the
// first expired). Earlier links keep working until used or expired.
// ENOTFOUND for a user of another organization.
func (db *DB) CreatePasswordLink(ctx context.Context, orgID, userID int64) (string, error) {
	token, err := newToken()
	if err != nil {
		return "", err
	}
	err = db.inTx(ctx, func(q sqlcdb.Querier) error {
		if _, err := q.GetUser(ctx, sqlcdb.GetUserParams{ID: userID, OrganizationID: orgID}); err != nil {
			return notFound(err, "user", userID)
		}
		return createPasswordLink(ctx, q, userID, token, db.nowMS())
	})
	if err != nil {
		return "", err
	}
	return token, nil
}

// passwordLinkError explains why the link of token cannot be used at now:
// ENOTFOUND when there is no such link (or its user was deleted), EGONE
// when it was used or has expired.
func passwordLinkError(ctx context.Context, q sqlcdb.Querier, token string, now int64) error {
	l, err := q.GetPasswordLink(ctx, hashKey(token))
	if errors.Is(err, sql.ErrNoRows) {
		return Errorf(ENOTFOUND, "set-password link not found")
	}
	if err != nil {
		return fmt.Errorf("get password link: %w", err)
	}
	if l.UsedAt.Valid {
		return Errorf(EGONE, "this set-password link has been used and no longer works")
	}
	if l.ExpiresAt <= now {
		return Errorf(EGONE, "this set-password link has expired and no longer works")
	}
	return nil
}

// PasswordLinkUser returns the user whose set-password link token is: the
// page that asks for the password. ENOTFOUND for an unknown token, EGONE
// for a used or expired link. It uses nothing up.
func (db *DB) PasswordLinkUser(ctx context.Context, token string) (User, error) {
	now := db.nowMS()
	if err := passwordLinkError(ctx, db.rq, token, now); err != nil {
		return User{}, err
	}
	l, err := db.rq.GetPasswordLink(ctx, hashKey(token))
	if err != nil {
		return User{}, notFound(err, "set-password link", 0)
	}
	u, err := db.rq.GetUserByID(ctx, l.UserID)
	if err != nil {
		return User{}, notFound(err, "user", l.UserID)
	}
	return userOf(u), nil
}

// SetPasswordWithLink sets the password hash (an argon2id string; the
// caller has checked the password against its policy first, so a refused
// password does not use the link up) of the user whose link token is, and
// marks the link used, in one transaction; it returns the user. Errors as
// PasswordLinkUser's: of two requests with one link, one sets the password
// and the other is EGONE.
func (db *DB) SetPasswordWithLink(ctx context.Context, token, hash string) (User, error) {
	if err := checkPasswordHash(hash); err != nil {
		return User{}, err
	}
	if token == "" {
		return User{}, Errorf(ENOTFOUND, "set-password link not found")
	}
	var out User
	err := db.inTx(ctx, func(q sqlcdb.Querier) error {
		now := db.nowMS()
		userID, err := q.UsePasswordLink(ctx, sqlcdb.UsePasswordLinkParams{Now: sql.NullInt64{Int64: now, Valid: true}, TokenHash: hashKey(token)})
		if errors.Is(err, sql.ErrNoRows) {
			if err := passwordLinkError(ctx, q, token, now); err != nil {
				return err
			}
			return Errorf(EGONE, "this set-password link no longer works")
		}
		if err != nil {
			return fmt.Errorf("use password link: %w", err)
		}
		if _, err := q.SetUserPassword(ctx, sqlcdb.SetUserPasswordParams{
			PasswordHash: sql.NullString{String: hash, Valid: true}, UpdatedAt: now, ID: userID}); err != nil {
			return fmt.Errorf("set password: %w", err)
		}
		u, err := q.GetUserByID(ctx, userID)
		if err != nil {
			return notFound(err, "user", userID)
		}
		out = userOf(u)
		return nil
	})
	return out, err
}

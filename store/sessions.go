package store

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/base64"
	"errors"
	"fmt"
	"time"

	"github.com/outdial/outdial/store/sqlcdb"
)

// The console's sign-in (API.md 14, 17). A session is made from an API key
// (a pasted one, checked with Authenticate, or a one-time sign-in link made
// for one) or for a user (after the caller checked the password and any
// second factor) and acts for that key's or user's organization, with its
// role as it is at each lookup, until it has not been used for
// SessionIdleTimeout, it is deleted (sign-out), its key is revoked, or its
// user is disabled or deleted. Its
// token, which the browser keeps in a cookie, and a link's token are stored
// only as their SHA-256; the session's CSRF token is stored as is (it
// authenticates nothing without the session token).

// SessionIdleTimeout is how long a session lives without being used.
const SessionIdleTimeout = 12 * time.Hour

// sessionTouchInterval is how stale a session's last use must be before a
// lookup records a new one (and moves its expiry): a busy page does not
// write on every request.
const sessionTouchInterval = time.Minute

// Session is a signed-in console session.
type Session struct {
	Principal
	// CSRFToken is the value that requests changing something must carry
	// with the session's cookie (a form field or the X-CSRF-Token header).
	CSRFToken string
	// ExpiresAt is when the session ends unless it is used before then.
	ExpiresAt time.Time
	// SecondFactorPending: the user gave a correct password and must still
	// give a TOTP or recovery code (CompleteSecondFactor); until then the
	// session may do nothing else.
	SecondFactorPending bool
	// TOTPRequired: the organization requires a second factor and the
	// user has not turned one on; the user must do that before anything
	// else. Always false for a key's session.
	TOTPRequired bool
}

// newToken returns 32 random bytes as URL-safe base64 (43 characters).
func newToken() (string, error) {
	raw := make([]byte, 32)
	if _, err := rand.Read(raw); err != nil {
		return "", fmt.Errorf("generate token: %w", err)
	}
	return base64.RawURLEncoding.EncodeToString(raw), nil
}

// CreateSession starts a session for p, whose key the caller has just
// authenticated (Authenticate), or whose user (p.UserID, with APIKeyID 0)
// has just given a correct password and any second factor, and returns its
// token, shown once: only its hash is stored. Expired sessions and sign-in
// links are swept in the same transaction.
func (db *DB) CreateSession(ctx context.Context, p Principal) (string, Session, error) {
	return db.newSession(ctx, p, false)
}

// CreatePendingSession starts a session for the user p.UserID who gave a
// correct password and has a second factor to give: the session says
// SecondFactorPending until CompleteSecondFactor replaces it.
func (db *DB) CreatePendingSession(ctx context.Context, p Principal) (string, Session, error) {
	if p.UserID == 0 {
		return "", Session{}, Errorf(EINVALID, "only a user's session waits for a second factor")
	}
	return db.newSession(ctx, p, true)
}

func (db *DB) newSession(ctx context.Context, p Principal, pending bool) (string, Session, error) {
	var token string
	var s Session
	err := db.inTx(ctx, func(q sqlcdb.Querier) error {
		var err error
		token, s, err = createSession(ctx, q, p, pending, db.nowMS())
		return err
	})
	if err != nil {
		return "", Session{}, err
	}
	return token, s, nil
}

// CompleteSecondFactor ends the pending session whose token is token (the
// caller has just accepted its user's code) and starts a full one in its
// place, with a new token and CSRF token, in one transaction. A token of
// no pending session (unknown, expired, already completed) is ENOTFOUND.
func (db *DB) CompleteSecondFactor(ctx context.Context, token string) (string, Session, error) {
	var newToken string
	var s Session
	err := db.inTx(ctx, func(q sqlcdb.Querier) error {
		now := db.nowMS()
		r, err := q.DeletePendingConsoleSession(ctx, sqlcdb.DeletePendingConsoleSessionParams{TokenHash: hashKey(token), Now: now})
		if errors.Is(err, sql.ErrNoRows) {
			return Errorf(ENOTFOUND, "session not found")
		}
		if err != nil {
			return fmt.Errorf("complete second factor: %w", err)
		}
		u, err := q.GetUserByID(ctx, r.UserID.Int64)
		if err != nil {
			return notFound(err, "user", r.UserID.Int64)
		}
		if u.Disabled == 1 {
			return Errorf(ENOTFOUND, "session not found")
		}
		newToken, s, err = createSession(ctx, q, Principal{UserID: u.ID}, false, now)
		return err
	})
	if err != nil {
		return "", Session{}, err
	}
	return newToken, s, nil
}

// createSession inserts a session for p at now (unix ms) and sweeps the
// expired rows; it runs inside the caller's transaction. The Session
// returned has the role and name of p's key or user.
func createSession(ctx context.Context, q sqlcdb.Querier, p Principal, pending bool, now int64) (string, Session, error) {
	if (p.APIKeyID == 0) == (p.UserID == 0) {
		return "", Session{}, Errorf(EINVALID, "a session is made for an API key or for a user")
	}
	// The session's principal as Session will read it: its role and name
	// as they are now.
	if p.UserID != 0 {
		u, err := q.GetUserByID(ctx, p.UserID)
		if err != nil {
			return "", Session{}, notFound(err, "user", p.UserID)
		}
		p.OrganizationID, p.Role, p.ActorName = u.OrganizationID, Role(u.Role), u.Email
	} else {
		k, err := q.GetAPIKeyByID(ctx, p.APIKeyID)
		if err != nil {
			return "", Session{}, notFound(err, "api key", p.APIKeyID)
		}
		p.OrganizationID, p.Role, p.ActorName = k.OrganizationID, Role(k.Role), k.Name
	}
	if err := sweepSessions(ctx, q, now); err != nil {
		return "", Session{}, err
	}
	token, err := newToken()
	if err != nil {
		return "", Session{}, err
	}
	csrf, err := newToken()
	if err != nil {
		return "", Session{}, err
	}
	expires := now + SessionIdleTimeout.Milliseconds()
	id, err := q.CreateConsoleSession(ctx, sqlcdb.CreateConsoleSessionParams{
		TokenHash: hashKey(token), CsrfToken: csrf, ApiKeyID: nullID(p.APIKeyID), UserID: nullID(p.UserID),
		OrganizationID: p.OrganizationID, CreatedAt: now, LastSeenAt: now, ExpiresAt: expires,
		SecondFactorPending: boolInt(pending),
	})
	if err != nil {
		return "", Session{}, fmt.Errorf("insert session: %w", err)
	}
	p.SessionID = id
	return token, Session{Principal: p, CSRFToken: csrf, ExpiresAt: fromMS(expires), SecondFactorPending: pending}, nil
}

// nullID is id as a nullable column, NULL for 0.
func nullID(id int64) sql.NullInt64 { return sql.NullInt64{Int64: id, Valid: id != 0} }

// sweepSessions deletes the expired sessions and sign-in links. Both
// deletes use an index on expires_at, so a sweep that finds nothing costs
// two index probes.
func sweepSessions(ctx context.Context, q sqlcdb.Querier, now int64) error {
	if _, err := q.DeleteExpiredConsoleSessions(ctx, now); err != nil {
		return fmt.Errorf("sweep sessions: %w", err)
	}
	if _, err := q.DeleteExpiredSignInLinks(ctx, now); err != nil {
		return fmt.Errorf("sweep sign-in links: %w", err)
	}
	return nil
}

// Session returns the session whose token is token, with its principal's
// role and name as they are now: ENOTFOUND when there is none, it has
// expired, its API key has been revoked or its user disabled or deleted.
// A session last
// used more than a minute ago is recorded as used now, which moves its
// expiry to now plus SessionIdleTimeout.
func (db *DB) Session(ctx context.Context, token string) (Session, error) {
	if token == "" {
		return Session{}, Errorf(ENOTFOUND, "session not found")
	}
	now := db.nowMS()
	hash := hashKey(token)
	r, err := db.rq.GetConsoleSession(ctx, sqlcdb.GetConsoleSessionParams{TokenHash: hash, Now: now})
	if errors.Is(err, sql.ErrNoRows) {
		return Session{}, Errorf(ENOTFOUND, "session not found")
	}
	if err != nil {
		return Session{}, fmt.Errorf("get session: %w", err)
	}
	s := Session{Principal: Principal{APIKeyID: r.ApiKeyID.Int64, UserID: r.UserID.Int64, OrganizationID: r.OrganizationID,
		SessionID: r.ID, Role: Role(r.Role), ActorName: r.ActorName},
		CSRFToken: r.CsrfToken, ExpiresAt: fromMS(r.ExpiresAt),
		SecondFactorPending: r.SecondFactorPending == 1, TOTPRequired: r.TotpRequired == 1}
	stale := now - sessionTouchInterval.Milliseconds()
	if r.LastSeenAt <= stale {
		expires := now + SessionIdleTimeout.Milliseconds()
		err := db.wq.TouchConsoleSession(ctx, sqlcdb.TouchConsoleSessionParams{
			Now: now, ExpiresAt: expires, ID: r.ID, StaleBefore: stale})
		if err != nil {
			return Session{}, fmt.Errorf("touch session: %w", err)
		}
		s.ExpiresAt = fromMS(expires)
	}
	return s, nil
}

// DeleteSession ends the session whose token is token (sign-out). Ending a
// session that does not exist is not an error.
func (db *DB) DeleteSession(ctx context.Context, token string) error {
	if _, err := db.wq.DeleteConsoleSession(ctx, hashKey(token)); err != nil {
		return fmt.Errorf("delete session: %w", err)
	}
	return nil
}

// CreateSignInLink returns the token of a one-time sign-in link for p's key,
// valid for ttl (outdial demo prints it as
// <public-url>/console/sign-in/link?token=<token>). Only the token's hash is
// stored. A ttl that is not positive is EINVALID.
func (db *DB) CreateSignInLink(ctx context.Context, p Principal, ttl time.Duration) (token string, err error) {
	if ttl <= 0 {
		return "", Errorf(EINVALID, "sign-in link lifetime must be positive")
	}
	token, err = newToken()
	if err != nil {
		return "", err
	}
	err = db.inTx(ctx, func(q sqlcdb.Querier) error {
		now := db.nowMS()
		if err := sweepSessions(ctx, q, now); err != nil {
			return err
		}
		err := q.CreateSignInLink(ctx, sqlcdb.CreateSignInLinkParams{TokenHash: hashKey(token), ApiKeyID: p.APIKeyID,
			OrganizationID: p.OrganizationID, CreatedAt: now, ExpiresAt: now + ttl.Milliseconds()})
		if err != nil {
			return fmt.Errorf("insert sign-in link: %w", err)
		}
		return nil
	})
	if err != nil {
		return "", err
	}
	return token, nil
}

// RedeemSignInLink uses the sign-in link whose token is token and starts a
// session for its key, returning the session's token and the session. A
// link works once (marking it used and creating the session is one
// transaction), before it expires, and while its key is not revoked; any
// other token is ENOTFOUND.
func (db *DB) RedeemSignInLink(ctx context.Context, token string) (string, Session, error) {
	if token == "" {
		return "", Session{}, Errorf(ENOTFOUND, "sign-in link not found")
	}
	var sessionToken string
	var s Session
	err := db.inTx(ctx, func(q sqlcdb.Querier) error {
		now := db.nowMS()
		r, err := q.RedeemSignInLink(ctx, sqlcdb.RedeemSignInLinkParams{Now: sql.NullInt64{Int64: now, Valid: true}, TokenHash: hashKey(token)})
		if errors.Is(err, sql.ErrNoRows) {
			return Errorf(ENOTFOUND, "sign-in link not found, already used or expired")
		}
		if err != nil {
			return fmt.Errorf("redeem sign-in link: %w", err)
		}
		sessionToken, s, err = createSession(ctx, q, Principal{APIKeyID: r.ApiKeyID, OrganizationID: r.OrganizationID}, false, now)
		return err
	})
	if err != nil {
		return "", Session{}, err
	}
	return sessionToken, s, nil
}

package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"time"
	"unicode"

	"github.com/outdial/outdial/store/sqlcdb"
)

// The people of an organization (API.md 17). A user signs in to the
// console with an email and a password (and a second factor, totp.go);
// the first password is set through a one-time link (passwordlinks.go).
// An email belongs to one user of all organizations, compared
// case-insensitively, since sign-in has only the email. Deleting a user
// deletes its row, sessions, links and recovery codes: it cannot sign in
// again and its email can be given to a new user. The store keeps the
// password hashes its callers make (argon2id); it never sees a password.

// MaxEmailLength is the longest email address accepted (RFC 5321's path
// limit).
const MaxEmailLength = 254

// User is a person of an organization. The password hash and second
// factor's secret are never part of it (UserForSignIn has them).
type User struct {
	ID             int64
	OrganizationID int64
	// Email is as it was given; it is unique in lower case.
	Email    string
	Role     Role
	Disabled bool
	// HasPassword: a password has been set.
	HasPassword bool
	TOTPEnabled bool
	CreatedAt   time.Time
	UpdatedAt   time.Time
}

func userOf(u sqlcdb.User) User {
	return User{ID: u.ID, OrganizationID: u.OrganizationID, Email: u.Email, Role: Role(u.Role),
		Disabled: u.Disabled == 1, HasPassword: u.PasswordHash.Valid, TOTPEnabled: u.TotpEnabled == 1,
		CreatedAt: fromMS(u.CreatedAt), UpdatedAt: fromMS(u.UpdatedAt)}
}

// NormalizeEmail returns the form emails are compared in: trimmed and in
// lower case. Sign-in failures are counted per this form too.
func NormalizeEmail(email string) string { return strings.ToLower(strings.TrimSpace(email)) }

// CheckEmail is EINVALID unless email (trimmed) looks like an address: one
// "@" with something on each side, no spaces or control characters, at most
// MaxEmailLength bytes. Whether it receives mail is not checked.
func CheckEmail(email string) error {
	bad := func(why string) error { return Errorf(EINVALID, "email %q is not a valid address: %s", email, why) }
	switch {
	case email == "":
		return Errorf(EINVALID, "email must not be empty")
	case len(email) > MaxEmailLength:
		return Errorf(EINVALID, "email must be at most %d characters", MaxEmailLength)
	case strings.Count(email, "@") != 1:
		return bad("it needs exactly one @")
	}
	local, domain, _ := strings.Cut(email, "@")
	if local == "" || domain == "" {
		return bad("it needs a name before the @ and a domain after it")
	}
	for _, r := range email {
		if unicode.IsSpace(r) || unicode.IsControl(r) || unicode.Is(unicode.Cf, r) {
			return bad("it must not contain spaces or control characters")
		}
	}
	return nil
}

// CreateUser adds a user with role to the organization orgID and returns
// it with the token of a link that sets its password (PasswordLinkTTL;
// shown once, only its hash is stored). An email some user of any
// organization has (in any case) is ECONFLICT; a malformed email or a role
// outside the three is EINVALID; an unknown organization ENOTFOUND.
func (db *DB) CreateUser(ctx context.Context, orgID int64, email string, role Role) (User, string, error) {
	return db.createUser(ctx, func(q sqlcdb.Querier, _ int64) (sqlcdb.Organization, error) {
		o, err := q.GetOrganizationByID(ctx, orgID)
		if err != nil {
			return o, notFound(err, "organization", orgID)
		}
		return o, nil
	}, email, role)
}

// CreateUserInOrg is CreateUser for the organization named org, created on
// first use (outdial user create, as CreateAPIKey).
func (db *DB) CreateUserInOrg(ctx context.Context, org, email string, role Role) (User, string, error) {
	return db.createUser(ctx, func(q sqlcdb.Querier, now int64) (sqlcdb.Organization, error) {
		return orgByName(ctx, q, org, now)
	}, email, role)
}

func (db *DB) createUser(ctx context.Context, org func(q sqlcdb.Querier, now int64) (sqlcdb.Organization, error), email string, role Role) (User, string, error) {
	email = strings.TrimSpace(email)
	if err := CheckEmail(email); err != nil {
		return User{}, "", err
	}
	if err := checkRole(role); err != nil {
		return User{}, "", err
	}
	token, err := newToken()
	if err != nil {
		return User{}, "", err
	}
	var out User
	err = db.inTx(ctx, func(q sqlcdb.Querier) error {
		now := db.nowMS()
		o, err := org(q, now)
		if err != nil {
			return err
		}
		u, err := q.CreateUser(ctx, sqlcdb.CreateUserParams{OrganizationID: o.ID, Email: email,
			EmailKey: NormalizeEmail(email), Role: string(role), CreatedAt: now})
		if errors.Is(err, sql.ErrNoRows) {
			return Errorf(ECONFLICT, "a user with email %s exists", email)
		}
		if err != nil {
			return fmt.Errorf("insert user: %w", err)
		}
		out = userOf(u)
		return createPasswordLink(ctx, q, u.ID, token, now)
	})
	if err != nil {
		return User{}, "", err
	}
	return out, token, nil
}

// ListUsers returns the organization's users, oldest first.
func (db *DB) ListUsers(ctx context.Context, orgID int64) ([]User, error) {
	rows, err := db.rq.ListUsers(ctx, orgID)
	if err != nil {
		return nil, fmt.Errorf("list users: %w", err)
	}
	out := make([]User, len(rows))
	for i, r := range rows {
		out[i] = userOf(r)
	}
	return out, nil
}

// GetUser returns the organization's user userID; ENOTFOUND when there is
// none (in that organization).
func (db *DB) GetUser(ctx context.Context, orgID, userID int64) (User, error) {
	u, err := db.rq.GetUser(ctx, sqlcdb.GetUserParams{ID: userID, OrganizationID: orgID})
	if err != nil {
		return User{}, notFound(err, "user", userID)
	}
	return userOf(u), nil
}

// UpdateUser sets the role and/or disabled flag of the organization's user
// userID (nil: unchanged) and returns the user before and after. Disabling
// ends the user's sessions in the same transaction (streams end at their
// next LiveCredentials check). ENOTFOUND for a user of another
// organization; EINVALID for a role outside the three.
func (db *DB) UpdateUser(ctx context.Context, orgID, userID int64, role *Role, disabled *bool) (before, after User, err error) {
	p := sqlcdb.UpdateUserParams{ID: userID, OrganizationID: orgID}
	if role != nil {
		if err := checkRole(*role); err != nil {
			return User{}, User{}, err
		}
		p.Role = sql.NullString{String: string(*role), Valid: true}
	}
	if disabled != nil {
		p.Disabled = sql.NullInt64{Int64: boolInt(*disabled), Valid: true}
	}
	err = db.inTx(ctx, func(q sqlcdb.Querier) error {
		b, err := q.GetUser(ctx, sqlcdb.GetUserParams{ID: userID, OrganizationID: orgID})
		if err != nil {
			return notFound(err, "user", userID)
		}
		p.UpdatedAt = db.nowMS()
		a, err := q.UpdateUser(ctx, p)
		if err != nil {
			return notFound(err, "user", userID)
		}
		before, after = userOf(b), userOf(a)
		if after.Disabled {
			return endUserSessions(ctx, q, userID)
		}
		return nil
	})
	if err != nil {
		return User{}, User{}, err
	}
	return before, after, nil
}

// DeleteUser deletes the organization's user userID with its sessions,
// password links and recovery codes, and returns it as it was. ENOTFOUND
// for a user of another organization.
func (db *DB) DeleteUser(ctx context.Context, orgID, userID int64) (User, error) {
	var out User
	err := db.inTx(ctx, func(q sqlcdb.Querier) error {
		u, err := q.GetUser(ctx, sqlcdb.GetUserParams{ID: userID, OrganizationID: orgID})
		if err != nil {
			return notFound(err, "user", userID)
		}
		if err := endUserSessions(ctx, q, userID); err != nil {
			return err
		}
		// Links and recovery codes go with the row (ON DELETE CASCADE).
		if _, err := q.DeleteUser(ctx, sqlcdb.DeleteUserParams{ID: userID, OrganizationID: orgID}); err != nil {
			return fmt.Errorf("delete user: %w", err)
		}
		out = userOf(u)
		return nil
	})
	return out, err
}

func endUserSessions(ctx context.Context, q sqlcdb.Querier, userID int64) error {
	if _, err := q.DeleteUserSessions(ctx, nullID(userID)); err != nil {
		return fmt.Errorf("end the user's sessions: %w", err)
	}
	return nil
}

// checkPasswordHash refuses what is not an argon2id hash string: the store
// never keeps a password, and a caller that passes one by mistake is told.
func checkPasswordHash(hash string) error {
	if !strings.HasPrefix(hash, "$argon2id$") {
		return Errorf(EINVALID, "a password is stored as its argon2id hash")
	}
	return nil
}

// SetPassword sets user userID's password hash (an argon2id string made by
// the caller; the account page, once the caller checked the current
// password). ENOTFOUND for an unknown user.
func (db *DB) SetPassword(ctx context.Context, userID int64, hash string) error {
	if err := checkPasswordHash(hash); err != nil {
		return err
	}
	n, err := db.wq.SetUserPassword(ctx, sqlcdb.SetUserPasswordParams{
		PasswordHash: sql.NullString{String: hash, Valid: true}, UpdatedAt: db.nowMS(), ID: userID})
	if err != nil {
		return fmt.Errorf("set password: %w", err)
	}
	if n == 0 {
		return Errorf(ENOTFOUND, "user %d not found", userID)
	}
	return nil
}

package store

import (
	"context"
	"fmt"

	"github.com/outdial/outdial/store/sqlcdb"
)

// A user's second factor (API.md 17): a TOTP secret, sealed at rest like
// provider credentials (bound to its user and column), and recovery codes,
// stored as the hashes the caller makes. Enrolling keeps the new secret in
// totp_pending until a code confirms it (EnableTOTP). Every code works
// once: a TOTP code only for a time step later than the last accepted,
// a recovery code until it is used; both checks are one conditional
// statement, so two nodes given the same code accept it once.

// SetPendingTOTP keeps secret (base32) as userID's enrollment in progress,
// replacing any earlier one; the enabled factor, if any, is unchanged.
func (db *DB) SetPendingTOTP(ctx context.Context, userID int64, secret string) error {
	n, err := db.wq.SetTOTPPending(ctx, sqlcdb.SetTOTPPendingParams{
		TotpPending: db.sealer.Seal([]byte(secret), totpAD("totp_pending", userID)), UpdatedAt: db.nowMS(), ID: userID})
	if err != nil {
		return fmt.Errorf("keep totp enrollment: %w", err)
	}
	if n == 0 {
		return Errorf(ENOTFOUND, "user %d not found", userID)
	}
	return nil
}

// PendingTOTP returns userID's enrollment in progress; ENOTFOUND when
// there is none.
func (db *DB) PendingTOTP(ctx context.Context, userID int64) (Secret, error) {
	u, err := db.rq.GetUserByID(ctx, userID)
	if err != nil {
		return "", notFound(err, "user", userID)
	}
	if u.TotpPending == nil {
		return "", Errorf(ENOTFOUND, "no second factor enrollment in progress")
	}
	plain, err := db.sealer.Open(u.TotpPending, totpAD("totp_pending", userID))
	if err != nil {
		return "", fmt.Errorf("open totp enrollment of user %d: %w", userID, err)
	}
	return Secret(plain), nil
}

// EnableTOTP turns on userID's second factor with secret (base32; the
// caller has checked a code of it) and replaces the user's recovery codes
// with recoveryHashes, in one transaction; the enrollment in progress is
// cleared and no time step is used yet.
func (db *DB) EnableTOTP(ctx context.Context, userID int64, secret string, recoveryHashes [][]byte) error {
	return db.inTx(ctx, func(q sqlcdb.Querier) error {
		n, err := q.EnableTOTP(ctx, sqlcdb.EnableTOTPParams{
			TotpSecret: db.sealer.Seal([]byte(secret), totpAD("totp_secret", userID)), UpdatedAt: db.nowMS(), ID: userID})
		if err != nil {
			return fmt.Errorf("enable totp: %w", err)
		}
		if n == 0 {
			return Errorf(ENOTFOUND, "user %d not found", userID)
		}
		return replaceRecoveryCodes(ctx, q, userID, recoveryHashes)
	})
}

func replaceRecoveryCodes(ctx context.Context, q sqlcdb.Querier, userID int64, hashes [][]byte) error {
	if err := q.DeleteRecoveryCodes(ctx, userID); err != nil {
		return fmt.Errorf("delete recovery codes: %w", err)
	}
	for _, h := range hashes {
		if len(h) == 0 {
			return Errorf(EINVALID, "a recovery code's hash must not be empty")
		}
		if err := q.InsertRecoveryCode(ctx, sqlcdb.InsertRecoveryCodeParams{UserID: userID, CodeHash: h}); err != nil {
			return fmt.Errorf("insert recovery code: %w", err)
		}
	}
	return nil
}

// DisableTOTP turns off userID's second factor and deletes its secret,
// enrollment and recovery codes.
func (db *DB) DisableTOTP(ctx context.Context, userID int64) error {
	return db.inTx(ctx, func(q sqlcdb.Querier) error {
		n, err := q.DisableTOTP(ctx, sqlcdb.DisableTOTPParams{UpdatedAt: db.nowMS(), ID: userID})
		if err != nil {
			return fmt.Errorf("disable totp: %w", err)
		}
		if n == 0 {
			return Errorf(ENOTFOUND, "user %d not found", userID)
		}
		return replaceRecoveryCodes(ctx, q, userID, nil)
	})
}

// UseTOTPStep accepts a TOTP code of time step step for userID (the caller
// has matched the code against the secret): true when step is later than
// the last step accepted (which becomes step), false when it is not (a
// replay, or an earlier code) or the user has no second factor.
func (db *DB) UseTOTPStep(ctx context.Context, userID, step int64) (bool, error) {
	n, err := db.wq.UseTOTPStep(ctx, sqlcdb.UseTOTPStepParams{Step: step, ID: userID})
	if err != nil {
		return false, fmt.Errorf("use totp step: %w", err)
	}
	return n == 1, nil
}

// UseRecoveryCode uses the recovery code whose hash is hash for userID:
// true the first time, false after that or for a code the user never had.
func (db *DB) UseRecoveryCode(ctx context.Context, userID int64, hash []byte) (bool, error) {
	n, err := db.wq.UseRecoveryCode(ctx, sqlcdb.UseRecoveryCodeParams{UserID: userID, CodeHash: hash})
	if err != nil {
		return false, fmt.Errorf("use recovery code: %w", err)
	}
	return n == 1, nil
}

// RecoveryCodesLeft returns how many of userID's recovery codes are unused.
func (db *DB) RecoveryCodesLeft(ctx context.Context, userID int64) (int, error) {
	n, err := db.rq.CountRecoveryCodes(ctx, userID)
	if err != nil {
		return 0, fmt.Errorf("count recovery codes: %w", err)
	}
	return int(n), nil
}

// OrganizationSecurity is an organization's sign-in rules.
type OrganizationSecurity struct {
	// RequireTOTP: every user must have a second factor.
	RequireTOTP bool
}

// OrganizationSecurity returns orgID's sign-in rules; ENOTFOUND for an
// unknown organization.
func (db *DB) OrganizationSecurity(ctx context.Context, orgID int64) (OrganizationSecurity, error) {
	v, err := db.rq.GetOrganizationSecurity(ctx, orgID)
	if err != nil {
		return OrganizationSecurity{}, notFound(err, "organization", orgID)
	}
	return OrganizationSecurity{RequireTOTP: v == 1}, nil
}

// SetOrganizationSecurity sets whether orgID requires a second factor and
// returns the rules before and after (PUT /organizations/security).
func (db *DB) SetOrganizationSecurity(ctx context.Context, orgID int64, requireTOTP bool) (before, after OrganizationSecurity, err error) {
	err = db.inTx(ctx, func(q sqlcdb.Querier) error {
		if err := lockOrganization(ctx, q, orgID); err != nil {
			return err
		}
		v, err := q.GetOrganizationSecurity(ctx, orgID)
		if err != nil {
			return notFound(err, "organization", orgID)
		}
		if _, err := q.SetOrganizationRequireTOTP(ctx, sqlcdb.SetOrganizationRequireTOTPParams{
			RequireTotp: boolInt(requireTOTP), ID: orgID}); err != nil {
			return fmt.Errorf("set organization security: %w", err)
		}
		before, after = OrganizationSecurity{RequireTOTP: v == 1}, OrganizationSecurity{RequireTOTP: requireTOTP}
		return nil
	})
	return before, after, err
}

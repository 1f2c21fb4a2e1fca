package store

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"database/sql"
	"encoding/base64"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/outdial/outdial/store/sqlcdb"
)

// APIKeyPrefix starts every API key.
const APIKeyPrefix = "odk_"

// keyTouchInterval is how stale a key's last_used_at must be before
// Authenticate records a new one: a busy client does not write on every
// request (as sessionTouchInterval for sessions).
const keyTouchInterval = time.Minute

// APIKey describes a stored key. The key itself is never stored, only its
// SHA-256; Prefix is its first characters, for telling keys apart in lists.
type APIKey struct {
	ID               int64
	OrganizationID   int64
	OrganizationName string
	Name             string
	Role             Role
	Prefix           string
	CreatedAt        time.Time
	// LastUsedAt is when the key last authenticated a request (to within
	// a minute); nil: never.
	LastUsedAt *time.Time
	RevokedAt  *time.Time
}

// Principal is who an authenticated request acts for: an API key (UserID
// 0), or a user signed in to the console (APIKeyID 0).
type Principal struct {
	APIKeyID       int64
	OrganizationID int64
	// SessionID is the console session the request came with (0: the key
	// itself was sent). Long-lived requests check it with LiveCredentials.
	SessionID int64
	// UserID is the signed-in user (0: a key acts).
	UserID int64
	// Role is the key's or the user's role when the request was
	// authenticated.
	Role Role
	// ActorName is the user's email or the key's name, for the audit
	// trail.
	ActorName string
}

func hashKey(key string) []byte {
	sum := sha256.Sum256([]byte(key))
	return sum[:]
}

// newAPIKey returns a new key: "odk_" + 43 URL-safe base64 characters (32
// random bytes).
func newAPIKey() (string, error) {
	raw := make([]byte, 32)
	if _, err := rand.Read(raw); err != nil {
		return "", fmt.Errorf("generate api key: %w", err)
	}
	return APIKeyPrefix + base64.RawURLEncoding.EncodeToString(raw), nil
}

// orgByName returns the organization named org, creating it when missing;
// it runs inside the caller's transaction. An empty name or one holding a
// character NameRefuses is EINVALID.
func orgByName(ctx context.Context, q sqlcdb.Querier, org string, now int64) (sqlcdb.Organization, error) {
	org = strings.TrimSpace(org)
	if org == "" {
		return sqlcdb.Organization{}, Errorf(EINVALID, "organization name must not be empty")
	}
	if _, r, found := RefusedNameChar(org); found {
		return sqlcdb.Organization{}, Errorf(EINVALID, "organization name %q must not contain control or invisible formatting characters (%U)", org, r)
	}
	o, err := q.GetOrganizationByName(ctx, org)
	if errors.Is(err, sql.ErrNoRows) {
		o, err = q.CreateOrganization(ctx, sqlcdb.CreateOrganizationParams{Name: org, CreatedAt: now})
	}
	if errors.Is(err, sql.ErrNoRows) {
		// Keys of a new organization created at once (on two nodes)
		// both found none; the second's insert failed on the name's
		// unique constraint (TestRaceNewOrganization). Now it inserts
		// nothing once the first committed, and reads the first's.
		o, err = q.GetOrganizationByName(ctx, org)
	}
	if err != nil {
		return sqlcdb.Organization{}, fmt.Errorf("organization: %w", err)
	}
	return o, nil
}

// CreateAPIKey creates a key with role for the organization named org
// (creating the organization on first use) and returns the stored record
// and the key, which is shown once and cannot be recovered. Format: "odk_"
// + 43 URL-safe base64 characters (32 random bytes). An organization or key
// name holding a character NameRefuses (a control character such as NUL or
// a line break, a bidirectional override, an invisible formatting
// character), or a role outside the three, is EINVALID.
func (db *DB) CreateAPIKey(ctx context.Context, org, name string, role Role) (*APIKey, Secret, error) {
	return db.createAPIKey(ctx, func(q sqlcdb.Querier, now int64) (sqlcdb.Organization, error) {
		return orgByName(ctx, q, org, now)
	}, name, role)
}

// CreateOrgAPIKey is CreateAPIKey for the organization orgID, which must
// exist (POST /api-keys; ENOTFOUND otherwise).
func (db *DB) CreateOrgAPIKey(ctx context.Context, orgID int64, name string, role Role) (*APIKey, Secret, error) {
	return db.createAPIKey(ctx, func(q sqlcdb.Querier, _ int64) (sqlcdb.Organization, error) {
		o, err := q.GetOrganizationByID(ctx, orgID)
		if err != nil {
			return o, notFound(err, "organization", orgID)
		}
		return o, nil
	}, name, role)
}

func (db *DB) createAPIKey(ctx context.Context, org func(q sqlcdb.Querier, now int64) (sqlcdb.Organization, error), name string, role Role) (*APIKey, Secret, error) {
	if _, r, found := RefusedNameChar(name); found {
		return nil, "", Errorf(EINVALID, "api key name %q must not contain control or invisible formatting characters (%U)", name, r)
	}
	if err := checkRole(role); err != nil {
		return nil, "", err
	}
	key, err := newAPIKey()
	if err != nil {
		return nil, "", err
	}
	var out *APIKey
	err = db.inTx(ctx, func(q sqlcdb.Querier) error {
		now := db.nowMS()
		o, err := org(q, now)
		if err != nil {
			return err
		}
		k, err := q.CreateAPIKey(ctx, sqlcdb.CreateAPIKeyParams{
			OrganizationID: o.ID, Name: name, Prefix: key[:len(APIKeyPrefix)+6],
			KeyHash: hashKey(key), CreatedAt: now, Role: string(role),
		})
		if err != nil {
			return fmt.Errorf("insert api key: %w", err)
		}
		out = apiKeyOf(k, o.Name)
		return nil
	})
	if err != nil {
		return nil, "", err
	}
	return out, Secret(key), nil
}

func apiKeyOf(k sqlcdb.ApiKey, org string) *APIKey {
	return &APIKey{ID: k.ID, OrganizationID: k.OrganizationID, OrganizationName: org, Name: k.Name,
		Role: Role(k.Role), Prefix: k.Prefix, CreatedAt: fromMS(k.CreatedAt),
		LastUsedAt: optTime(k.LastUsedAt), RevokedAt: optTime(k.RevokedAt)}
}

// ListAPIKeys returns every key of every organization, oldest first.
func (db *DB) ListAPIKeys(ctx context.Context) ([]APIKey, error) {
	rows, err := db.rq.ListAPIKeys(ctx)
	if err != nil {
		return nil, fmt.Errorf("list api keys: %w", err)
	}
	out := make([]APIKey, 0, len(rows))
	for _, r := range rows {
		out = append(out, *apiKeyOf(sqlcdb.ApiKey{ID: r.ID, OrganizationID: r.OrganizationID, Name: r.Name,
			Prefix: r.Prefix, KeyHash: r.KeyHash, CreatedAt: r.CreatedAt, RevokedAt: r.RevokedAt,
			Role: r.Role, LastUsedAt: r.LastUsedAt}, r.OrganizationName))
	}
	return out, nil
}

// ListOrgAPIKeys returns the organization's keys that are not revoked,
// oldest first (GET /api-keys). OrganizationName is left empty.
func (db *DB) ListOrgAPIKeys(ctx context.Context, orgID int64) ([]APIKey, error) {
	rows, err := db.rq.ListOrgAPIKeys(ctx, orgID)
	if err != nil {
		return nil, fmt.Errorf("list api keys: %w", err)
	}
	out := make([]APIKey, 0, len(rows))
	for _, r := range rows {
		out = append(out, *apiKeyOf(r, ""))
	}
	return out, nil
}

// RevokeAPIKey revokes key id (the CLI) and ends its console sessions.
// Revoking an unknown or already revoked key is ENOTFOUND.
func (db *DB) RevokeAPIKey(ctx context.Context, id int64) error {
	err := db.inTx(ctx, func(q sqlcdb.Querier) error {
		n, err := q.RevokeAPIKey(ctx, sqlcdb.RevokeAPIKeyParams{RevokedAt: sql.NullInt64{Int64: db.nowMS(), Valid: true}, ID: id})
		if err != nil {
			return fmt.Errorf("revoke api key: %w", err)
		}
		if n == 0 {
			return Errorf(ENOTFOUND, "api key %d not found or already revoked", id)
		}
		return endKeySessions(ctx, q, id)
	})
	return err
}

// RevokeOrgAPIKey revokes the organization's key keyID (DELETE
// /api-keys/{key_id}) and ends its console sessions in the same
// transaction; streams end at their next LiveCredentials check. A key that
// is unknown, of another organization or already revoked is ENOTFOUND.
func (db *DB) RevokeOrgAPIKey(ctx context.Context, orgID, keyID int64) error {
	return db.inTx(ctx, func(q sqlcdb.Querier) error {
		n, err := q.RevokeOrgAPIKey(ctx, sqlcdb.RevokeOrgAPIKeyParams{
			RevokedAt: sql.NullInt64{Int64: db.nowMS(), Valid: true}, ID: keyID, OrganizationID: orgID})
		if err != nil {
			return fmt.Errorf("revoke api key: %w", err)
		}
		if n == 0 {
			return Errorf(ENOTFOUND, "api key %d not found", keyID)
		}
		return endKeySessions(ctx, q, keyID)
	})
}

func endKeySessions(ctx context.Context, q sqlcdb.Querier, keyID int64) error {
	if _, err := q.DeleteAPIKeySessions(ctx, sql.NullInt64{Int64: keyID, Valid: true}); err != nil {
		return fmt.Errorf("end the key's sessions: %w", err)
	}
	return nil
}

// Authenticate returns the principal of an active key, or ENOTFOUND. A key
// last used more than a minute ago is recorded as used now.
func (db *DB) Authenticate(ctx context.Context, key string) (Principal, error) {
	if !strings.HasPrefix(key, APIKeyPrefix) {
		return Principal{}, Errorf(ENOTFOUND, "invalid api key")
	}
	r, err := db.rq.AuthenticateAPIKey(ctx, hashKey(key))
	if errors.Is(err, sql.ErrNoRows) {
		return Principal{}, Errorf(ENOTFOUND, "invalid api key")
	}
	if err != nil {
		return Principal{}, fmt.Errorf("authenticate: %w", err)
	}
	now := db.nowMS()
	stale := now - keyTouchInterval.Milliseconds()
	if !r.LastUsedAt.Valid || r.LastUsedAt.Int64 <= stale {
		if err := db.wq.TouchAPIKey(ctx, sqlcdb.TouchAPIKeyParams{Now: sql.NullInt64{Int64: now, Valid: true},
			ID: r.ID, StaleBefore: sql.NullInt64{Int64: stale, Valid: true}}); err != nil {
			return Principal{}, fmt.Errorf("touch api key: %w", err)
		}
	}
	return Principal{APIKeyID: r.ID, OrganizationID: r.OrganizationID, Role: Role(r.Role), ActorName: r.Name}, nil
}

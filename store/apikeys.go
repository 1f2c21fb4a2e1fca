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

// APIKey describes a stored key. The key itself is never stored, only its
// SHA-256; Prefix is its first characters, for telling keys apart in lists.
type APIKey struct {
	ID               int64
	OrganizationID   int64
	OrganizationName string
	Name             string
	Prefix           string
	CreatedAt        time.Time
	RevokedAt        *time.Time
}

// Principal is who an authenticated request acts for.
type Principal struct {
	APIKeyID       int64
	OrganizationID int64
	// SessionID is the console session the request came with (0: the key
	// itself was sent). Long-lived requests check it with LiveCredentials.
	SessionID int64
}

func hashKey(key string) []byte {
	sum := sha256.Sum256([]byte(key))
	return sum[:]
}

// CreateAPIKey creates a key for the organization named org (creating the
// organization on first use) and returns the stored record and the key, which
// is shown once and cannot be recovered. Format: "odk_" + 43 URL-safe base64
// characters (32 random bytes). An organization or key name holding a
// character NameRefuses (a control character such as NUL or a line break,
// a bidirectional override, an invisible formatting character) is
// EINVALID.
func (db *DB) CreateAPIKey(ctx context.Context, org, name string) (*APIKey, Secret, error) {
	org = strings.TrimSpace(org)
	if org == "" {
		return nil, "", Errorf(EINVALID, "organization name must not be empty")
	}
	if _, r, found := RefusedNameChar(org); found {
		return nil, "", Errorf(EINVALID, "organization name %q must not contain control or invisible formatting characters (%U)", org, r)
	}
	if _, r, found := RefusedNameChar(name); found {
		return nil, "", Errorf(EINVALID, "api key name %q must not contain control or invisible formatting characters (%U)", name, r)
	}
	raw := make([]byte, 32)
	if _, err := rand.Read(raw); err != nil {
		return nil, "", fmt.Errorf("generate api key: %w", err)
	}
	key := APIKeyPrefix + base64.RawURLEncoding.EncodeToString(raw)
	var out *APIKey
	err := db.inTx(ctx, func(q sqlcdb.Querier) error {
		now := db.nowMS()
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
			return fmt.Errorf("organization: %w", err)
		}
		k, err := q.CreateAPIKey(ctx, sqlcdb.CreateAPIKeyParams{
			OrganizationID: o.ID, Name: name, Prefix: key[:len(APIKeyPrefix)+6],
			KeyHash: hashKey(key), CreatedAt: now,
		})
		if err != nil {
			return fmt.Errorf("insert api key: %w", err)
		}
		out = &APIKey{ID: k.ID, OrganizationID: o.ID, OrganizationName: o.Name, Name: k.Name,
			Prefix: k.Prefix, CreatedAt: fromMS(k.CreatedAt)}
		return nil
	})
	if err != nil {
		return nil, "", err
	}
	return out, Secret(key), nil
}

// ListAPIKeys returns every key of every organization, oldest first.
func (db *DB) ListAPIKeys(ctx context.Context) ([]APIKey, error) {
	rows, err := db.rq.ListAPIKeys(ctx)
	if err != nil {
		return nil, fmt.Errorf("list api keys: %w", err)
	}
	out := make([]APIKey, 0, len(rows))
	for _, r := range rows {
		k := APIKey{ID: r.ID, OrganizationID: r.OrganizationID, OrganizationName: r.OrganizationName,
			Name: r.Name, Prefix: r.Prefix, CreatedAt: fromMS(r.CreatedAt)}
		if r.RevokedAt.Valid {
			t := fromMS(r.RevokedAt.Int64)
			k.RevokedAt = &t
		}
		out = append(out, k)
	}
	return out, nil
}

// RevokeAPIKey revokes key id. Revoking an unknown or already revoked key is
// ENOTFOUND.
func (db *DB) RevokeAPIKey(ctx context.Context, id int64) error {
	n, err := db.wq.RevokeAPIKey(ctx, sqlcdb.RevokeAPIKeyParams{RevokedAt: sql.NullInt64{Int64: db.nowMS(), Valid: true}, ID: id})
	if err != nil {
		return fmt.Errorf("revoke api key: %w", err)
	}
	if n == 0 {
		return Errorf(ENOTFOUND, "api key %d not found or already revoked", id)
	}
	return nil
}

// Authenticate returns the principal of an active key, or ENOTFOUND.
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
	return Principal{APIKeyID: r.ID, OrganizationID: r.OrganizationID}, nil
}

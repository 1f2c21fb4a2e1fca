package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strconv"
	"time"

	"github.com/outdial/outdial/store/sqlcdb"
)

// Credentials are a telephony configuration's provider fields (the API's
// `config` without `provider` and `from_numbers`). Values are JSON scalars
// (string, bool, nil). The whole object is sealed at rest; LogValue hides it.
type Credentials map[string]any

// LogValue prints only the field names, never the values.
func (c Credentials) LogValue() slog.Value {
	names := make([]string, 0, len(c))
	for k := range c {
		names = append(names, k)
	}
	return slog.AnyValue(names)
}

// String returns the value of field name when it is a string, else "".
func (c Credentials) String(name string) string {
	s, _ := c[name].(string)
	return s
}

// Bool returns the value of field name when it is a bool, else false.
func (c Credentials) Bool(name string) bool {
	b, _ := c[name].(bool)
	return b
}

// TelephonyConfig is a stored telephony configuration with its credentials
// in clear (callers mask before answering).
type TelephonyConfig struct {
	ID                int64
	OrganizationID    int64
	Name              string
	Provider          string
	IsDefaultOutbound bool
	Credentials       Credentials
	PhoneNumberCount  int64
	CreatedAt         time.Time
	UpdatedAt         time.Time
}

func credentialsAD(id int64) string { return "telephony_configs/" + strconv.FormatInt(id, 10) }

func (db *DB) sealCredentials(id int64, c Credentials) ([]byte, error) {
	plain, err := json.Marshal(c)
	if err != nil {
		return nil, fmt.Errorf("encode credentials: %w", err)
	}
	return db.sealer.Seal(plain, credentialsAD(id)), nil
}

func (db *DB) openCredentials(id int64, sealed []byte) (Credentials, error) {
	plain, err := db.sealer.Open(sealed, credentialsAD(id))
	if err != nil {
		return nil, fmt.Errorf("telephony configuration %d credentials: %w", id, err)
	}
	var c Credentials
	if err := json.Unmarshal(plain, &c); err != nil {
		return nil, fmt.Errorf("decode credentials: %w", err)
	}
	return c, nil
}

func boolInt(b bool) int64 {
	if b {
		return 1
	}
	return 0
}

// CreateTelephonyConfig stores a new configuration of organization orgID. A
// name already used in the organization is ECONFLICT. When c.IsDefaultOutbound
// is set, the previous default is unset in the same transaction.
func (db *DB) CreateTelephonyConfig(ctx context.Context, orgID int64, c TelephonyConfig) (*TelephonyConfig, error) {
	var id int64
	err := db.inTx(ctx, func(q sqlcdb.Querier) error {
		// The organization's lock orders its configurations' writes (see
		// UpdateTelephonyConfig).
		if err := lockOrganization(ctx, q, orgID); err != nil {
			return err
		}
		taken, err := q.TelephonyConfigNameTaken(ctx, sqlcdb.TelephonyConfigNameTakenParams{OrganizationID: orgID, Name: c.Name, ID: 0})
		if err != nil {
			return fmt.Errorf("check name: %w", err)
		}
		if taken > 0 {
			return nameConflict(c.Name)
		}
		now := db.nowMS()
		if c.IsDefaultOutbound {
			if err := q.ClearDefaultOutbound(ctx, sqlcdb.ClearDefaultOutboundParams{UpdatedAt: now, OrganizationID: orgID, ID: 0}); err != nil {
				return fmt.Errorf("clear default: %w", err)
			}
		}
		id, err = q.InsertTelephonyConfig(ctx, sqlcdb.InsertTelephonyConfigParams{
			OrganizationID: orgID, Name: c.Name, Provider: c.Provider,
			IsDefaultOutbound: boolInt(c.IsDefaultOutbound), Credentials: []byte{}, CreatedAt: now, UpdatedAt: now,
		})
		if err != nil {
			if db.eng.isUniqueViolation(err) {
				return nameConflict(c.Name)
			}
			return fmt.Errorf("insert telephony configuration: %w", err)
		}
		sealed, err := db.sealCredentials(id, c.Credentials)
		if err != nil {
			return err
		}
		if err := q.SetTelephonyConfigCredentials(ctx, sqlcdb.SetTelephonyConfigCredentialsParams{Credentials: sealed, ID: id}); err != nil {
			return fmt.Errorf("store credentials: %w", err)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return db.GetTelephonyConfig(ctx, orgID, id)
}

func nameConflict(name string) error {
	return Errorf(ECONFLICT, "a telephony configuration named %q already exists", name)
}

// GetTelephonyConfig returns configuration id of organization orgID with its
// credentials opened; another organization's id is ENOTFOUND.
func (db *DB) GetTelephonyConfig(ctx context.Context, orgID, id int64) (*TelephonyConfig, error) {
	return db.getTelephonyConfig(ctx, db.rq, orgID, id)
}

func (db *DB) getTelephonyConfig(ctx context.Context, q sqlcdb.Querier, orgID, id int64) (*TelephonyConfig, error) {
	r, err := q.GetTelephonyConfig(ctx, sqlcdb.GetTelephonyConfigParams{ID: id, OrganizationID: orgID})
	if err != nil {
		return nil, notFound(err, "telephony configuration", id)
	}
	creds, err := db.openCredentials(r.ID, r.Credentials)
	if err != nil {
		return nil, err
	}
	return &TelephonyConfig{
		ID: r.ID, OrganizationID: r.OrganizationID, Name: r.Name, Provider: r.Provider,
		IsDefaultOutbound: r.IsDefaultOutbound == 1, Credentials: creds, PhoneNumberCount: r.PhoneNumberCount,
		CreatedAt: fromMS(r.CreatedAt), UpdatedAt: fromMS(r.UpdatedAt),
	}, nil
}

// ListTelephonyConfigs returns the organization's configurations ordered by
// id, without credentials.
func (db *DB) ListTelephonyConfigs(ctx context.Context, orgID int64) ([]TelephonyConfig, error) {
	rows, err := db.rq.ListTelephonyConfigs(ctx, orgID)
	if err != nil {
		return nil, fmt.Errorf("list telephony configurations: %w", err)
	}
	out := make([]TelephonyConfig, len(rows))
	for i, r := range rows {
		out[i] = TelephonyConfig{
			ID: r.ID, OrganizationID: orgID, Name: r.Name, Provider: r.Provider,
			IsDefaultOutbound: r.IsDefaultOutbound == 1, PhoneNumberCount: r.PhoneNumberCount,
			CreatedAt: fromMS(r.CreatedAt), UpdatedAt: fromMS(r.UpdatedAt),
		}
	}
	return out, nil
}

// UpdateTelephonyConfig loads configuration id, lets apply change it (name,
// default flag, credentials; not the provider) and stores the result, all in
// one transaction. An error from apply aborts the update and is returned as
// is. A new name already used by another configuration is ECONFLICT; turning
// the default flag on unsets the previous default.
func (db *DB) UpdateTelephonyConfig(ctx context.Context, orgID, id int64, apply func(*TelephonyConfig) error) (*TelephonyConfig, error) {
	err := db.inTx(ctx, func(q sqlcdb.Querier) error {
		// Under the organization's lock: two new default configurations at
		// once (on two nodes) each cleared the default the other could not
		// see yet, and the second failed on the one-default index, reported
		// as a taken name (TestRaceDefaultOutbound); two changes of one
		// configuration each wrote back what the other had not seen.
		if err := lockOrganization(ctx, q, orgID); err != nil {
			return err
		}
		c, err := db.getTelephonyConfig(ctx, q, orgID, id)
		if err != nil {
			return err
		}
		provider := c.Provider
		if err := apply(c); err != nil {
			return err
		}
		if c.Provider != provider {
			return Errorf(EINVALID, "the provider of a telephony configuration cannot change")
		}
		taken, err := q.TelephonyConfigNameTaken(ctx, sqlcdb.TelephonyConfigNameTakenParams{OrganizationID: orgID, Name: c.Name, ID: id})
		if err != nil {
			return fmt.Errorf("check name: %w", err)
		}
		if taken > 0 {
			return nameConflict(c.Name)
		}
		now := db.nowMS()
		if c.IsDefaultOutbound {
			if err := q.ClearDefaultOutbound(ctx, sqlcdb.ClearDefaultOutboundParams{UpdatedAt: now, OrganizationID: orgID, ID: id}); err != nil {
				return fmt.Errorf("clear default: %w", err)
			}
		}
		sealed, err := db.sealCredentials(id, c.Credentials)
		if err != nil {
			return err
		}
		err = q.UpdateTelephonyConfig(ctx, sqlcdb.UpdateTelephonyConfigParams{
			Name: c.Name, IsDefaultOutbound: boolInt(c.IsDefaultOutbound), Credentials: sealed,
			UpdatedAt: now, ID: id, OrganizationID: orgID,
		})
		if db.eng.isUniqueViolation(err) {
			return nameConflict(c.Name)
		}
		if err != nil {
			return fmt.Errorf("update telephony configuration: %w", err)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return db.GetTelephonyConfig(ctx, orgID, id)
}

// DeleteTelephonyConfig deletes configuration id and its phone numbers; a
// configuration a draft, running or paused campaign uses is ECONFLICT.
func (db *DB) DeleteTelephonyConfig(ctx context.Context, orgID, id int64) error {
	return db.inTx(ctx, func(q sqlcdb.Querier) error {
		// The organization's lock: a number added to the configuration at
		// once read it before the delete and failed on the foreign key.
		if err := lockOrganization(ctx, q, orgID); err != nil {
			return err
		}
		if _, err := q.GetTelephonyConfig(ctx, sqlcdb.GetTelephonyConfigParams{ID: id, OrganizationID: orgID}); err != nil {
			return notFound(err, "telephony configuration", id)
		}
		inUse, err := q.CountUnfinishedCampaignsForConfig(ctx, id)
		if err != nil {
			return fmt.Errorf("count campaigns of configuration: %w", err)
		}
		if inUse > 0 {
			return Errorf(ECONFLICT, "telephony configuration %d is used by %d draft, running or paused %s", id, inUse, pluralize(inUse, "campaign"))
		}
		// A cancelled campaign's calls still in flight finish and are
		// recorded (API.md 4.4): their webhooks and deadline queries need
		// the configuration until then.
		active, err := q.CountActiveAttemptsForConfig(ctx, id)
		if err != nil {
			return fmt.Errorf("count calls of configuration: %w", err)
		}
		if active > 0 {
			return Errorf(ECONFLICT, "telephony configuration %d still has %d %s in flight; delete it once their outcomes are recorded", id, active, pluralize(active, "call"))
		}
		n, err := q.DeleteTelephonyConfig(ctx, sqlcdb.DeleteTelephonyConfigParams{ID: id, OrganizationID: orgID})
		if err != nil {
			return fmt.Errorf("delete telephony configuration: %w", err)
		}
		if n == 0 {
			return Errorf(ENOTFOUND, "telephony configuration %d not found", id)
		}
		return nil
	})
}

// DefaultOutboundConfigID returns the id of the organization's default
// outbound configuration, or ENOTFOUND when it has none.
func (db *DB) DefaultOutboundConfigID(ctx context.Context, orgID int64) (int64, error) {
	id, err := db.rq.GetDefaultOutboundConfigID(ctx, orgID)
	if errors.Is(err, sql.ErrNoRows) {
		return 0, Errorf(ENOTFOUND, "the organization has no default outbound telephony configuration")
	}
	if err != nil {
		return 0, fmt.Errorf("default outbound configuration: %w", err)
	}
	return id, nil
}

// TelephonyConfigVersion returns the last update time of configuration id,
// a cheap check of whether a cached copy is current; ENOTFOUND when gone.
func (db *DB) TelephonyConfigVersion(ctx context.Context, orgID, id int64) (time.Time, error) {
	ms, err := db.rq.TelephonyConfigVersion(ctx, sqlcdb.TelephonyConfigVersionParams{ID: id, OrganizationID: orgID})
	if err != nil {
		return time.Time{}, notFound(err, "telephony configuration", id)
	}
	return fromMS(ms), nil
}

// CheckTelephonyConfigName returns ECONFLICT when name is used in
// organization orgID by a configuration other than exceptID (0: any). The
// API checks it before creating a provider application, so a duplicate
// name creates nothing at the provider; the write re-checks it.
func (db *DB) CheckTelephonyConfigName(ctx context.Context, orgID int64, name string, exceptID int64) error {
	taken, err := db.rq.TelephonyConfigNameTaken(ctx, sqlcdb.TelephonyConfigNameTakenParams{OrganizationID: orgID, Name: name, ID: exceptID})
	if err != nil {
		return fmt.Errorf("check name: %w", err)
	}
	if taken > 0 {
		return nameConflict(name)
	}
	return nil
}

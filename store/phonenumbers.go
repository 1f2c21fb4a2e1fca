package store

import (
	"context"
	"database/sql"
	"fmt"
	"time"

	"github.com/outdial/outdial/store/sqlcdb"
)

// Address types of a phone number.
const (
	AddressPSTN         = "pstn"
	AddressSIPURI       = "sip_uri"
	AddressSIPExtension = "sip_extension"
)

// PhoneNumber is a caller id of a telephony configuration.
type PhoneNumber struct {
	ID                       int64
	TelephonyConfigurationID int64
	Address                  string
	AddressNormalized        string
	AddressType              string
	CountryCode              *string
	Label                    *string
	IsActive                 bool
	IsDefaultCallerID        bool
	CreatedAt                time.Time
	UpdatedAt                time.Time
}

func phoneFromRow(r sqlcdb.PhoneNumber) PhoneNumber {
	return PhoneNumber{
		ID: r.ID, TelephonyConfigurationID: r.TelephonyConfigurationID, Address: r.Address,
		AddressNormalized: r.AddressNormalized, AddressType: r.AddressType,
		CountryCode: nullString(r.CountryCode), Label: nullString(r.Label),
		IsActive: r.IsActive == 1, IsDefaultCallerID: r.IsDefaultCallerID == 1,
		CreatedAt: fromMS(r.CreatedAt), UpdatedAt: fromMS(r.UpdatedAt),
	}
}

func nullString(s sql.NullString) *string {
	if !s.Valid {
		return nil
	}
	return &s.String
}

func toNullString(s *string) sql.NullString {
	if s == nil {
		return sql.NullString{}
	}
	return sql.NullString{String: *s, Valid: true}
}

func addressConflict(addr string) error {
	return Errorf(ECONFLICT, "phone number %s already exists in this organization", addr)
}

// AddPhoneNumber adds p to configuration configID of organization orgID. The
// same normalised address twice in one organization is ECONFLICT; a new
// default caller id replaces the configuration's previous one.
func (db *DB) AddPhoneNumber(ctx context.Context, orgID, configID int64, p PhoneNumber) (*PhoneNumber, error) {
	var out PhoneNumber
	err := db.inTx(ctx, func(q sqlcdb.Querier) error {
		// The organization's lock orders the numbers' writes (see
		// UpdatePhoneNumber).
		if err := lockOrganization(ctx, q, orgID); err != nil {
			return err
		}
		if _, err := q.GetTelephonyConfig(ctx, sqlcdb.GetTelephonyConfigParams{ID: configID, OrganizationID: orgID}); err != nil {
			return notFound(err, "telephony configuration", configID)
		}
		taken, err := q.PhoneAddressTaken(ctx, sqlcdb.PhoneAddressTakenParams{OrganizationID: orgID, AddressNormalized: p.AddressNormalized, ID: 0})
		if err != nil {
			return fmt.Errorf("check phone number: %w", err)
		}
		if taken > 0 {
			return addressConflict(p.AddressNormalized)
		}
		now := db.nowMS()
		if p.IsDefaultCallerID {
			if err := q.ClearDefaultCallerID(ctx, sqlcdb.ClearDefaultCallerIDParams{UpdatedAt: now, TelephonyConfigurationID: configID, ID: 0}); err != nil {
				return fmt.Errorf("clear default caller id: %w", err)
			}
		}
		r, err := q.InsertPhoneNumber(ctx, sqlcdb.InsertPhoneNumberParams{
			OrganizationID: orgID, TelephonyConfigurationID: configID, Address: p.Address,
			AddressNormalized: p.AddressNormalized, AddressType: p.AddressType,
			CountryCode: toNullString(p.CountryCode), Label: toNullString(p.Label),
			IsDefaultCallerID: boolInt(p.IsDefaultCallerID), CreatedAt: now, UpdatedAt: now,
		})
		if db.eng.isUniqueViolation(err) {
			return addressConflict(p.AddressNormalized)
		}
		if err != nil {
			return fmt.Errorf("insert phone number: %w", err)
		}
		out = phoneFromRow(r)
		return nil
	})
	if err != nil {
		return nil, err
	}
	return &out, nil
}

// ListPhoneNumbers returns the numbers of configuration configID ordered by
// id; a configuration of another organization is ENOTFOUND.
func (db *DB) ListPhoneNumbers(ctx context.Context, orgID, configID int64) ([]PhoneNumber, error) {
	if _, err := db.rq.GetTelephonyConfig(ctx, sqlcdb.GetTelephonyConfigParams{ID: configID, OrganizationID: orgID}); err != nil {
		return nil, notFound(err, "telephony configuration", configID)
	}
	rows, err := db.rq.ListPhoneNumbers(ctx, sqlcdb.ListPhoneNumbersParams{TelephonyConfigurationID: configID, OrganizationID: orgID})
	if err != nil {
		return nil, fmt.Errorf("list phone numbers: %w", err)
	}
	out := make([]PhoneNumber, len(rows))
	for i, r := range rows {
		out[i] = phoneFromRow(r)
	}
	return out, nil
}

// UpdatePhoneNumber loads number id of configuration configID, lets apply
// change its label, active flag and default flag, and stores it in one
// transaction. Making it the default caller id unsets the previous default;
// deactivating a number also takes its default flag away.
func (db *DB) UpdatePhoneNumber(ctx context.Context, orgID, configID, id int64, apply func(*PhoneNumber)) (*PhoneNumber, error) {
	var out PhoneNumber
	err := db.inTx(ctx, func(q sqlcdb.Querier) error {
		// Under the organization's lock: two new default caller ids at once
		// (on two nodes) each cleared the default the other could not see
		// yet, and the second failed on the one-default index, reported as
		// a taken address; two changes of one number each wrote what the
		// other had not seen (TestRaceDefaultCallerID).
		if err := lockOrganization(ctx, q, orgID); err != nil {
			return err
		}
		r, err := q.GetPhoneNumber(ctx, sqlcdb.GetPhoneNumberParams{ID: id, TelephonyConfigurationID: configID, OrganizationID: orgID})
		if err != nil {
			return notFound(err, "phone number", id)
		}
		p := phoneFromRow(r)
		apply(&p)
		if !p.IsActive {
			// An inactive number is never used, so it cannot stay the default.
			p.IsDefaultCallerID = false
		}
		now := db.nowMS()
		if p.IsDefaultCallerID {
			if err := q.ClearDefaultCallerID(ctx, sqlcdb.ClearDefaultCallerIDParams{UpdatedAt: now, TelephonyConfigurationID: configID, ID: id}); err != nil {
				return fmt.Errorf("clear default caller id: %w", err)
			}
		}
		r, err = q.UpdatePhoneNumber(ctx, sqlcdb.UpdatePhoneNumberParams{
			Label: toNullString(p.Label), IsActive: boolInt(p.IsActive), IsDefaultCallerID: boolInt(p.IsDefaultCallerID),
			UpdatedAt: now, ID: id, OrganizationID: orgID,
		})
		if err != nil {
			return fmt.Errorf("update phone number: %w", err)
		}
		out = phoneFromRow(r)
		return nil
	})
	if err != nil {
		return nil, err
	}
	return &out, nil
}

// DeletePhoneNumber deletes number id of configuration configID.
func (db *DB) DeletePhoneNumber(ctx context.Context, orgID, configID, id int64) error {
	n, err := db.wq.DeletePhoneNumber(ctx, sqlcdb.DeletePhoneNumberParams{ID: id, TelephonyConfigurationID: configID, OrganizationID: orgID})
	if err != nil {
		return fmt.Errorf("delete phone number: %w", err)
	}
	if n == 0 {
		return Errorf(ENOTFOUND, "phone number %d not found", id)
	}
	return nil
}

package store

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/outdial/outdial/store/sqlcdb"
)

// Contact is one contact of a campaign with its result so far.
type Contact struct {
	ID              int64
	CampaignID      int64
	Row             int64
	PhoneNumber     string
	Timezone        string
	Context         []byte // JSON object of the CSV's other columns
	IsFinal         bool
	Outcome         *string
	Attempts        int64
	LastCallAt      *time.Time
	DurationSeconds *int64
	AnsweredBy      *string
	// LastCompliance is the guard rails' evidence (JSON, API.md 12.5) of
	// the contact's newest attempt that has any, nil when none has; only
	// ListContacts fills it.
	LastCompliance json.RawMessage
	// LastAbandoned and LastAnswerToFirstAudioMs are the abandonment verdict
	// of the contact's newest attempt (API.md 19), nil when it has none;
	// only ListContacts fills them.
	LastAbandoned            *bool
	LastAnswerToFirstAudioMs *int64
}

func contactFromRow(r sqlcdb.Contact) *Contact {
	return &Contact{ID: r.ID, CampaignID: r.CampaignID, Row: r.RowNumber, PhoneNumber: r.PhoneNumber,
		Timezone: r.Timezone, Context: []byte(r.Context), IsFinal: r.IsFinal == 1, Outcome: nullString(r.Outcome),
		Attempts: r.Attempts, LastCallAt: optTime(r.LastCallAt), DurationSeconds: optInt(r.DurationSeconds),
		AnsweredBy: nullString(r.AnsweredBy)}
}

// GetContact returns contact id.
func (db *DB) GetContact(ctx context.Context, id int64) (*Contact, error) {
	r, err := db.rq.GetContact(ctx, id)
	if err != nil {
		return nil, notFound(err, "contact", id)
	}
	return contactFromRow(r), nil
}

// ListContacts returns up to limit contacts of the campaign after row
// afterRow, in row order, each with the evidence of its newest attempt
// that has any (LastCompliance).
func (db *DB) ListContacts(ctx context.Context, campaignID, afterRow int64, limit int) ([]*Contact, error) {
	rows, err := db.rq.ListContacts(ctx, sqlcdb.ListContactsParams{CampaignID: campaignID, RowNumber: afterRow, Limit: int64(limit)})
	if err != nil {
		return nil, fmt.Errorf("list contacts: %w", err)
	}
	out := make([]*Contact, len(rows))
	for i, r := range rows {
		out[i] = contactFromRow(sqlcdb.Contact{ID: r.ID, CampaignID: r.CampaignID, RowNumber: r.RowNumber,
			PhoneNumber: r.PhoneNumber, Timezone: r.Timezone, Context: r.Context, IsFinal: r.IsFinal, Outcome: r.Outcome,
			Attempts: r.Attempts, LastCallAt: r.LastCallAt, DurationSeconds: r.DurationSeconds, AnsweredBy: r.AnsweredBy})
		out[i].LastCompliance = rawJSON(r.LastCompliance)
		out[i].LastAbandoned, out[i].LastAnswerToFirstAudioMs = optBool(r.LastAbandoned), optInt(r.LastAnswerToFirstAudioMs)
	}
	return out, nil
}

// ContactContexts returns the CSV columns (the JSON object of Contact.Context)
// of the campaign's contacts among ids, by contact id; an id of another
// campaign, or of no contact, is left out.
func (db *DB) ContactContexts(ctx context.Context, campaignID int64, ids []int64) (map[int64][]byte, error) {
	out := make(map[int64][]byte, len(ids))
	if len(ids) == 0 {
		return out, nil
	}
	rows, err := db.rq.ContactContextsByID(ctx, sqlcdb.ContactContextsByIDParams{CampaignID: campaignID, Ids: ids})
	if err != nil {
		return nil, fmt.Errorf("contact columns: %w", err)
	}
	for _, r := range rows {
		out[r.ID] = []byte(r.Context)
	}
	return out, nil
}

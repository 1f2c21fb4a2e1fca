package store

import (
	"context"
	"fmt"
	"time"

	"github.com/outdial/outdial/store/sqlcdb"
)

// Outcomes counts a campaign's ended calls by outcome (attempts, not
// contacts: a contact called busy, then answered, counts once in each).
type Outcomes struct {
	Answered   int64 `json:"answered"`
	Voicemail  int64 `json:"voicemail"`
	Busy       int64 `json:"busy"`
	NoAnswer   int64 `json:"no_answer"`
	Failed     int64 `json:"failed"`
	Canceled   int64 `json:"canceled"`
	Unknown    int64 `json:"unknown"`
	Suppressed int64 `json:"suppressed"`
}

// Counters are the stored part of a campaign's live snapshot (API.md 10):
// one row read, without the campaign's definition or settings.
type Counters struct {
	ID             int64
	OrganizationID int64
	State          string
	TotalRows      int64
	ProcessedRows  int64
	FailedRows     int64
	ExecutedCount  int64
	MaxConcurrency int
	NextDialAt     *time.Time
	Outcomes       Outcomes
}

// CampaignCounters returns campaign id's counters (any organization: the
// caller checked the organization when the stream was opened), or
// ENOTFOUND when it does not exist or is being deleted.
func (db *DB) CampaignCounters(ctx context.Context, id int64) (*Counters, error) {
	r, err := db.rq.CampaignSnapshot(ctx, id)
	if err != nil {
		return nil, notFound(err, "campaign", id)
	}
	return &Counters{ID: r.ID, OrganizationID: r.OrganizationID, State: r.State, TotalRows: r.TotalRows,
		ProcessedRows: r.ProcessedRows, FailedRows: r.FailedRows, ExecutedCount: r.ExecutedCount,
		MaxConcurrency: int(r.MaxConcurrency), NextDialAt: optTime(r.NextDialAt),
		Outcomes: Outcomes{Answered: r.CallsAnswered, Voicemail: r.CallsVoicemail, Busy: r.CallsBusy,
			NoAnswer: r.CallsNoAnswer, Failed: r.CallsFailed, Canceled: r.CallsCanceled, Unknown: r.CallsUnknown,
			Suppressed: r.CallsSuppressed}}, nil
}

// LogsAfter returns up to limit of campaign id's log entries whose id is
// greater than after, oldest first (a stream's Last-Event-ID replay and its
// new entries).
func (db *DB) LogsAfter(ctx context.Context, campaignID, after int64, limit int) ([]LogEntry, error) {
	rows, err := db.rq.LogsAfterID(ctx, sqlcdb.LogsAfterIDParams{CampaignID: campaignID, ID: after, Limit: int64(limit)})
	if err != nil {
		return nil, fmt.Errorf("logs after %d: %w", after, err)
	}
	out := make([]LogEntry, len(rows))
	for i, r := range rows {
		out[i] = logFromRow(r)
	}
	return out, nil
}

// LastLogID returns the id of campaign id's newest log entry, 0 when it has
// none.
func (db *DB) LastLogID(ctx context.Context, campaignID int64) (int64, error) {
	id, err := db.rq.LastLogID(ctx, campaignID)
	if err != nil {
		return 0, fmt.Errorf("last log id: %w", err)
	}
	return id, nil
}

// UnfinishedCampaignIDs returns the ids of up to limit of organization
// org's newest campaigns in state draft, running or paused.
func (db *DB) UnfinishedCampaignIDs(ctx context.Context, org int64, limit int) ([]int64, error) {
	ids, err := db.rq.UnfinishedCampaignIDs(ctx, sqlcdb.UnfinishedCampaignIDsParams{OrganizationID: org, Limit: int64(limit)})
	if err != nil {
		return nil, fmt.Errorf("unfinished campaigns: %w", err)
	}
	return ids, nil
}

package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/outdial/outdial/store/sqlcdb"
)

// Campaign states (API.md 4.4).
const (
	StateDraft     = "draft"
	StateRunning   = "running"
	StatePaused    = "paused"
	StateCompleted = "completed"
	StateCancelled = "cancelled"
	StateFailed    = "failed"
)

// RetryConfig is a campaign's retry policy.
type RetryConfig struct {
	Enabled           bool `json:"enabled"`
	MaxRetries        int  `json:"max_retries"`
	RetryDelaySeconds int  `json:"retry_delay_seconds"`
	RetryOnBusy       bool `json:"retry_on_busy"`
	RetryOnNoAnswer   bool `json:"retry_on_no_answer"`
	RetryOnVoicemail  bool `json:"retry_on_voicemail"`
}

// Slot is one weekly calling window: DayOfWeek 0 = Monday; times "HH:MM",
// EndTime may be "24:00".
type Slot struct {
	DayOfWeek int    `json:"day_of_week"`
	StartTime string `json:"start_time"`
	EndTime   string `json:"end_time"`
}

// ScheduleConfig restricts dialing to weekly slots in a timezone.
type ScheduleConfig struct {
	Enabled  bool   `json:"enabled"`
	Timezone string `json:"timezone"`
	Slots    []Slot `json:"slots"`
}

// CircuitBreaker pauses a campaign whose recent calls mostly fail.
type CircuitBreaker struct {
	Enabled          bool    `json:"enabled"`
	FailureThreshold float64 `json:"failure_threshold"`
	WindowSeconds    int     `json:"window_seconds"`
	MinCallsInWindow int     `json:"min_calls_in_window"`
}

// Settings are the campaign fields PATCH may change.
type Settings struct {
	Name               string
	RetryConfig        RetryConfig
	MaxConcurrency     int
	RateLimitPerSecond float64
	ScheduleConfig     *ScheduleConfig
	CircuitBreaker     CircuitBreaker
}

// Campaign is a stored campaign with its counters.
type Campaign struct {
	Settings
	ID                         int64
	OrganizationID             int64
	WorkflowID                 int64
	WorkflowName               string
	WorkflowDefinition         []byte
	TelephonyConfigurationID   int64
	TelephonyConfigurationName string
	State                      string
	SourceType                 string
	SourceID                   string
	// Columns are the CSV's header names in file order.
	Columns []string
	// Timezones are the distinct contact timezones ("" = the campaign's
	// own; a zone-set key, zones.go), sorted.
	Timezones []string
	// ZoneSets are the zone sets of the zone-set keys of Timezones.
	ZoneSets           map[string][]string
	DefaultCountry     *string
	TotalRows          int64
	ProcessedRows      int64
	FailedRows         int64
	ExecutedCount      int64
	TotalQueuedCount   int64
	ParentCampaignID   *int64
	RedialedCampaignID *int64
	NextDialAt         *time.Time
	BreakerResetAt     time.Time
	CreatedAt          time.Time
	UpdatedAt          time.Time
	StartedAt          *time.Time
	CompletedAt        *time.Time
	CancelledAt        *time.Time
}

func optTime(v sql.NullInt64) *time.Time {
	if !v.Valid {
		return nil
	}
	t := fromMS(v.Int64)
	return &t
}

func optInt(v sql.NullInt64) *int64 {
	if !v.Valid {
		return nil
	}
	return &v.Int64
}

func campaignFromRow(r sqlcdb.GetCampaignRow) (*Campaign, error) {
	c := &Campaign{
		ID: r.ID, OrganizationID: r.OrganizationID, WorkflowID: r.WorkflowID, WorkflowName: r.WorkflowName,
		WorkflowDefinition: []byte(r.WorkflowDefinition), TelephonyConfigurationID: r.TelephonyConfigurationID,
		TelephonyConfigurationName: r.TelephonyConfigurationName, State: r.State, SourceType: r.SourceType,
		SourceID: r.SourceID, DefaultCountry: nullString(r.DefaultCountry), TotalRows: r.TotalRows,
		ProcessedRows: r.ProcessedRows, FailedRows: r.FailedRows, ExecutedCount: r.ExecutedCount,
		TotalQueuedCount: r.TotalQueuedCount, ParentCampaignID: optInt(r.ParentCampaignID),
		RedialedCampaignID: optInt(r.RedialedCampaignID), NextDialAt: optTime(r.NextDialAt),
		BreakerResetAt: fromMS(r.BreakerResetAt), CreatedAt: fromMS(r.CreatedAt), UpdatedAt: fromMS(r.UpdatedAt),
		StartedAt: optTime(r.StartedAt), CompletedAt: optTime(r.CompletedAt), CancelledAt: optTime(r.CancelledAt),
	}
	c.Name = r.Name
	c.MaxConcurrency = int(r.MaxConcurrency)
	c.RateLimitPerSecond = r.RateLimitPerSecond
	if err := json.Unmarshal([]byte(r.RetryConfig), &c.RetryConfig); err != nil {
		return nil, fmt.Errorf("campaign %d retry_config: %w", r.ID, err)
	}
	if err := json.Unmarshal([]byte(r.CircuitBreaker), &c.CircuitBreaker); err != nil {
		return nil, fmt.Errorf("campaign %d circuit_breaker: %w", r.ID, err)
	}
	if err := json.Unmarshal([]byte(r.Columns), &c.Columns); err != nil {
		return nil, fmt.Errorf("campaign %d columns: %w", r.ID, err)
	}
	if err := json.Unmarshal([]byte(r.Timezones), &c.Timezones); err != nil {
		return nil, fmt.Errorf("campaign %d timezones: %w", r.ID, err)
	}
	if err := json.Unmarshal([]byte(r.ZoneSets), &c.ZoneSets); err != nil {
		return nil, fmt.Errorf("campaign %d zone_sets: %w", r.ID, err)
	}
	if r.ScheduleConfig.Valid {
		c.ScheduleConfig = &ScheduleConfig{}
		if err := json.Unmarshal([]byte(r.ScheduleConfig.String), c.ScheduleConfig); err != nil {
			return nil, fmt.Errorf("campaign %d schedule_config: %w", r.ID, err)
		}
	}
	return c, nil
}

func mustJSON(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		panic("encode " + err.Error()) // only plain structs are encoded here
	}
	return string(b)
}

func scheduleJSON(s *ScheduleConfig) sql.NullString {
	if s == nil {
		return sql.NullString{}
	}
	return sql.NullString{String: mustJSON(s), Valid: true}
}

// NewCampaign is what CreateCampaign stores besides the contacts.
type NewCampaign struct {
	Settings
	WorkflowID               int64
	WorkflowName             string
	WorkflowDefinition       []byte
	TelephonyConfigurationID int64
	// TelephonyConfigurationName is kept with the campaign for when the
	// configuration is deleted after the campaign finished.
	TelephonyConfigurationName string
	SourceID                   string
	DefaultCountry             *string
	ParentCampaignID           *int64
	// RedialOf, when set, is the campaign this one redials: it gets
	// redialed_campaign_id in the same transaction, and a campaign already
	// redialed is ECONFLICT.
	RedialOf *int64
}

// ContactInput is one contact to store with a new campaign.
type ContactInput struct {
	Row         int
	PhoneNumber string
	Timezone    string
	// Zones are the time zones the numbering plan gives for PhoneNumber
	// (libphonenumber's data), used for calling hours when Timezone is
	// empty; nil when it gives none.
	Zones   []string
	Context map[string]string
}

// GetCampaign returns campaign id of organization orgID, or ENOTFOUND.
func (db *DB) GetCampaign(ctx context.Context, orgID, id int64) (*Campaign, error) {
	r, err := db.rq.GetCampaign(ctx, sqlcdb.GetCampaignParams{ID: id, OrganizationID: orgID})
	if err != nil {
		return nil, notFound(err, "campaign", id)
	}
	return campaignFromRow(r)
}

// CampaignByID returns campaign id of any organization (for the dialer).
func (db *DB) CampaignByID(ctx context.Context, id int64) (*Campaign, error) {
	r, err := db.rq.GetCampaignByID(ctx, id)
	if err != nil {
		return nil, notFound(err, "campaign", id)
	}
	return campaignFromRow(sqlcdb.GetCampaignRow(r))
}

// ListCampaigns returns up to limit campaigns of the organization with ids
// below beforeID (0 means no bound), newest first.
func (db *DB) ListCampaigns(ctx context.Context, orgID, beforeID int64, limit int) ([]*Campaign, error) {
	if beforeID <= 0 {
		beforeID = 1<<63 - 1
	}
	rows, err := db.rq.ListCampaigns(ctx, sqlcdb.ListCampaignsParams{OrganizationID: orgID, ID: beforeID, Limit: int64(limit)})
	if err != nil {
		return nil, fmt.Errorf("list campaigns: %w", err)
	}
	out := make([]*Campaign, 0, len(rows))
	for _, r := range rows {
		c, err := campaignFromRow(sqlcdb.GetCampaignRow(r))
		if err != nil {
			return nil, err
		}
		out = append(out, c)
	}
	return out, nil
}

// RunningCampaignIDs returns the ids of every running campaign.
func (db *DB) RunningCampaignIDs(ctx context.Context) ([]int64, error) {
	ids, err := db.rq.RunningCampaignIDs(ctx)
	if err != nil {
		return nil, fmt.Errorf("running campaigns: %w", err)
	}
	return ids, nil
}

// UpdateCampaignSettings lets apply change a draft, running or paused
// campaign's settings in one transaction; other states are ECONFLICT.
func (db *DB) UpdateCampaignSettings(ctx context.Context, orgID, id int64, apply func(*Settings) error) (*Campaign, error) {
	err := db.inTx(ctx, func(q sqlcdb.Querier) error {
		// Under the campaign's row lock: two changes at once (on any
		// nodes) each start from the other's result; apply's change of one
		// setting was lost when another wrote the settings it had read
		// before (TestRaceCampaignSettings).
		if err := lockCampaign(ctx, q, id); err != nil {
			return err
		}
		r, err := q.GetCampaign(ctx, sqlcdb.GetCampaignParams{ID: id, OrganizationID: orgID})
		if err != nil {
			return notFound(err, "campaign", id)
		}
		c, err := campaignFromRow(r)
		if err != nil {
			return err
		}
		switch c.State {
		case StateDraft, StateRunning, StatePaused:
		default:
			return Errorf(ECONFLICT, "campaign %d is %s; only draft, running or paused campaigns can be changed", id, c.State)
		}
		s := c.Settings
		if err := apply(&s); err != nil {
			return err
		}
		return q.UpdateCampaignSettings(ctx, sqlcdb.UpdateCampaignSettingsParams{
			Name: s.Name, RetryConfig: mustJSON(s.RetryConfig), MaxConcurrency: int64(s.MaxConcurrency),
			RateLimitPerSecond: s.RateLimitPerSecond, ScheduleConfig: scheduleJSON(s.ScheduleConfig),
			CircuitBreaker: mustJSON(s.CircuitBreaker), UpdatedAt: db.nowMS(), ID: id,
		})
	})
	if err != nil {
		return nil, err
	}
	return db.GetCampaign(ctx, orgID, id)
}

// errNoRows reports whether err is sql.ErrNoRows.
func errNoRows(err error) bool { return errors.Is(err, sql.ErrNoRows) }

package web

import (
	"context"
	"encoding/json"
	"time"

	"github.com/outdial/outdial/store"
)

// campaignJSON is the campaign resource of API.md 4.1.
type campaignJSON struct {
	ID                         int64                 `json:"id"`
	Name                       string                `json:"name"`
	WorkflowID                 int64                 `json:"workflow_id"`
	WorkflowName               string                `json:"workflow_name"`
	State                      string                `json:"state"`
	SourceType                 string                `json:"source_type"`
	SourceID                   string                `json:"source_id"`
	TotalRows                  int64                 `json:"total_rows"`
	ProcessedRows              int64                 `json:"processed_rows"`
	FailedRows                 int64                 `json:"failed_rows"`
	CreatedAt                  string                `json:"created_at"`
	StartedAt                  *string               `json:"started_at"`
	CompletedAt                *string               `json:"completed_at"`
	CancelledAt                *string               `json:"cancelled_at"`
	RetryConfig                store.RetryConfig     `json:"retry_config"`
	MaxConcurrency             int                   `json:"max_concurrency"`
	RateLimitPerSecond         float64               `json:"rate_limit_per_second"`
	ScheduleConfig             *store.ScheduleConfig `json:"schedule_config"`
	CircuitBreaker             store.CircuitBreaker  `json:"circuit_breaker"`
	DefaultCountry             *string               `json:"default_country"`
	ExecutedCount              int64                 `json:"executed_count"`
	TotalQueuedCount           int64                 `json:"total_queued_count"`
	ParentCampaignID           *int64                `json:"parent_campaign_id"`
	RedialedCampaignID         *int64                `json:"redialed_campaign_id"`
	TelephonyConfigurationID   int64                 `json:"telephony_configuration_id"`
	TelephonyConfigurationName string                `json:"telephony_configuration_name"`
	NextDialAt                 *string               `json:"next_dial_at"`
	DialedBy                   *string               `json:"dialed_by"` // the node holding its lease now, or null (API.md 16)
	Logs                       []logJSON             `json:"logs"`
}

type logJSON struct {
	TS      string         `json:"ts"`
	Level   string         `json:"level"`
	Event   string         `json:"event"`
	Message string         `json:"message"`
	Details map[string]any `json:"details"`
}

func optTS(t *time.Time) *string {
	if t == nil {
		return nil
	}
	s := ts(*t)
	return &s
}

func logsOut(entries []store.LogEntry) []logJSON {
	out := make([]logJSON, len(entries))
	for i, e := range entries {
		out[i] = logJSON{TS: ts(e.TS), Level: e.Level, Event: e.Event, Message: e.Message, Details: e.Details}
	}
	return out
}

// campaignOut renders c with its newest 50 log entries and the node dialing
// it now.
func (s *Server) campaignOut(ctx context.Context, c *store.Campaign) (campaignJSON, error) {
	logs, err := s.db.RecentLogs(ctx, c.ID)
	if err != nil {
		return campaignJSON{}, err
	}
	node, err := s.db.DialedBy(ctx, c.ID)
	if err != nil {
		return campaignJSON{}, err
	}
	return campaignWithLogs(c, logs, node), nil
}

// campaignWithLogs renders c with logs, its newest log entries, and node,
// the node holding its lease ("": none).
func campaignWithLogs(c *store.Campaign, logs []store.LogEntry, node string) campaignJSON {
	var dialedBy *string
	if node != "" {
		dialedBy = &node
	}
	var next *string
	if c.State == store.StateRunning {
		next = optTS(c.NextDialAt)
	}
	return campaignJSON{
		ID: c.ID, Name: c.Name, WorkflowID: c.WorkflowID, WorkflowName: c.WorkflowName, State: c.State,
		SourceType: c.SourceType, SourceID: c.SourceID, TotalRows: c.TotalRows, ProcessedRows: c.ProcessedRows,
		FailedRows: c.FailedRows, CreatedAt: ts(c.CreatedAt), StartedAt: optTS(c.StartedAt),
		CompletedAt: optTS(c.CompletedAt), CancelledAt: optTS(c.CancelledAt), RetryConfig: c.RetryConfig,
		MaxConcurrency: c.MaxConcurrency, RateLimitPerSecond: c.RateLimitPerSecond, ScheduleConfig: c.ScheduleConfig,
		CircuitBreaker: c.CircuitBreaker, DefaultCountry: c.DefaultCountry, ExecutedCount: c.ExecutedCount,
		TotalQueuedCount: c.TotalQueuedCount, ParentCampaignID: c.ParentCampaignID, RedialedCampaignID: c.RedialedCampaignID,
		TelephonyConfigurationID: c.TelephonyConfigurationID, TelephonyConfigurationName: c.TelephonyConfigurationName,
		NextDialAt: next, DialedBy: dialedBy, Logs: logsOut(logs),
	}
}

// attemptJSON is one call of GET /campaign/{id}/calls.
type attemptJSON struct {
	ID              int64   `json:"id"`
	ContactRow      int64   `json:"contact_row"`
	PhoneNumber     string  `json:"phone_number"`
	Attempt         int64   `json:"attempt"`
	State           string  `json:"state"`
	Outcome         *string `json:"outcome"`
	RawStatus       *string `json:"raw_status"`
	ProviderCallID  *string `json:"provider_call_id"`
	CallerID        *string `json:"caller_id"`
	AnsweredBy      *string `json:"answered_by"`
	DueAt           *string `json:"due_at"`
	StartedAt       *string `json:"started_at"`
	AnsweredAt      *string `json:"answered_at"`
	EndedAt         *string `json:"ended_at"`
	DurationSeconds *int64  `json:"duration_seconds"`
	Error           *string `json:"error"`
	// Compliance is what the guard rails saw when the attempt was last
	// placed, held or suppressed (API.md 12.5), as stored; null before.
	Compliance json.RawMessage `json:"compliance"`
}

func attemptOut(a *store.Attempt) attemptJSON {
	return attemptJSON{ID: a.ID, ContactRow: a.ContactRow, PhoneNumber: a.PhoneNumber, Attempt: a.Attempt, State: a.State,
		Outcome: a.Outcome, RawStatus: a.RawStatus, ProviderCallID: a.ProviderCallID, CallerID: a.CallerID,
		AnsweredBy: a.AnsweredBy, DueAt: dueAt(a.DueAt), StartedAt: optTS(a.StartedAt), AnsweredAt: optTS(a.AnsweredAt),
		EndedAt: optTS(a.EndedAt), DurationSeconds: a.DurationSeconds, Error: a.Error, Compliance: a.Compliance}
}

// dueAt is an attempt's due time, or nil when it is due at once: first
// attempts are stored due at the Unix epoch.
func dueAt(t time.Time) *string {
	if t.UnixMilli() <= 0 {
		return nil
	}
	return optTS(&t)
}

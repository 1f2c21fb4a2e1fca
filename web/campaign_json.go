package web

import (
	"context"
	"time"

	"github.com/outdial/outdial/store"
	"github.com/outdial/outdial/web/wire"
)

func optTS(t *time.Time) *string {
	if t == nil {
		return nil
	}
	s := ts(*t)
	return &s
}

func logsOut(entries []store.LogEntry) []wire.LogEntry {
	out := make([]wire.LogEntry, len(entries))
	for i, e := range entries {
		out[i] = wire.LogEntry{TS: ts(e.TS), Level: e.Level, Event: e.Event, Message: e.Message, Details: e.Details}
	}
	return out
}

// campaignOut renders c with its newest 50 log entries and the node dialing
// it now.
func (s *Server) campaignOut(ctx context.Context, c *store.Campaign) (wire.Campaign, error) {
	logs, err := s.db.RecentLogs(ctx, c.ID)
	if err != nil {
		return wire.Campaign{}, err
	}
	node, err := s.db.DialedBy(ctx, c.ID)
	if err != nil {
		return wire.Campaign{}, err
	}
	return campaignWithLogs(c, logs, node), nil
}

// campaignWithLogs renders c with logs, its newest log entries, and node,
// the node holding its lease ("": none).
func campaignWithLogs(c *store.Campaign, logs []store.LogEntry, node string) wire.Campaign {
	var dialedBy *string
	if node != "" {
		dialedBy = &node
	}
	columns := c.Columns
	if columns == nil {
		columns = []string{}
	}
	var next *string
	if c.State == store.StateRunning {
		next = optTS(c.NextDialAt)
	}
	return wire.Campaign{
		ID: c.ID, Name: c.Name, WorkflowID: c.WorkflowID, WorkflowName: c.WorkflowName, State: c.State,
		SourceType: c.SourceType, SourceID: c.SourceID, TotalRows: c.TotalRows, ProcessedRows: c.ProcessedRows,
		FailedRows: c.FailedRows, CreatedAt: ts(c.CreatedAt), StartedAt: optTS(c.StartedAt),
		CompletedAt: optTS(c.CompletedAt), CancelledAt: optTS(c.CancelledAt), RetryConfig: wire.RetryConfig(c.RetryConfig),
		MaxConcurrency: c.MaxConcurrency, RateLimitPerSecond: c.RateLimitPerSecond, ScheduleConfig: scheduleOut(c.ScheduleConfig),
		CircuitBreaker: wire.CircuitBreaker(c.CircuitBreaker), DefaultCountry: c.DefaultCountry, ExecutedCount: c.ExecutedCount,
		TotalQueuedCount: c.TotalQueuedCount, ParentCampaignID: c.ParentCampaignID, RedialedCampaignID: c.RedialedCampaignID,
		TelephonyConfigurationID: c.TelephonyConfigurationID, TelephonyConfigurationName: c.TelephonyConfigurationName,
		NextDialAt: next, DialedBy: dialedBy, Columns: columns, Logs: logsOut(logs),
	}
}

// scheduleOut is sc as the API answers it (nil: no calling window).
func scheduleOut(sc *store.ScheduleConfig) *wire.ScheduleConfig {
	if sc == nil {
		return nil
	}
	out := &wire.ScheduleConfig{Enabled: sc.Enabled, Timezone: sc.Timezone, Slots: make([]wire.Slot, len(sc.Slots))}
	for i, sl := range sc.Slots {
		out.Slots[i] = wire.Slot(sl)
	}
	return out
}

func attemptOut(a *store.Attempt) wire.Call {
	return wire.Call{ID: a.ID, ContactRow: a.ContactRow, PhoneNumber: a.PhoneNumber, Attempt: a.Attempt, State: a.State,
		Outcome: a.Outcome, RawStatus: a.RawStatus, ProviderCallID: a.ProviderCallID, CallerID: a.CallerID,
		AnsweredBy: a.AnsweredBy, DueAt: dueAt(a.DueAt), StartedAt: optTS(a.StartedAt), AnsweredAt: optTS(a.AnsweredAt),
		EndedAt: optTS(a.EndedAt), DurationSeconds: a.DurationSeconds, Error: a.Error, Compliance: a.Compliance,
		AnswerToFirstAudioMs: a.AnswerToFirstAudioMs, Abandoned: a.Abandoned}
}

// dueAt is an attempt's due time, or nil when it is due at once: first
// attempts are stored due at the Unix epoch.
func dueAt(t time.Time) *string {
	if t.UnixMilli() <= 0 {
		return nil
	}
	return optTS(&t)
}

package wire

import "encoding/json"

// Campaign is the campaign resource of API.md 4.1, as GET, POST and PATCH
// /api/v1/campaign answer it and as GET /api/v1/campaign lists it.
// Timestamps are RFC 3339 UTC strings (API.md 0).
type Campaign struct {
	ID                         int64           `json:"id"`
	Name                       string          `json:"name"`
	WorkflowID                 int64           `json:"workflow_id"`
	WorkflowName               string          `json:"workflow_name"`
	State                      string          `json:"state"`
	SourceType                 string          `json:"source_type"`
	SourceID                   string          `json:"source_id"`
	TotalRows                  int64           `json:"total_rows"`
	ProcessedRows              int64           `json:"processed_rows"`
	FailedRows                 int64           `json:"failed_rows"`
	CreatedAt                  string          `json:"created_at"`
	StartedAt                  *string         `json:"started_at"`
	CompletedAt                *string         `json:"completed_at"`
	CancelledAt                *string         `json:"cancelled_at"`
	RetryConfig                RetryConfig     `json:"retry_config"`
	MaxConcurrency             int             `json:"max_concurrency"`
	RateLimitPerSecond         float64         `json:"rate_limit_per_second"`
	ScheduleConfig             *ScheduleConfig `json:"schedule_config"`
	CircuitBreaker             CircuitBreaker  `json:"circuit_breaker"`
	DefaultCountry             *string         `json:"default_country"`
	ExecutedCount              int64           `json:"executed_count"`
	TotalQueuedCount           int64           `json:"total_queued_count"`
	ParentCampaignID           *int64          `json:"parent_campaign_id"`
	RedialedCampaignID         *int64          `json:"redialed_campaign_id"`
	TelephonyConfigurationID   int64           `json:"telephony_configuration_id"`
	TelephonyConfigurationName string          `json:"telephony_configuration_name"`
	// NextDialAt is set only while the campaign runs.
	NextDialAt *string `json:"next_dial_at"`
	// DialedBy is the node holding the campaign's lease now, or null
	// (API.md 16).
	DialedBy *string `json:"dialed_by"`
	// Columns are the contacts CSV's header names in file order (what the
	// calls list's ?columns= takes).
	Columns []string `json:"columns"`
	// Logs are the newest log entries, oldest first.
	Logs []LogEntry `json:"logs"`
}

// RetryConfig is a campaign's retry policy (API.md 4.2; defaults and bounds
// in settings.go).
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

// ScheduleConfig is a campaign's calling window: weekly slots in an IANA
// time zone.
type ScheduleConfig struct {
	Enabled  bool   `json:"enabled"`
	Timezone string `json:"timezone"`
	Slots    []Slot `json:"slots"`
}

// CircuitBreaker pauses a campaign whose recent calls mostly fail (API.md
// 4.2; defaults and bounds in settings.go).
type CircuitBreaker struct {
	Enabled          bool    `json:"enabled"`
	FailureThreshold float64 `json:"failure_threshold"`
	WindowSeconds    int     `json:"window_seconds"`
	MinCallsInWindow int     `json:"min_calls_in_window"`
}

// LogEntry is one entry of a campaign's log (API.md 4.6).
type LogEntry struct {
	TS      string         `json:"ts"`
	Level   string         `json:"level"`
	Event   string         `json:"event"`
	Message string         `json:"message"`
	Details map[string]any `json:"details"`
}

// Call is one call attempt of GET /api/v1/campaign/{id}/calls.
type Call struct {
	ID             int64   `json:"id"`
	ContactRow     int64   `json:"contact_row"`
	PhoneNumber    string  `json:"phone_number"`
	Attempt        int64   `json:"attempt"`
	State          string  `json:"state"`
	Outcome        *string `json:"outcome"`
	RawStatus      *string `json:"raw_status"`
	ProviderCallID *string `json:"provider_call_id"`
	CallerID       *string `json:"caller_id"`
	AnsweredBy     *string `json:"answered_by"`
	// DueAt is null when the attempt is due at once.
	DueAt           *string `json:"due_at"`
	StartedAt       *string `json:"started_at"`
	AnsweredAt      *string `json:"answered_at"`
	EndedAt         *string `json:"ended_at"`
	DurationSeconds *int64  `json:"duration_seconds"`
	Error           *string `json:"error"`
	// Compliance is what the guard rails saw when the attempt was last
	// placed, held or suppressed (API.md 12.5), as stored; null before.
	Compliance json.RawMessage `json:"compliance"`
	// AnswerToFirstAudioMs and Abandoned are the abandonment verdict on the
	// call (API.md 19): null when no person answered (or not ended yet).
	AnswerToFirstAudioMs *int64 `json:"answer_to_first_audio_ms"`
	Abandoned            *bool  `json:"abandoned"`
	// Contact is the contact's CSV cells of the columns the request's
	// ?columns= asked for, by column name; absent when none was asked.
	Contact map[string]string `json:"contact,omitempty"`
}

// Diagnosis is the body of GET /api/v1/campaign/{id}/diagnosis (API.md 11).
type Diagnosis struct {
	CampaignID     int64    `json:"campaign_id"`
	State          string   `json:"state"`
	Dialing        bool     `json:"dialing"`
	InFlight       int      `json:"in_flight"`
	MaxConcurrency int      `json:"max_concurrency"`
	ReadyContacts  int      `json:"ready_contacts"`
	Reasons        []Reason `json:"reasons"`
	// AbandonedRate24h is abandoned_rate_24h (API.md 19).
	AbandonedRate24h AbandonedRates `json:"abandoned_rate_24h"`
}

// AbandonedRates is abandoned_rate_24h (API.md 19): abandoned / answered
// by a person over the last 24 h, of the campaign and of its
// organization; null below 10 such calls.
type AbandonedRates struct {
	Campaign     *float64 `json:"campaign"`
	Organization *float64 `json:"organization"`
}

// Reason is one reason of a Diagnosis: a code (API.md 11's blocked_by
// values), the API's sentence, and a count or a time when the code has one.
type Reason struct {
	Code    string  `json:"code"`
	Message string  `json:"message"`
	Count   *int    `json:"count,omitempty"`
	Until   *string `json:"until,omitempty"`
}

// CampaignList is the body of GET /api/v1/campaign.
type CampaignList struct {
	Campaigns []Campaign `json:"campaigns"`
}

// CallList is the body of GET /api/v1/campaign/{id}/calls.
type CallList struct {
	Calls []Call `json:"calls"`
}

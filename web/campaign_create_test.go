package web_test

import (
	"fmt"
	"net/http"
	"regexp"
	"strings"
	"testing"
)

// campaignKeys is the documented field set of a campaign (API.md 4.1 plus
// default_country, cancelled_at and next_dial_at, 16's dialed_by, and the
// CSV's columns).
var campaignKeys = []string{"id", "name", "workflow_id", "workflow_name", "state", "source_type", "source_id",
	"total_rows", "processed_rows", "failed_rows", "created_at", "started_at", "completed_at", "cancelled_at",
	"retry_config", "max_concurrency", "rate_limit_per_second", "schedule_config", "circuit_breaker", "default_country",
	"executed_count", "total_queued_count", "parent_campaign_id", "redialed_campaign_id",
	"telephony_configuration_id", "telephony_configuration_name", "next_dial_at", "dialed_by", "columns", "logs"}

var campTimestamp = regexp.MustCompile(`^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$`)

// defaultRetry and defaultBreaker are API.md 4.2's defaults.
var (
	defaultRetry = map[string]any{"enabled": true, "max_retries": 1.0, "retry_delay_seconds": 120.0,
		"retry_on_busy": true, "retry_on_no_answer": true, "retry_on_voicemail": false}
	defaultBreaker = map[string]any{"enabled": false, "failure_threshold": 0.5, "window_seconds": 120.0, "min_calls_in_window": 5.0}
)

func TestCampaignCreateDraft(t *testing.T) {
	t.Parallel()
	ce := newCampEnv(t, campOpts{})
	s := ce.setup(false)
	key := ce.upload(ce.keyA, campCSV(3))
	r := ce.a(http.MethodPost, campaignsPath, campBody("spring reminders", s.workflowID, key))
	wantStatus(t, r, http.StatusOK)
	c := r.obj(t)
	if !sameSet(keys(c), campaignKeys) {
		t.Fatalf("keys = %v, want %v", keys(c), campaignKeys)
	}
	want := map[string]any{
		"name": "spring reminders", "workflow_id": float64(s.workflowID), "workflow_name": "reminder", "state": "draft",
		"source_type": "csv", "source_id": key, "total_rows": 3.0, "processed_rows": 0.0, "failed_rows": 0.0,
		"started_at": nil, "completed_at": nil, "cancelled_at": nil, "retry_config": defaultRetry,
		"max_concurrency": 10.0, "rate_limit_per_second": 1.0, "schedule_config": nil, "circuit_breaker": defaultBreaker,
		"default_country": nil, "executed_count": 0.0, "total_queued_count": 3.0, "parent_campaign_id": nil,
		"redialed_campaign_id": nil, "telephony_configuration_id": float64(s.configID),
		"telephony_configuration_name": "main", "next_dial_at": nil, "dialed_by": nil,
		"columns": []any{"phone_number", "first_name", "plan"}, "logs": []any{},
	}
	for k, v := range want {
		if !equalJSON(c[k], v) {
			t.Errorf("%s = %v, want %v", k, c[k], v)
		}
	}
	if ts, _ := c["created_at"].(string); !campTimestamp.MatchString(ts) {
		t.Errorf("created_at = %v, want an RFC 3339 UTC timestamp with milliseconds", c["created_at"])
	}
	cid := id(t, c, "id")
	if got := ce.campaign(cid); !equalJSON(got, c) {
		t.Errorf("GET = %v,\nwant the create answer %v", got, c)
	}
	if ids := ce.campaignIDs(ce.keyA); len(ids) != 1 || ids[0] != cid {
		t.Errorf("list = %v, want [%d]", ids, cid)
	}
	if n := ce.rowCounts(); n["contacts"] != 3 || n["call_attempts"] != 3 {
		t.Errorf("stored %v, want 3 contacts with 3 first attempts", n)
	}
	// The contacts were copied: changing the object does not change the
	// campaign (a new upload, same campaign).
	if calls := ce.calls(cid, ""); len(calls) != 3 || calls[0]["state"] != "queued" || calls[0]["phone_number"] != campPhone(1) ||
		calls[0]["due_at"] != nil || calls[0]["started_at"] != nil || calls[0]["outcome"] != nil {
		t.Errorf("calls of a draft = %v, want 3 queued first attempts in CSV order, due at once (null)", calls)
	}
}

// TestCampaignCreateFieldRules sends one bad field at a time (and several
// at once) and checks the 422 and that nothing was stored.
func TestCampaignCreateFieldRules(t *testing.T) {
	t.Parallel()
	ce := newCampEnv(t, campOpts{})
	s := ce.setup(false)
	key := ce.upload(ce.keyA, campCSV(2))
	otherCfg := ce.twilioConfig(ce.keyB, "b-main", true, false)
	otherWF := ce.workflow(ce.keyB, "b-flow", campDefinition)
	slot := func(day any, start, end string) map[string]any {
		return map[string]any{"day_of_week": day, "start_time": start, "end_time": end}
	}
	sched := func(slots ...any) map[string]any {
		return map[string]any{"timezone": "Europe/Paris", "slots": slots}
	}
	many := make([]any, 51)
	for i := range many {
		many[i] = slot(i%7, "09:00", "17:00")
	}
	base := campBody("c", s.workflowID, key)
	cases := []struct {
		name string
		body map[string]any
		want []string
	}{
		{"name missing", without(base, "name"), []string{"body.name missing"}},
		{"name empty", with(base, "name", ""), []string{"body.name string_too_short"}},
		{"name too long", with(base, "name", strings.Repeat("n", 256)), []string{"body.name string_too_long"}},
		{"name null", with(base, "name", nil), []string{"body.name string_type"}},
		{"name number", with(base, "name", 7), []string{"body.name string_type"}},
		{"workflow missing", without(base, "workflow_id"), []string{"body.workflow_id missing"}},
		{"workflow not integer", with(base, "workflow_id", "abc"), []string{"body.workflow_id int_parsing"}},
		{"workflow unknown", with(base, "workflow_id", 999999), []string{"body.workflow_id workflow_not_found"}},
		{"workflow of another org", with(base, "workflow_id", otherWF), []string{"body.workflow_id workflow_not_found"}},
		{"source_type", with(base, "source_type", "xlsx"), []string{"body.source_type literal_error"}},
		{"source missing", without(base, "source_id"), []string{"body.source_id missing"}},
		{"source empty", with(base, "source_id", ""), []string{"body.source_id string_too_short"}},
		{"source_url not a string", with(without(base, "source_id"), "source_url", 5), []string{"body.source_id string_type"}},
		{"config of another org", with(base, "telephony_configuration_id", otherCfg), []string{"body.telephony_configuration_id telephony_configuration_not_found"}},
		{"config unknown", with(base, "telephony_configuration_id", 999999), []string{"body.telephony_configuration_id telephony_configuration_not_found"}},
		{"config zero", with(base, "telephony_configuration_id", 0), []string{"body.telephony_configuration_id telephony_configuration_not_found"}},
		{"config negative", with(base, "telephony_configuration_id", -3), []string{"body.telephony_configuration_id telephony_configuration_not_found"}},
		{"config not integer", with(base, "telephony_configuration_id", "x"), []string{"body.telephony_configuration_id int_parsing"}},
		{"retry_config not object", with(base, "retry_config", "x"), []string{"body.retry_config model_type"}},
		{"max_retries low", with(base, "retry_config", map[string]any{"max_retries": -1}), []string{"body.retry_config.max_retries greater_than_equal"}},
		{"max_retries high", with(base, "retry_config", map[string]any{"max_retries": 11}), []string{"body.retry_config.max_retries less_than_equal"}},
		{"retry delay low", with(base, "retry_config", map[string]any{"retry_delay_seconds": 29}), []string{"body.retry_config.retry_delay_seconds greater_than_equal"}},
		{"retry delay high", with(base, "retry_config", map[string]any{"retry_delay_seconds": 86401}), []string{"body.retry_config.retry_delay_seconds less_than_equal"}},
		{"retry flag", with(base, "retry_config", map[string]any{"retry_on_busy": "perhaps"}), []string{"body.retry_config.retry_on_busy bool_parsing"}},
		{"concurrency low", with(base, "max_concurrency", 0), []string{"body.max_concurrency greater_than_equal"}},
		{"concurrency high", with(base, "max_concurrency", 1001), []string{"body.max_concurrency less_than_equal"}},
		{"concurrency fraction", with(base, "max_concurrency", 1.5), []string{"body.max_concurrency int_from_float"}},
		{"rate low", with(base, "rate_limit_per_second", 0.09), []string{"body.rate_limit_per_second greater_than_equal"}},
		{"rate high", with(base, "rate_limit_per_second", 1000.5), []string{"body.rate_limit_per_second less_than_equal"}},
		{"rate not a number", with(base, "rate_limit_per_second", "fast"), []string{"body.rate_limit_per_second float_parsing"}},
		{"schedule not object", with(base, "schedule_config", 3), []string{"body.schedule_config model_type"}},
		{"timezone missing", with(base, "schedule_config", map[string]any{"slots": []any{slot(0, "09:00", "17:00")}}), []string{"body.schedule_config.timezone missing"}},
		{"timezone unknown", with(base, "schedule_config", with(sched(slot(0, "09:00", "17:00")), "timezone", "Mars/Olympus")), []string{"body.schedule_config.timezone value_error"}},
		{"timezone Local", with(base, "schedule_config", with(sched(slot(0, "09:00", "17:00")), "timezone", "Local")), []string{"body.schedule_config.timezone value_error"}},
		{"slots missing", with(base, "schedule_config", map[string]any{"timezone": "UTC"}), []string{"body.schedule_config.slots missing"}},
		{"slots not a list", with(base, "schedule_config", with(sched(), "slots", "x")), []string{"body.schedule_config.slots list_type"}},
		{"slots null", with(base, "schedule_config", sched()), []string{"body.schedule_config.slots list_type"}},
		{"no slot", with(base, "schedule_config", with(sched(), "slots", []any{})), []string{"body.schedule_config.slots too_short"}},
		{"51 slots", with(base, "schedule_config", sched(many...)), []string{"body.schedule_config.slots too_long"}},
		{"slot not object", with(base, "schedule_config", sched("x")), []string{"body.schedule_config.slots.0 model_type"}},
		{"day high", with(base, "schedule_config", sched(slot(7, "09:00", "17:00"))), []string{"body.schedule_config.slots.0.day_of_week less_than_equal"}},
		{"day low", with(base, "schedule_config", sched(slot(-1, "09:00", "17:00"))), []string{"body.schedule_config.slots.0.day_of_week greater_than_equal"}},
		{"day missing", with(base, "schedule_config", sched(map[string]any{"start_time": "09:00", "end_time": "17:00"})), []string{"body.schedule_config.slots.0.day_of_week missing"}},
		{"start H:MM", with(base, "schedule_config", sched(slot(0, "9:00", "17:00"))), []string{"body.schedule_config.slots.0.start_time value_error"}},
		{"start signed", with(base, "schedule_config", sched(slot(0, "+9:00", "17:00"))), []string{"body.schedule_config.slots.0.start_time value_error"}},
		{"end signed", with(base, "schedule_config", sched(slot(0, "09:00", "-0:00"))), []string{"body.schedule_config.slots.0.end_time value_error"}},
		{"start 24:00", with(base, "schedule_config", sched(slot(0, "24:00", "24:00"))), []string{"body.schedule_config.slots.0.start_time value_error"}},
		{"end 24:01", with(base, "schedule_config", sched(slot(0, "09:00", "24:01"))), []string{"body.schedule_config.slots.0.end_time value_error"}},
		{"minute 60", with(base, "schedule_config", sched(slot(0, "09:60", "17:00"))), []string{"body.schedule_config.slots.0.start_time value_error"}},
		{"start after end", with(base, "schedule_config", sched(slot(0, "17:00", "09:00"))), []string{"body.schedule_config.slots.0 value_error"}},
		{"start equals end", with(base, "schedule_config", sched(slot(0, "09:00", "09:00"))), []string{"body.schedule_config.slots.0 value_error"}},
		{"second slot bad", with(base, "schedule_config", sched(slot(0, "09:00", "17:00"), slot(1, "10:00", "x"))), []string{"body.schedule_config.slots.1.end_time value_error"}},
		{"threshold high", with(base, "circuit_breaker", map[string]any{"failure_threshold": 1.01}), []string{"body.circuit_breaker.failure_threshold less_than_equal"}},
		{"threshold low", with(base, "circuit_breaker", map[string]any{"failure_threshold": -0.1}), []string{"body.circuit_breaker.failure_threshold greater_than_equal"}},
		{"window low", with(base, "circuit_breaker", map[string]any{"window_seconds": 9}), []string{"body.circuit_breaker.window_seconds greater_than_equal"}},
		{"window high", with(base, "circuit_breaker", map[string]any{"window_seconds": 3601}), []string{"body.circuit_breaker.window_seconds less_than_equal"}},
		{"min calls low", with(base, "circuit_breaker", map[string]any{"min_calls_in_window": 0}), []string{"body.circuit_breaker.min_calls_in_window greater_than_equal"}},
		{"min calls high", with(base, "circuit_breaker", map[string]any{"min_calls_in_window": 1001}), []string{"body.circuit_breaker.min_calls_in_window less_than_equal"}},
		{"breaker not object", with(base, "circuit_breaker", []any{}), []string{"body.circuit_breaker model_type"}},
		{"country unknown", with(base, "default_country", "XX"), []string{"body.default_country value_error"}},
		{"country alpha-3", with(base, "default_country", "USA"), []string{"body.default_country value_error"}},
		{"country number", with(base, "default_country", 1), []string{"body.default_country string_type"}},
		{"several at once", with(without(base, "name"), "max_concurrency", 0, "rate_limit_per_second", 5000,
			"retry_config", map[string]any{"max_retries": 20, "retry_delay_seconds": 1},
			"schedule_config", sched(slot(9, "25:00", "17:00")), "default_country", "ZZ"),
			[]string{"body.name missing", "body.max_concurrency greater_than_equal", "body.rate_limit_per_second less_than_equal",
				"body.retry_config.max_retries less_than_equal", "body.retry_config.retry_delay_seconds greater_than_equal",
				"body.schedule_config.slots.0.day_of_week less_than_equal", "body.schedule_config.slots.0.start_time value_error",
				"body.default_country value_error"}},
		{"unknown workflow and config together", with(base, "workflow_id", otherWF, "telephony_configuration_id", otherCfg),
			[]string{"body.workflow_id workflow_not_found", "body.telephony_configuration_id telephony_configuration_not_found"}},
	}
	before := ce.rowCounts()
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := ce.a(http.MethodPost, campaignsPath, tc.body)
			wantProblems(t, r, tc.want...)
		})
	}
	if after := ce.rowCounts(); !equalJSON(after, before) {
		t.Errorf("rejected creates stored rows: %v, before %v", after, before)
	}
	if ids := ce.campaignIDs(ce.keyA); len(ids) != 0 {
		t.Errorf("campaigns = %v after rejected creates, want none", ids)
	}
}

// TestCampaignCreateProblemDetails checks whole 422 entries of the
// campaign-specific checks.
func TestCampaignCreateProblemDetails(t *testing.T) {
	t.Parallel()
	ce := newCampEnv(t, campOpts{})
	s := ce.setup(false)
	key := ce.upload(ce.keyA, campCSV(1))
	base := campBody("c", s.workflowID, key)
	slot := map[string]any{"day_of_week": 0, "start_time": "17:00", "end_time": "09:00"}
	cases := []struct {
		name string
		body map[string]any
		want []wantProblem
	}{
		{"source_type", with(base, "source_type", "xlsx"), []wantProblem{{loc: "body.source_type", typ: "literal_error",
			msg: "Input should be 'csv'", input: "xlsx", ctx: map[string]any{"expected": "'csv'"}}}},
		{"workflow", with(base, "workflow_id", 424242), []wantProblem{{loc: "body.workflow_id", typ: "workflow_not_found",
			msg: "Value error, workflow 424242 not found", input: 424242}}},
		{"config", with(base, "telephony_configuration_id", 424242), []wantProblem{{loc: "body.telephony_configuration_id",
			typ: "telephony_configuration_not_found", msg: "Value error, telephony configuration 424242 not found", input: 424242}}},
		{"concurrency", with(base, "max_concurrency", 1001), []wantProblem{{loc: "body.max_concurrency", typ: "less_than_equal",
			msg: "Input should be less than or equal to 1000", input: 1001, ctx: map[string]any{"le": 1000}}}},
		{"rate", with(base, "rate_limit_per_second", 0.05), []wantProblem{{loc: "body.rate_limit_per_second", typ: "greater_than_equal",
			msg: "Input should be greater than or equal to 0.1", input: 0.05, ctx: map[string]any{"ge": 0.1}}}},
		{"slot order", with(base, "schedule_config", map[string]any{"timezone": "UTC", "slots": []any{slot}}), []wantProblem{{
			loc: "body.schedule_config.slots.0", typ: "value_error", msg: "Value error, start_time must be before end_time", input: slot}}},
		{"no slots", with(base, "schedule_config", map[string]any{"timezone": "UTC", "slots": []any{}}), []wantProblem{{
			loc: "body.schedule_config.slots", typ: "too_short", msg: "List should have at least 1 item after validation, not 0",
			input: []any{}, ctx: map[string]any{"field_type": "List", "min_length": 1, "actual_length": 0}}}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			wantExactProblems(t, ce.a(http.MethodPost, campaignsPath, tc.body), tc.want...)
		})
	}
}

// TestCampaignCreateAccepted checks the bounds that are allowed, the
// defaults and the aliases.
func TestCampaignCreateAccepted(t *testing.T) {
	t.Parallel()
	ce := newCampEnv(t, campOpts{})
	s := ce.setup(false)
	key := ce.upload(ce.keyA, campCSV(2))
	telnyx := id(t, ce.createConfig(ce.keyA, "tx", false, validConfig("telnyx")), "id")
	slots := make([]any, 50)
	for i := range slots {
		slots[i] = map[string]any{"day_of_week": i % 7, "start_time": "00:00", "end_time": "24:00"}
	}
	base := campBody("c", s.workflowID, key)
	cases := []struct {
		name  string
		body  map[string]any
		check map[string]any
	}{
		{"lowest bounds", with(base, "max_concurrency", 1, "rate_limit_per_second", 0.1,
			"retry_config", map[string]any{"max_retries": 0, "retry_delay_seconds": 30},
			"circuit_breaker", map[string]any{"failure_threshold": 0, "window_seconds": 10, "min_calls_in_window": 1}),
			map[string]any{"max_concurrency": 1, "rate_limit_per_second": 0.1,
				"retry_config":    with(defaultRetry, "max_retries", 0, "retry_delay_seconds", 30),
				"circuit_breaker": map[string]any{"enabled": false, "failure_threshold": 0, "window_seconds": 10, "min_calls_in_window": 1}}},
		{"highest bounds", with(base, "max_concurrency", 1000, "rate_limit_per_second", 1000,
			"retry_config", map[string]any{"max_retries": 10, "retry_delay_seconds": 86400, "retry_on_voicemail": true, "enabled": false},
			"circuit_breaker", map[string]any{"enabled": true, "failure_threshold": 1, "window_seconds": 3600, "min_calls_in_window": 1000}),
			map[string]any{"max_concurrency": 1000, "rate_limit_per_second": 1000,
				"retry_config":    with(defaultRetry, "enabled", false, "max_retries", 10, "retry_delay_seconds", 86400, "retry_on_voicemail", true),
				"circuit_breaker": map[string]any{"enabled": true, "failure_threshold": 1, "window_seconds": 3600, "min_calls_in_window": 1000}}},
		{"50 slots ending 24:00", with(base, "schedule_config", map[string]any{"timezone": "America/New_York", "slots": slots}),
			map[string]any{"schedule_config": map[string]any{"enabled": true, "timezone": "America/New_York", "slots": slots}}},
		{"disabled schedule", with(base, "schedule_config", map[string]any{"enabled": false, "timezone": "UTC",
			"slots": []any{map[string]any{"day_of_week": 6, "start_time": "23:59", "end_time": "24:00"}}}),
			map[string]any{"schedule_config": map[string]any{"enabled": false, "timezone": "UTC",
				"slots": []any{map[string]any{"day_of_week": 6, "start_time": "23:59", "end_time": "24:00"}}}}},
		{"nulls are defaults", with(base, "schedule_config", nil, "retry_config", nil, "circuit_breaker", nil,
			"rate_limit_per_second", nil, "max_concurrency", nil, "telephony_configuration_id", nil, "default_country", nil, "source_type", nil),
			map[string]any{"schedule_config": nil, "retry_config": defaultRetry, "circuit_breaker": defaultBreaker,
				"rate_limit_per_second": 1, "max_concurrency": 10, "telephony_configuration_id": s.configID, "default_country": nil}},
		{"source_url alias", with(without(base, "source_id"), "source_url", key, "source_type", "csv"), map[string]any{"source_id": key}},
		{"source_id wins over source_url", with(base, "source_url", "campaigns/1/other.csv"), map[string]any{"source_id": key}},
		{"lax values", with(base, "max_concurrency", "7", "rate_limit_per_second", "2.5", "retry_config", map[string]any{"retry_on_busy": "no"}),
			map[string]any{"max_concurrency": 7, "rate_limit_per_second": 2.5, "retry_config": with(defaultRetry, "retry_on_busy", false)}},
		{"country lower case", with(base, "default_country", " gb "), map[string]any{"default_country": "GB"}},
		{"provider default rate", with(base, "telephony_configuration_id", telnyx),
			map[string]any{"rate_limit_per_second": 10, "telephony_configuration_id": telnyx, "telephony_configuration_name": "tx"}},
		{"explicit rate wins", with(base, "telephony_configuration_id", telnyx, "rate_limit_per_second", 3),
			map[string]any{"rate_limit_per_second": 3}},
		{"unknown keys ignored", with(base, "id", 99, "state", "running", "total_rows", 5), map[string]any{"state": "draft", "total_rows": 2}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c := ce.createCampaign(ce.keyA, tc.body)
			for k, v := range tc.check {
				if !equalJSON(c[k], v) && fmt.Sprint(c[k]) != fmt.Sprint(v) {
					t.Errorf("%s = %v, want %v", k, c[k], v)
				}
			}
		})
	}
}

func TestCampaignCreateTelephonyDefault(t *testing.T) {
	t.Parallel()
	ce := newCampEnv(t, campOpts{})
	wf := ce.workflow(ce.keyA, "flow", campDefinition)
	key := ce.upload(ce.keyA, campCSV(1))
	other := ce.twilioConfig(ce.keyA, "not default", false, false)
	ce.twilioConfig(ce.keyB, "b default", true, false) // another organization's default does not count
	before := ce.rowCounts()
	r := ce.a(http.MethodPost, campaignsPath, campBody("c", wf, key))
	ps := wantProblems(t, r, "body.telephony_configuration_id missing")
	if !strings.Contains(ps[0].Msg, "no default outbound telephony configuration") {
		t.Errorf("msg = %q, want it to say the organization has no default", ps[0].Msg)
	}
	if after := ce.rowCounts(); !equalJSON(after, before) {
		t.Errorf("stored %v, before %v", after, before)
	}
	c := ce.createCampaign(ce.keyA, campBody("c", wf, key, "telephony_configuration_id", other))
	if id(t, c, "telephony_configuration_id") != other {
		t.Errorf("telephony_configuration_id = %v, want %d", c["telephony_configuration_id"], other)
	}
	def := ce.twilioConfig(ce.keyA, "default", true, false)
	c = ce.createCampaign(ce.keyA, campBody("c", wf, key))
	if id(t, c, "telephony_configuration_id") != def || c["telephony_configuration_name"] != "default" {
		t.Errorf("configuration = %v %v, want the default %d", c["telephony_configuration_id"], c["telephony_configuration_name"], def)
	}
}

// TestCampaignCreateCSVProblems uploads bad files through presigned URLs
// to the bundled store, as a client does, and checks each 422 and that
// nothing was stored.
func TestCampaignCreateCSVProblems(t *testing.T) {
	t.Parallel()
	ce := newCampEnv(t, campOpts{})
	s := ce.setup(false)
	invalidWF := ce.workflow(ce.keyA, "draft flow", campInvalidDefinition)
	src := func(row int) string { return fmt.Sprintf("body.source_id.row.%d", row) }
	var many strings.Builder
	many.WriteString("phone_number,first_name\n")
	for i := 0; i < 150; i++ {
		fmt.Fprintf(&many, "not-a-number-%d,A\n", i)
	}
	cases := []struct {
		name string
		csv  string
		want []string
	}{
		{"row problems", "phone_number,first_name,plan\n" +
			"+14155550201,Ada,gold\n" + // accepted
			"12345,Bob,\n" + // plan may be blank: it has a default
			",Cy,x\n" +
			"+1 415 555 0201,Dup,x\n" +
			"+14155550205,,x\n" +
			"+14155550206,   ,x\n",
			[]string{src(3) + " phone_invalid", src(4) + " phone_missing", src(5) + " phone_duplicate",
				src(6) + " variable_empty", src(7) + " variable_empty"}},
		{"national number without default_country", "phone_number,first_name\n4155550201,Ada\n", []string{src(2) + " phone_invalid"}},
		{"no phone column", "tel,first_name\n+14155550201,Ada\n", []string{"body.source_id csv_no_phone_column"}},
		{"header only", "phone_number,first_name\n", []string{"body.source_id csv_empty"}},
		{"blank file", "\n", []string{"body.source_id csv_empty"}},
		{"template variable without column", "phone_number,plan\n+14155550201,gold\n", []string{"body.source_id template_variable_missing"}},
		{"wrong field count", "phone_number,first_name\n+14155550201,Ada,extra\n+14155550202,Bo\n", []string{src(2) + " csv_invalid"}},
		{"bad timezone", "phone_number,first_name,timezone\n+14155550201,Ada,Mars/Olympus\n", []string{src(2) + " timezone_invalid"}},
	}
	before := ce.rowCounts()
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			key := ce.upload(ce.keyA, tc.csv)
			wantProblems(t, ce.a(http.MethodPost, campaignsPath, campBody("c", s.workflowID, key)), tc.want...)
		})
	}

	t.Run("row details", func(t *testing.T) {
		key := ce.upload(ce.keyA, "phone_number,first_name\n+14155550201,Ada\n+14155550201,Bo\n,Cy\n")
		ps := problems(t, ce.a(http.MethodPost, campaignsPath, campBody("c", s.workflowID, key)))
		if len(ps) != 2 || !equalJSON(ps[0].Loc, []any{"body", "source_id", "row", 3}) || ps[0].Input != "+14155550201" ||
			!equalJSON(ps[1].Loc, []any{"body", "source_id", "row", 4}) || ps[1].Type != "phone_missing" {
			t.Errorf("problems = %+v, want row 3 phone_duplicate (input the number) and row 4 phone_missing", ps)
		}
		want := []string{"Value error, phone number +14155550201 already appears in an earlier row", "Value error, phone_number is empty"}
		for i, p := range ps {
			if i < len(want) && p.Msg != want[i] || p.Ctx != nil {
				t.Errorf("problem %+v: want msg %q and no ctx", p, want[min(i, 1)])
			}
		}
	})

	// Each problem about a column names it in column (as the header has
	// it); the others have none.
	t.Run("columns", func(t *testing.T) {
		for _, tc := range []struct{ csv, want string }{
			{"Phone_Number,first_name\n12345,Ada\n", "body.source_id.row.2 phone_invalid Phone_Number"},
			{"phone_number,first_name\n,Ada\n", "body.source_id.row.2 phone_missing phone_number"},
			{"phone_number,first_name\n+14155550201,Ada\n+14155550201,Bo\n", "body.source_id.row.3 phone_duplicate phone_number"},
			{"phone_number,first_name\n+14155550201, \n", "body.source_id.row.2 variable_empty first_name"},
			{"phone_number,first_name,timezone\n+14155550201,Ada,Mars\n", "body.source_id.row.2 timezone_invalid timezone"},
			{"phone_number\n+14155550201\n", "body.source_id template_variable_missing first_name"},
			{"tel,first_name\n+14155550201,Ada\n", "body.source_id csv_no_phone_column phone_number"},
			{"phone_number,first_name,first_name\n+14155550201,Ada,A\n", "body.source_id.row.1 csv_invalid first_name"},
			{"phone_number,first_name\n+14155550201,Ada,extra\n", "body.source_id.row.2 csv_invalid "},
			{"phone_number,first_name\n", "body.source_id csv_empty "},
		} {
			key := ce.upload(ce.keyA, tc.csv)
			ps := problems(t, ce.a(http.MethodPost, campaignsPath, campBody("c", s.workflowID, key)))
			if got := ps[0].loc() + " " + ps[0].Type + " " + ps[0].Column; len(ps) != 1 || got != tc.want {
				t.Errorf("%q: %d problems, the first %q, want one: %q", tc.csv, len(ps), got, tc.want)
			}
		}
	})

	t.Run("more than 100 problems", func(t *testing.T) {
		key := ce.upload(ce.keyA, many.String())
		ps := problems(t, ce.a(http.MethodPost, campaignsPath, campBody("c", s.workflowID, key)))
		if len(ps) != 101 {
			t.Fatalf("%d problems, want 100 and one summary", len(ps))
		}
		for i, p := range ps[:100] {
			if p.loc() != src(i+2) || p.Type != "phone_invalid" {
				t.Fatalf("problem %d = %s %s, want %s phone_invalid", i, p.loc(), p.Type, src(i+2))
			}
		}
		last := ps[100]
		if last.loc() != "body.source_id" || last.Type != "too_many_problems" || last.Msg != "Value error, 50 more problems not listed" ||
			!equalJSON(last.Ctx, map[string]any{"omitted": 50}) {
			t.Errorf("summary = %+v, want body.source_id too_many_problems \"Value error, 50 more problems not listed\" ctx omitted 50", last)
		}
	})

	t.Run("object not found", func(t *testing.T) {
		otherKey := ce.upload(ce.keyB, campCSV(1)) // exists, but in organization B
		missing := fmt.Sprintf("campaigns/%d/00000000-0000-4000-8000-000000000000_contacts.csv", ce.orgA)
		for _, key := range []string{missing, otherKey, "contacts.csv", fmt.Sprintf("campaigns/%d/../%d/x.csv", ce.orgA, ce.orgB)} {
			wantExactProblems(t, ce.a(http.MethodPost, campaignsPath, campBody("c", s.workflowID, key)), wantProblem{
				loc: "body.source_id", typ: "object_not_found", input: key,
				msg: "Value error, nothing was uploaded at this key in this organization"})
		}
		// source_url is the same field.
		wantProblems(t, ce.a(http.MethodPost, campaignsPath, with(without(campBody("c", s.workflowID, ""), "source_id"), "source_url", missing)),
			"body.source_id object_not_found")
	})

	t.Run("invalid workflow", func(t *testing.T) {
		key := ce.upload(ce.keyA, campCSV(1))
		ps := wantProblems(t, ce.a(http.MethodPost, campaignsPath, campBody("c", invalidWF, key)), "body.workflow_id workflow_invalid")
		want := fmt.Sprintf("Value error, workflow %d is not valid; fix it (POST /api/v1/workflow/%d/validate lists the problems)", invalidWF, invalidWF)
		if ps[0].Msg != want || len(objects(t, ps[0].Ctx["errors"])) == 0 {
			t.Errorf("problem = %+v, want msg %q and ctx.errors listing the validation errors", ps[0], want)
		}
	})

	if after := ce.rowCounts(); !equalJSON(after, before) {
		t.Errorf("rejected creates stored rows: %v, before %v", after, before)
	}
	if ids := ce.campaignIDs(ce.keyA); len(ids) != 0 {
		t.Errorf("campaigns = %v after rejected creates, want none", ids)
	}
}

// TestCampaignCreateCSVAccepted checks what a good file becomes: numbers
// in E.164, the header matched case-insensitively after a BOM, the
// timezone column, and contacts copied at create.
func TestCampaignCreateCSVAccepted(t *testing.T) {
	t.Parallel()
	ce := newCampEnv(t, campOpts{})
	s := ce.setup(false)
	csv := "\ufeff Phone_Number ,first_name,timezone\n(415) 555-0201,Ada,Asia/Tokyo\n\n+44 20 7946 0958,Bo,\n"
	key := ce.upload(ce.keyA, csv)
	c := ce.createCampaign(ce.keyA, campBody("c", s.workflowID, key, "default_country", "US"))
	cid := id(t, c, "id")
	if c["total_rows"] != 2.0 || c["total_queued_count"] != 2.0 || c["default_country"] != "US" {
		t.Errorf("total_rows %v, total_queued_count %v, default_country %v; want 2, 2, US", c["total_rows"], c["total_queued_count"], c["default_country"])
	}
	calls := ce.calls(cid, "")
	var got []string
	for _, a := range calls {
		got = append(got, fmt.Sprintf("%v/%v/%v", a["contact_row"], a["phone_number"], a["attempt"]))
	}
	if want := []string{"2/+14155550201/1", "3/+442079460958/1"}; fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("attempts = %v, want %v (the header is row 1; blank lines are not rows)", got, want)
	}
	// Overwriting the object later changes nothing: the contacts were stored.
	p := ce.presign(ce.keyA, "again.csv", 10)
	put(t, p.URL, "text/csv", strings.NewReader("garbage!!\n"))
	status, _, report := ce.getRaw(ce.keyA, campaignOp(cid, "report"))
	if want := "Phone_Number,first_name,timezone,outcome,attempts,last_call_at,duration_seconds,answered_by,suppression,local_time,abandoned,answer_to_first_audio_ms\n" +
		"+14155550201,Ada,Asia/Tokyo,,0,,,,,,,\n+442079460958,Bo,,,0,,,,,,,\n"; status != http.StatusOK || report != want {
		t.Errorf("report = %d\n%s\nwant 200\n%s", status, report, want)
	}
}

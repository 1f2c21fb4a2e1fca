package web_test

import (
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"
)

// campaignEndpoints are every route under /campaign/{campaign_id}.
var campaignEndpoints = []struct{ method, op string }{
	{http.MethodGet, ""}, {http.MethodPatch, ""}, {http.MethodPost, "start"}, {http.MethodPost, "pause"},
	{http.MethodPost, "resume"}, {http.MethodPost, "cancel"}, {http.MethodPost, "redial"},
	{http.MethodGet, "calls"}, {http.MethodGet, "logs"}, {http.MethodGet, "report"},
}

func endpointPath(raw, op string) string {
	if op == "" {
		return campaignsPath + "/" + raw
	}
	return campaignsPath + "/" + raw + "/" + op
}

func TestCampaignList(t *testing.T) {
	t.Parallel()
	ce := newCampEnv(t, campOpts{})
	s := ce.setup(false)
	key := ce.upload(ce.keyA, campCSV(1))
	var ids []int64
	for i := 0; i < 5; i++ {
		ids = append(ids, id(t, ce.createCampaign(ce.keyA, campBody(fmt.Sprintf("c%d", i), s.workflowID, key)), "id"))
	}
	list := func(query string) []int64 {
		t.Helper()
		r := ce.a(http.MethodGet, campaignsPath+query, nil)
		wantStatus(t, r, http.StatusOK)
		if m := r.obj(t); len(m) != 1 {
			t.Errorf("list keys = %v, want only campaigns", keys(m))
		}
		var out []int64
		for _, c := range objects(t, r.obj(t)["campaigns"]) {
			if !sameSet(keys(c), campaignKeys) {
				t.Errorf("listed campaign keys = %v, want the full resource", keys(c))
			}
			out = append(out, id(t, c, "id"))
		}
		return out
	}
	cases := []struct {
		query string
		want  []int64
	}{
		{"", []int64{ids[4], ids[3], ids[2], ids[1], ids[0]}},
		{"?limit=2", []int64{ids[4], ids[3]}},
		{fmt.Sprintf("?limit=2&before_id=%d", ids[3]), []int64{ids[2], ids[1]}},
		{fmt.Sprintf("?limit=2&before_id=%d", ids[1]), []int64{ids[0]}},
		{fmt.Sprintf("?before_id=%d", ids[0]), nil},
		{"?limit=200&before_id=0", []int64{ids[4], ids[3], ids[2], ids[1], ids[0]}},
		{"?limit=1", []int64{ids[4]}},
		{"?limit=", []int64{ids[4], ids[3], ids[2], ids[1], ids[0]}},
	}
	for _, tc := range cases {
		if got := list(tc.query); fmt.Sprint(got) != fmt.Sprint(tc.want) {
			t.Errorf("list%s = %v, want %v", tc.query, got, tc.want)
		}
	}
	r := ce.b(http.MethodGet, campaignsPath, nil)
	wantStatus(t, r, http.StatusOK)
	if string(r.Raw) != "{\"campaigns\":[]}\n" {
		t.Errorf("organization B lists %s, want no campaigns", r.Raw)
	}

	bad := []struct {
		query string
		want  []string
	}{
		{"?limit=0", []string{"query.limit greater_than_equal"}},
		{"?limit=201", []string{"query.limit less_than_equal"}},
		{"?limit=ten", []string{"query.limit int_parsing"}},
		{"?limit=1.5", []string{"query.limit int_parsing"}},
		{"?before_id=-1", []string{"query.before_id greater_than_equal"}},
		{"?before_id=x", []string{"query.before_id int_parsing"}},
		{"?limit=-5&before_id=x", []string{"query.limit greater_than_equal", "query.before_id int_parsing"}},
	}
	for _, tc := range bad {
		wantProblems(t, ce.a(http.MethodGet, campaignsPath+tc.query, nil), tc.want...)
	}
	wantExactProblems(t, ce.a(http.MethodGet, campaignsPath+"?limit=500", nil), wantProblem{loc: "query.limit",
		typ: "less_than_equal", msg: "Input should be less than or equal to 200", input: "500", ctx: map[string]any{"le": 200}})
}

// TestCampaignOtherOrganization: every campaign endpoint answers another
// organization's campaign exactly as a campaign that does not exist, and
// changes nothing.
func TestCampaignOtherOrganization(t *testing.T) {
	t.Parallel()
	ce := newCampEnv(t, campOpts{})
	s := ce.setup(false)
	cid := ce.newCampaign(s, 2)
	ce.twilioConfig(ce.keyB, "b", true, false)
	before := ce.campaign(cid)
	for _, ep := range campaignEndpoints {
		for _, tc := range []struct {
			key, raw, detail string
		}{
			{ce.keyB, itoa(cid), fmt.Sprintf("campaign %d not found", cid)},
			{ce.keyA, "424242", "campaign 424242 not found"},
			{ce.keyA, "99999999999999999999", "campaign not found"},
		} {
			var body any
			if ep.method != http.MethodGet {
				body = map[string]any{}
			}
			r := ce.do(ep.method, endpointPath(tc.raw, ep.op), tc.key, body)
			wantDetail(t, r, http.StatusNotFound, tc.detail)
		}
	}
	if after := ce.campaign(cid); !equalJSON(after, before) {
		t.Errorf("campaign changed through another organization's requests:\n%v\nwas\n%v", after, before)
	}
}

func TestCampaignPathIDs(t *testing.T) {
	t.Parallel()
	ce := newCampEnv(t, campOpts{})
	for _, ep := range campaignEndpoints {
		for _, raw := range []string{"abc", "1.5", "0x10", "%20"} {
			var body any
			if ep.method != http.MethodGet {
				body = map[string]any{}
			}
			r := ce.a(ep.method, endpointPath(raw, ep.op), body)
			input, _ := url.PathUnescape(raw)
			wantExactProblems(t, r, wantProblem{loc: "path.campaign_id", typ: "int_parsing", input: input,
				msg: "Input should be a valid integer, unable to parse string as an integer"})
		}
	}
	// A bad id and a bad body are reported together.
	r := ce.a(http.MethodPatch, endpointPath("x", ""), rawBody(`[1]`))
	wantProblems(t, r, "path.campaign_id int_parsing", "body model_type")
	r = ce.a(http.MethodPost, endpointPath("x", "redial"), rawBody(`{"name":""`))
	wantProblems(t, r, "path.campaign_id int_parsing", "body.10 json_invalid")
	r = ce.a(http.MethodGet, endpointPath("x", "calls")+"?state=ringing", nil)
	wantProblems(t, r, "path.campaign_id int_parsing", "query.state enum")
}

func TestCampaignPatch(t *testing.T) {
	t.Parallel()
	ce := newCampEnv(t, campOpts{})
	s := ce.setup(false)
	cid := ce.newCampaign(s, 2, "retry_config", map[string]any{"max_retries": 3}, "schedule_config",
		map[string]any{"timezone": "UTC", "slots": []any{map[string]any{"day_of_week": 0, "start_time": "09:00", "end_time": "17:00"}}})
	orig := ce.campaign(cid)
	sched := map[string]any{"enabled": true, "timezone": "Asia/Tokyo", "slots": []any{
		map[string]any{"day_of_week": 5, "start_time": "10:00", "end_time": "24:00"}}}
	steps := []struct {
		name string
		body map[string]any
		want map[string]any
	}{
		{"empty body changes nothing", map[string]any{}, nil},
		{"name", map[string]any{"name": "renamed"}, map[string]any{"name": "renamed"}},
		{"null name is unchanged", map[string]any{"name": nil}, map[string]any{"name": "renamed"}},
		{"retry_config merges", map[string]any{"retry_config": map[string]any{"retry_on_busy": false}},
			map[string]any{"retry_config": with(defaultRetry, "max_retries", 3.0, "retry_on_busy", false)}},
		{"concurrency and rate", map[string]any{"max_concurrency": 1000, "rate_limit_per_second": 0.1},
			map[string]any{"max_concurrency": 1000.0, "rate_limit_per_second": 0.1}},
		{"schedule replaced", map[string]any{"schedule_config": sched}, map[string]any{"schedule_config": sched}},
		{"breaker merges", map[string]any{"circuit_breaker": map[string]any{"enabled": true, "min_calls_in_window": 20}},
			map[string]any{"circuit_breaker": with(defaultBreaker, "enabled", true, "min_calls_in_window", 20.0)}},
		{"schedule cleared", map[string]any{"schedule_config": nil}, map[string]any{"schedule_config": nil}},
		{"other fields ignored", map[string]any{"workflow_id": 999, "source_id": "x", "state": "completed", "total_rows": 9,
			"default_country": "US", "telephony_configuration_id": 999}, nil},
	}
	cur := orig
	for _, st := range steps {
		r := ce.a(http.MethodPatch, campaignPath(cid), st.body)
		wantStatus(t, r, http.StatusOK)
		got := r.obj(t)
		for _, k := range campaignKeys {
			want, changed := st.want[k]
			if !changed {
				want = cur[k]
			}
			if !equalJSON(got[k], want) {
				t.Errorf("%s: %s = %v, want %v", st.name, k, got[k], want)
			}
		}
		if !equalJSON(ce.campaign(cid), got) {
			t.Errorf("%s: GET differs from the PATCH answer", st.name)
		}
		cur = got
	}

	bad := []struct {
		body map[string]any
		want []string
	}{
		{map[string]any{"name": ""}, []string{"body.name string_too_short"}},
		{map[string]any{"name": strings.Repeat("x", 256)}, []string{"body.name string_too_long"}},
		{map[string]any{"max_concurrency": 0, "rate_limit_per_second": 1001}, []string{"body.max_concurrency greater_than_equal", "body.rate_limit_per_second less_than_equal"}},
		{map[string]any{"retry_config": map[string]any{"max_retries": 11, "retry_delay_seconds": 10}},
			[]string{"body.retry_config.max_retries less_than_equal", "body.retry_config.retry_delay_seconds greater_than_equal"}},
		{map[string]any{"schedule_config": map[string]any{"timezone": "Nowhere/City", "slots": []any{}}},
			[]string{"body.schedule_config.timezone value_error", "body.schedule_config.slots too_short"}},
		{map[string]any{"circuit_breaker": map[string]any{"failure_threshold": 2, "window_seconds": 5}},
			[]string{"body.circuit_breaker.failure_threshold less_than_equal", "body.circuit_breaker.window_seconds greater_than_equal"}},
		{map[string]any{"retry_config": []any{}}, []string{"body.retry_config model_type"}},
	}
	for _, tc := range bad {
		wantProblems(t, ce.a(http.MethodPatch, campaignPath(cid), tc.body), tc.want...)
	}
	wantProblems(t, ce.a(http.MethodPatch, campaignPath(cid), rawBody(``)), "body missing")
	wantProblems(t, ce.a(http.MethodPatch, campaignPath(cid), rawBody(`"x"`)), "body model_type")
	if !equalJSON(ce.campaign(cid), cur) {
		t.Errorf("rejected PATCHes changed the campaign")
	}

	// Running and paused campaigns can change; cancelled ones cannot.
	for _, op := range []string{"start", "pause"} {
		wantStatus(t, ce.a(http.MethodPost, campaignOp(cid, op), nil), http.StatusOK)
		r := ce.a(http.MethodPatch, campaignPath(cid), map[string]any{"max_concurrency": 5})
		wantStatus(t, r, http.StatusOK)
		if r.obj(t)["max_concurrency"] != 5.0 {
			t.Errorf("after %s: max_concurrency = %v, want 5", op, r.obj(t)["max_concurrency"])
		}
	}
	wantStatus(t, ce.a(http.MethodPost, campaignOp(cid, "cancel"), nil), http.StatusOK)
	frozen := ce.campaign(cid)
	wantDetail(t, ce.a(http.MethodPatch, campaignPath(cid), map[string]any{"name": "late"}), http.StatusConflict,
		fmt.Sprintf("campaign %d is cancelled; only draft, running or paused campaigns can be changed", cid))
	if !equalJSON(ce.campaign(cid), frozen) {
		t.Errorf("a refused PATCH changed the cancelled campaign")
	}
}

// TestCampaignStateMachine tries every operation from every state the API
// can reach without dialing (completed is covered by the engine test).
func TestCampaignStateMachine(t *testing.T) {
	t.Parallel()
	ce := newCampEnv(t, campOpts{})
	s := ce.setup(false)
	key := ce.upload(ce.keyA, campCSV(1))
	// reach returns a new campaign brought to state by ops.
	reach := map[string][]string{"draft": nil, "running": {"start"}, "paused": {"start", "pause"},
		"cancelled": {"cancel"}, "cancelled while running": {"start", "cancel"}, "cancelled while paused": {"start", "pause", "cancel"}}
	needs := map[string]string{"start": "a draft or paused campaign", "pause": "a running campaign",
		"resume": "a paused campaign", "cancel": "a draft, running or paused campaign"}
	allowed := map[string]map[string]string{
		"draft":   {"start": "running", "cancel": "cancelled"},
		"running": {"pause": "paused", "cancel": "cancelled"},
		"paused":  {"start": "running", "resume": "running", "cancel": "cancelled"},
	}
	events := map[string]string{"start": "campaign_started", "pause": "campaign_paused", "resume": "campaign_resumed", "cancel": "campaign_cancelled"}
	for from, path := range reach {
		state := strings.Fields(from)[0]
		for _, op := range []string{"start", "pause", "resume", "cancel"} {
			cid := id(t, ce.createCampaign(ce.keyA, campBody(from+" "+op, s.workflowID, key)), "id")
			for _, step := range path {
				ce.clock.advance(time.Second)
				wantStatus(t, ce.a(http.MethodPost, campaignOp(cid, step), nil), http.StatusOK)
			}
			before := ce.campaign(cid)
			ce.clock.advance(time.Second)
			lo := ce.clock.now().Truncate(time.Millisecond)
			r := ce.a(http.MethodPost, campaignOp(cid, op), nil)
			hi := ce.clock.now()
			to, ok := allowed[state][op]
			if !ok {
				wantDetail(t, r, http.StatusConflict, fmt.Sprintf("campaign %d is %s; %s needs %s", cid, state, op, needs[op]))
				if after := ce.campaign(cid); !equalJSON(after, before) {
					t.Errorf("%s → %s: a refused operation changed the campaign", from, op)
				}
				continue
			}
			wantStatus(t, r, http.StatusOK)
			c := r.obj(t)
			if c["state"] != to {
				t.Errorf("%s → %s: state = %v, want %s", from, op, c["state"], to)
			}
			logs := objects(t, c["logs"])
			if n := len(objects(t, before["logs"])); len(logs) != n+1 {
				t.Fatalf("%s → %s: %d log entries, want %d", from, op, len(logs), n+1)
			}
			last := logs[len(logs)-1]
			at, err := time.Parse(time.RFC3339Nano, fmt.Sprint(last["ts"]))
			if last["event"] != events[op] || last["level"] != "info" || !equalJSON(last["details"], map[string]any{"from_state": state}) ||
				err != nil || at.Before(lo) || at.After(hi) {
				t.Errorf("%s → %s: last log = %v, want %s at the current time with details.from_state %s", from, op, last, events[op], state)
			}
			switch {
			case op == "start" && state == "draft":
				if c["started_at"] != last["ts"] {
					t.Errorf("started_at = %v, want %v", c["started_at"], last["ts"])
				}
			case op == "start" && state == "paused":
				if c["started_at"] != before["started_at"] {
					t.Errorf("restart changed started_at from %v to %v", before["started_at"], c["started_at"])
				}
			case op == "cancel":
				if c["cancelled_at"] != last["ts"] || c["completed_at"] != nil {
					t.Errorf("cancelled_at = %v, completed_at = %v; want %v and null", c["cancelled_at"], c["completed_at"], last["ts"])
				}
			}
		}
	}
}

// TestCampaignStartNeedsCallerID: providers other than ari need a number
// to call from.
func TestCampaignStartNeedsCallerID(t *testing.T) {
	t.Parallel()
	ce := newCampEnv(t, campOpts{})
	wf := ce.workflow(ce.keyA, "flow", campDefinition)
	cfg := ce.twilioConfig(ce.keyA, "bare", true, false)
	key := ce.upload(ce.keyA, campCSV(1))
	cid := id(t, ce.createCampaign(ce.keyA, campBody("c", wf, key)), "id")
	noNumber := fmt.Sprintf("telephony configuration %d has no phone number to call from", cfg)
	wantDetail(t, ce.a(http.MethodPost, campaignOp(cid, "start"), nil), http.StatusConflict, noNumber)

	// An inactive number does not count.
	nid := ce.callerID(ce.keyA, cfg, campCallerID)
	wantStatus(t, ce.a(http.MethodPut, numberPath(cfg, nid), map[string]any{"is_active": false}), http.StatusOK)
	wantDetail(t, ce.a(http.MethodPost, campaignOp(cid, "start"), nil), http.StatusConflict, noNumber)
	if c := ce.campaign(cid); c["state"] != "draft" || len(objects(t, c["logs"])) != 0 || c["started_at"] != nil {
		t.Errorf("a refused start changed the campaign: %v", c)
	}

	// Resuming needs one too (the number may have gone while paused).
	wantStatus(t, ce.a(http.MethodPut, numberPath(cfg, nid), map[string]any{"is_active": true}), http.StatusOK)
	wantStatus(t, ce.a(http.MethodPost, campaignOp(cid, "start"), nil), http.StatusOK)
	wantStatus(t, ce.a(http.MethodPost, campaignOp(cid, "pause"), nil), http.StatusOK)
	wantStatus(t, ce.a(http.MethodDelete, numberPath(cfg, nid), nil), http.StatusNoContent)
	wantDetail(t, ce.a(http.MethodPost, campaignOp(cid, "resume"), nil), http.StatusConflict, noNumber)
	wantDetail(t, ce.a(http.MethodPost, campaignOp(cid, "start"), nil), http.StatusConflict, noNumber)
	// A state that does not allow the operation is the answer first.
	wantStatus(t, ce.a(http.MethodPost, campaignOp(cid, "cancel"), nil), http.StatusOK)
	wantDetail(t, ce.a(http.MethodPost, campaignOp(cid, "start"), nil), http.StatusConflict,
		fmt.Sprintf("campaign %d is cancelled; start needs a draft or paused campaign", cid))

	// ari dials without a caller id.
	ari := id(t, ce.createConfig(ce.keyA, "pbx", false, validConfig("ari")), "id")
	cid = id(t, ce.createCampaign(ce.keyA, campBody("ari", wf, key, "telephony_configuration_id", ari)), "id")
	r := ce.a(http.MethodPost, campaignOp(cid, "start"), nil)
	wantStatus(t, r, http.StatusOK)
	if r.obj(t)["state"] != "running" || r.obj(t)["rate_limit_per_second"] != 10.0 {
		t.Errorf("ari campaign = %s, want running at ari's default 10 calls/s", r.Raw)
	}
}

func TestCampaignLogs(t *testing.T) {
	t.Parallel()
	ce := newCampEnv(t, campOpts{})
	s := ce.setup(false)
	cid := ce.newCampaign(s, 1)
	for _, op := range []string{"start", "pause", "resume", "pause", "start", "cancel"} {
		ce.clock.advance(1500 * time.Millisecond)
		wantStatus(t, ce.a(http.MethodPost, campaignOp(cid, op), nil), http.StatusOK)
	}
	want := []string{"campaign_started", "campaign_paused", "campaign_resumed", "campaign_paused", "campaign_started", "campaign_cancelled"}
	get := func(query string) []map[string]any {
		t.Helper()
		r := ce.a(http.MethodGet, campaignOp(cid, "logs")+query, nil)
		wantStatus(t, r, http.StatusOK)
		if len(r.obj(t)) != 1 {
			t.Errorf("logs answer keys = %v, want only logs", keys(r.obj(t)))
		}
		return objects(t, r.obj(t)["logs"])
	}
	all := get("")
	if got := logEvents(t, all); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("events = %v, want %v", got, want)
	}
	for i, l := range all {
		if !sameSet(keys(l), []string{"ts", "level", "event", "message", "details"}) {
			t.Errorf("log %d keys = %v", i, keys(l))
		}
		if i > 0 && fmt.Sprint(l["ts"]) <= fmt.Sprint(all[i-1]["ts"]) {
			t.Errorf("log %d at %v is not after %v", i, l["ts"], all[i-1]["ts"])
		}
	}
	if c := ce.campaign(cid); !equalJSON(c["logs"], all) {
		t.Errorf("the campaign's logs = %v, want the same entries %v", c["logs"], all)
	}
	cases := []struct {
		query string
		want  []string
	}{
		{"?limit=2", want[:2]},
		{"?after=" + url.QueryEscape(fmt.Sprint(all[1]["ts"])), want[2:]},
		{"?after=" + url.QueryEscape(fmt.Sprint(all[1]["ts"])) + "&limit=3", want[2:5]},
		{"?after=" + url.QueryEscape(fmt.Sprint(all[5]["ts"])), nil},
		{"?after=2000-01-01T00:00:00Z", want},
		{"?after=" + url.QueryEscape("2000-01-01T01:00:00+01:00"), want},
	}
	for _, tc := range cases {
		if got := logEvents(t, get(tc.query)); fmt.Sprint(got) != fmt.Sprint(tc.want) {
			t.Errorf("logs%s = %v, want %v", tc.query, got, tc.want)
		}
	}
	bad := []struct {
		query string
		want  []string
	}{
		{"?after=yesterday", []string{"query.after datetime_from_date_parsing"}},
		{"?limit=0", []string{"query.limit greater_than_equal"}},
		{"?limit=1001&after=1", []string{"query.limit less_than_equal", "query.after datetime_from_date_parsing"}},
	}
	for _, tc := range bad {
		wantProblems(t, ce.a(http.MethodGet, campaignOp(cid, "logs")+tc.query, nil), tc.want...)
	}
}

// TestCampaignRedialStates: redial needs a completed or cancelled
// campaign (the engine test redials completed ones).
func TestCampaignRedialStates(t *testing.T) {
	t.Parallel()
	ce := newCampEnv(t, campOpts{})
	s := ce.setup(false)
	cid := ce.newCampaign(s, 2)
	for _, step := range []struct{ op, state string }{{"", "draft"}, {"start", "running"}, {"pause", "paused"}} {
		if step.op != "" {
			wantStatus(t, ce.a(http.MethodPost, campaignOp(cid, step.op), nil), http.StatusOK)
		}
		wantDetail(t, ce.a(http.MethodPost, campaignOp(cid, "redial"), nil), http.StatusConflict,
			fmt.Sprintf("campaign %d is %s; redial needs a completed or cancelled campaign", cid, step.state))
		wantDetail(t, ce.a(http.MethodDelete, configPath(s.configID), nil), http.StatusConflict,
			fmt.Sprintf("telephony configuration %d is used by 1 draft, running or paused campaign", s.configID))
	}
	wantStatus(t, ce.a(http.MethodPost, campaignOp(cid, "cancel"), nil), http.StatusOK)
	before := ce.rowCounts()
	noMatch := fmt.Sprintf("no contact of campaign %d has a matching final outcome", cid)
	wantDetail(t, ce.a(http.MethodPost, campaignOp(cid, "redial"), nil), http.StatusConflict, noMatch)
	// No body at all, sent chunked, is no body.
	req, _ := http.NewRequest(http.MethodPost, ce.srv.URL+campaignOp(cid, "redial"), io.MultiReader(strings.NewReader("")))
	req.Header.Set("X-API-Key", ce.keyA)
	if req.ContentLength != -1 && req.ContentLength != 0 || req.GetBody != nil {
		t.Fatalf("request would not be sent chunked")
	}
	if status, body, _ := ce.hookDo(req); status != http.StatusConflict || body != fmt.Sprintf("{\"detail\":%q}\n", noMatch) {
		t.Errorf("chunked empty body: %d %s, want 409 %s", status, body, noMatch)
	}
	wantDetail(t, ce.a(http.MethodPost, campaignOp(cid, "redial"), rawBody(" \n")), http.StatusConflict, noMatch)
	wantDetail(t, ce.a(http.MethodPost, campaignOp(cid, "redial"), map[string]any{"retry_on_failed": true}), http.StatusConflict, noMatch)
	wantProblems(t, ce.a(http.MethodPost, campaignOp(cid, "redial"), rawBody(`[]`)), "body model_type")
	wantProblems(t, ce.a(http.MethodPost, campaignOp(cid, "redial"), map[string]any{"retry_on_voicemail": 2, "retry_on_failed": "x"}),
		"body.retry_on_voicemail bool_parsing", "body.retry_on_failed bool_parsing")
	// A refused redial's hidden campaign is purged in the background.
	for deadline := time.Now().Add(5 * time.Second); !equalJSON(ce.rowCounts(), before) && time.Now().Before(deadline); {
		time.Sleep(2 * time.Millisecond)
	}
	if after := ce.rowCounts(); !equalJSON(after, before) {
		t.Errorf("refused redials stored rows: %v, before %v", after, before)
	}
	if c := ce.campaign(cid); c["redialed_campaign_id"] != nil {
		t.Errorf("redialed_campaign_id = %v after refused redials", c["redialed_campaign_id"])
	}

	// A finished campaign outlives its configuration, but cannot be
	// redialed without it.
	wantStatus(t, ce.a(http.MethodDelete, configPath(s.configID), nil), http.StatusNoContent)
	c := ce.campaign(cid)
	if c["telephony_configuration_name"] != "main" || id(t, c, "telephony_configuration_id") != s.configID {
		t.Errorf("configuration of a campaign whose configuration was deleted = %v %v", c["telephony_configuration_id"], c["telephony_configuration_name"])
	}
	wantDetail(t, ce.a(http.MethodPost, campaignOp(cid, "redial"), nil), http.StatusConflict,
		fmt.Sprintf("telephony configuration %d of campaign %d was deleted; create a new campaign instead", s.configID, cid))
}

// TestCampaignRecentLogs: the campaign carries its newest 50 entries; the
// logs endpoint has them all.
func TestCampaignRecentLogs(t *testing.T) {
	t.Parallel()
	ce := newCampEnv(t, campOpts{})
	s := ce.setup(false)
	cid := ce.newCampaign(s, 1)
	wantStatus(t, ce.a(http.MethodPost, campaignOp(cid, "start"), nil), http.StatusOK)
	for i := 0; i < 30; i++ {
		wantStatus(t, ce.a(http.MethodPost, campaignOp(cid, "pause"), nil), http.StatusOK)
		wantStatus(t, ce.a(http.MethodPost, campaignOp(cid, "resume"), nil), http.StatusOK)
	}
	r := ce.a(http.MethodGet, campaignOp(cid, "logs")+"?limit=1000", nil)
	wantStatus(t, r, http.StatusOK)
	all := objects(t, r.obj(t)["logs"])
	recent := objects(t, ce.campaign(cid)["logs"])
	if len(all) != 61 || len(recent) != 50 || !equalJSON(recent, all[11:]) {
		t.Errorf("%d entries, %d on the campaign; want 61 and the newest 50 of them, oldest first", len(all), len(recent))
	}
	if n := len(objects(t, ce.a(http.MethodGet, campaignOp(cid, "logs"), nil).obj(t)["logs"])); n != 61 {
		t.Errorf("default limit returned %d entries, want all 61 (default 100)", n)
	}
}

// TestCampaignOpenAPISchemas checks the OpenAPI schemas of the campaign
// resources against real answers: every key an answer has is a property,
// and every property is required (always present).
func TestCampaignOpenAPISchemas(t *testing.T) {
	t.Parallel()
	ce := newCampEnv(t, campOpts{})
	s := ce.setup(false)
	cid := ce.newCampaign(s, 1)
	wantStatus(t, ce.a(http.MethodPost, campaignOp(cid, "start"), nil), http.StatusOK)
	c := ce.campaign(cid)
	doc := openAPIDoc(t)
	// optional are the properties only some requests ask for (the calls'
	// contact, with ?columns=): answer has them, the plain answer and the
	// required list do not.
	check := func(schema string, answer map[string]any, optional ...string) {
		t.Helper()
		sc, _ := openAPIDig(doc, "components", "schemas", schema).(map[string]any)
		props, _ := sc["properties"].(map[string]any)
		if got, want := keys(answer), openAPIKeys(props); !sameSet(got, want) {
			t.Errorf("%s: answer keys %v, schema properties %v", schema, got, want)
		}
		always := without(props, optional...)
		if req := openAPIStrings(sc["required"]); !sameSet(req, openAPIKeys(always)) {
			t.Errorf("%s: required %v, want every property but %v", schema, req, optional)
		}
	}
	check("Campaign", c)
	check("CampaignLog", objects(t, c["logs"])[0])
	check("CallAttempt", ce.calls(cid, "?columns=first_name")[0], "contact")
	if plain := ce.calls(cid, "")[0]; !sameSet(keys(plain), openAPIStrings(openAPIDig(doc, "components", "schemas", "CallAttempt", "required"))) {
		t.Errorf("CallAttempt without ?columns=: keys %v, want the required ones", keys(plain))
	}
	if !sameSet(campaignKeys, keys(c)) {
		t.Errorf("campaign keys %v, want %v", keys(c), campaignKeys)
	}
}

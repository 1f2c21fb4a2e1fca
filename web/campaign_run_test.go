package web_test

import (
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/outdial/outdial/dialer/carrier/twiliosim"
)

// runScript is the simulator's behaviour per callee in the engine tests:
//
//	campPhone(1) a person, 7 s of talk
//	campPhone(2) busy, then a person (3 s) on the retry
//	campPhone(3) no answer, every time
//	campPhone(4) failed
//	campPhone(5) an answering machine (2 s)
//	anything else: a person, 1 s
func runScript(ci twiliosim.CallInfo) twiliosim.Script {
	talk := 10 * time.Millisecond
	switch ci.To {
	case campPhone(1):
		return twiliosim.Script{Outcome: twiliosim.Human, TalkDuration: talk, CallDuration: 7}
	case campPhone(2):
		if ci.Attempt == 1 {
			return twiliosim.Script{Outcome: twiliosim.Busy}
		}
		return twiliosim.Script{Outcome: twiliosim.Human, TalkDuration: talk, CallDuration: 3}
	case campPhone(3):
		return twiliosim.Script{Outcome: twiliosim.NoAnswer}
	case campPhone(4):
		return twiliosim.Script{Outcome: twiliosim.Failed}
	case campPhone(5):
		return twiliosim.Script{Outcome: twiliosim.Machine, TalkDuration: talk, CallDuration: 2}
	}
	return twiliosim.Script{Outcome: twiliosim.Human, TalkDuration: talk, CallDuration: 1}
}

// TestCampaignRun runs a campaign against the Twilio simulator through the
// real HTTP path to completion, then reads its calls, logs and report and
// redials it.
func TestCampaignRun(t *testing.T) {
	t.Parallel()
	ce := newCampEnv(t, campOpts{engine: true, script: runScript})
	s := ce.setup(true)
	cid := ce.newCampaign(s, 5, "max_concurrency", 2, "rate_limit_per_second", 1000,
		"retry_config", map[string]any{"max_retries": 1, "retry_delay_seconds": 30})
	r := ce.a(http.MethodPost, campaignOp(cid, "start"), nil)
	wantStatus(t, r, http.StatusOK)
	if r.obj(t)["state"] != "running" {
		t.Fatalf("start answered %s, want a running campaign", r.Raw)
	}

	// First pass: every contact called once; 2 (busy) and 3 (no answer)
	// get a retry due in 30 s.
	ce.waitCalls(cid, "5 done and 2 retries queued", func(list []map[string]any) bool {
		done := 0
		for _, a := range list {
			if a["state"] == "done" {
				done++
			}
		}
		return done == 5 && len(list) == 7
	})
	c := ce.waitCounters(cid, 5, 3, 2, 5, 7)
	if c["state"] != "running" || c["next_dial_at"] != nil {
		t.Errorf("waiting for retries: state %v, next_dial_at %v; want running, null (no calling window)", c["state"], c["next_dial_at"])
	}

	// The retries become due.
	ce.clock.advance(31 * time.Second)
	ce.engine.Wake(cid)
	ce.waitState(cid, "completed")
	c = ce.waitCounters(cid, 5, 5, 3, 7, 7)
	if c["state"] != "completed" || c["completed_at"] == nil || c["cancelled_at"] != nil || c["next_dial_at"] != nil {
		t.Errorf("completed_at %v, cancelled_at %v, next_dial_at %v", c["completed_at"], c["cancelled_at"], c["next_dial_at"])
	}
	if got := logEvents(t, c["logs"]); fmt.Sprint(got) != "[campaign_started campaign_completed]" {
		t.Errorf("log events = %v, want campaign_started, campaign_completed", got)
	}
	if peak := ce.sim.PeakInFlight(); peak > 2 {
		t.Errorf("simulator saw %d calls in flight, max_concurrency is 2", peak)
	}
	for i, want := range map[int]int{1: 1, 2: 2, 3: 2, 4: 1, 5: 1} {
		if got := ce.sim.CreatesTo(campPhone(i)); got != want {
			t.Errorf("%s was called %d times, want %d", campPhone(i), got, want)
		}
	}

	calls := ce.calls(cid, "")
	type row struct {
		contact, attempt    int
		outcome, answeredBy string
		duration            float64
	}
	want := []row{{2, 1, "answered", "human", 7}, {3, 1, "busy", "", 0}, {4, 1, "no_answer", "", 0}, {5, 1, "failed", "", 0},
		{6, 1, "voicemail", "machine_start", 2}, {3, 2, "answered", "human", 3}, {4, 2, "no_answer", "", 0}}
	sids := map[string]bool{}
	for _, rec := range ce.sim.Calls() {
		sids[rec.SID] = true
	}
	callKeys := []string{"id", "contact_row", "phone_number", "attempt", "state", "outcome", "raw_status", "provider_call_id",
		"caller_id", "answered_by", "due_at", "started_at", "answered_at", "ended_at", "duration_seconds", "error", "compliance",
		"answer_to_first_audio_ms", "abandoned"}
	got := make([]row, len(calls))
	for i, a := range calls {
		if !sameSet(keys(a), callKeys) {
			t.Errorf("call keys = %v, want %v", keys(a), callKeys)
		}
		if ev, _ := a["compliance"].(map[string]any); ev["suppression"] != "clear" || ev["local_time"] == nil {
			t.Errorf("call %d: compliance = %v, want the evidence of a clear number with its local time", i, a["compliance"])
		}
		ab, _ := a["answered_by"].(string)
		got[i] = row{int(num(t, a, "contact_row")), int(num(t, a, "attempt")), fmt.Sprint(a["outcome"]), ab, num(t, a, "duration_seconds")}
		if a["state"] != "done" || a["caller_id"] != campCallerID || !sids[fmt.Sprint(a["provider_call_id"])] ||
			a["phone_number"] != campPhone(got[i].contact-1) || a["error"] != nil || a["started_at"] == nil || a["ended_at"] == nil {
			t.Errorf("call %d = %v", i, a)
		}
		if answered := got[i].outcome == "answered" || got[i].outcome == "voicemail"; answered != (a["answered_at"] != nil) {
			t.Errorf("call %d: outcome %s with answered_at %v", i, got[i].outcome, a["answered_at"])
		}
	}
	// Retries are dialled after every first attempt, so the order is fixed
	// except among calls in flight together: compare as sets.
	if !sameSet(rowStrings(got), rowStrings(want)) {
		t.Errorf("calls = %v, want %v", got, want)
	}
	first, last := id(t, calls[0], "id"), id(t, calls[6], "id")

	filters := []struct {
		query string
		n     int
	}{
		{"?outcome=answered", 2}, {"?outcome=no_answer", 2}, {"?outcome=busy", 1}, {"?outcome=unknown", 0},
		{"?state=done", 7}, {"?state=queued", 0}, {"?limit=2", 2}, {"?limit=1000", 7},
		{fmt.Sprintf("?after_id=%d", first), 6}, {fmt.Sprintf("?after_id=%d", last), 0},
		{fmt.Sprintf("?after_id=%d&limit=3", first), 3}, {"?outcome=no_answer&state=done&limit=1", 1},
	}
	for _, f := range filters {
		list := ce.calls(cid, f.query)
		if len(list) != f.n {
			t.Errorf("calls%s: %d, want %d", f.query, len(list), f.n)
		}
		for i := 1; i < len(list); i++ {
			if id(t, list[i], "id") <= id(t, list[i-1], "id") {
				t.Errorf("calls%s are not in id order", f.query)
			}
		}
	}
	outcomes := "'answered', 'voicemail', 'busy', 'no_answer', 'failed', 'canceled', 'unknown' or 'suppressed'"
	wantExactProblems(t, ce.a(http.MethodGet, campaignOp(cid, "calls")+"?outcome=happy", nil), wantProblem{loc: "query.outcome",
		typ: "enum", msg: "Input should be " + outcomes, input: "happy", ctx: map[string]any{"expected": outcomes}})
	for query, want := range map[string][]string{
		"?state=ringing":           {"query.state enum"},
		"?limit=0":                 {"query.limit greater_than_equal"},
		"?limit=1001":              {"query.limit less_than_equal"},
		"?after_id=-1&limit=x":     {"query.after_id greater_than_equal", "query.limit int_parsing"},
		"?outcome=Answered&state=": {"query.outcome enum"},
	} {
		wantProblems(t, ce.a(http.MethodGet, campaignOp(cid, "calls")+query, nil), want...)
	}

	// The report: one row per contact, the original columns, then the
	// result, last_call_at being the start of the contact's last call.
	status, hdr, body := ce.getRaw(ce.keyA, campaignOp(cid, "report"))
	if status != http.StatusOK || hdr.Get("Content-Type") != "text/csv; charset=utf-8" ||
		hdr.Get("Content-Disposition") != fmt.Sprintf(`attachment; filename="campaign-%d-report.csv"`, cid) {
		t.Errorf("report: %d %q %q", status, hdr.Get("Content-Type"), hdr.Get("Content-Disposition"))
	}
	lastCall, lastLocal := map[float64]string{}, map[float64]string{}
	for _, a := range calls {
		lastCall[num(t, a, "contact_row")] = fmt.Sprint(a["started_at"]) // calls are in id order: the last one wins
		ev, _ := a["compliance"].(map[string]any)
		lastLocal[num(t, a, "contact_row")] = fmt.Sprint(ev["local_time"])
	}
	wantReport := [][]string{{"phone_number", "first_name", "plan", "outcome", "attempts", "last_call_at", "duration_seconds", "answered_by",
		"suppression", "local_time", "abandoned", "answer_to_first_audio_ms"},
		// The workflow speaks its greeting (no agent): audio at the answer.
		{campPhone(1), "Name1", "p1", "answered", "1", lastCall[2], "7", "human", "clear", lastLocal[2], "false", "0"},
		{campPhone(2), "Name2", "p2", "answered", "2", lastCall[3], "3", "human", "clear", lastLocal[3], "false", "0"},
		{campPhone(3), "Name3", "p3", "no_answer", "2", lastCall[4], "0", "", "clear", lastLocal[4], "", ""},
		{campPhone(4), "Name4", "p4", "failed", "1", lastCall[5], "0", "", "clear", lastLocal[5], "", ""},
		{campPhone(5), "Name5", "p5", "voicemail", "1", lastCall[6], "2", "machine_start", "clear", lastLocal[6], "", ""}}
	records, err := csv.NewReader(strings.NewReader(body)).ReadAll()
	if err != nil || fmt.Sprint(records) != fmt.Sprint(wantReport) {
		t.Errorf("report (%v) =\n%s\nwant\n%v", err, body, wantReport)
	}

	// A completed campaign is final.
	for _, op := range []string{"start", "pause", "resume", "cancel"} {
		wantDetailContains(t, ce.a(http.MethodPost, campaignOp(cid, op), nil), http.StatusConflict,
			fmt.Sprintf("campaign %d is completed; %s needs ", cid, op))
	}
	wantDetail(t, ce.a(http.MethodPatch, campaignPath(cid), map[string]any{"max_concurrency": 3}), http.StatusConflict,
		fmt.Sprintf("campaign %d is completed; only draft, running or paused campaigns can be changed", cid))

	testRedial(t, ce, s, cid)
}

func rowStrings[T any](rows []T) []string {
	out := make([]string, len(rows))
	for i, r := range rows {
		out[i] = fmt.Sprint(r)
	}
	return out
}

// testRedial redials completed campaign cid (contacts: answered, answered,
// no_answer, failed, voicemail).
func testRedial(t *testing.T, ce *campEnv, s campSetup, cid int64) {
	parent := ce.campaign(cid)
	wantProblems(t, ce.a(http.MethodPost, campaignOp(cid, "redial"), map[string]any{"retry_on_busy": "sometimes",
		"name": "", "retry_config": map[string]any{"max_retries": 99}}),
		"body.retry_on_busy bool_parsing", "body.name string_too_short", "body.retry_config.max_retries less_than_equal")

	// No body: busy, no_answer and voicemail contacts. Sent four times at
	// once: one redial wins, the others are 409.
	type answer struct {
		status int
		body   []byte
	}
	answers := make(chan answer, 4)
	for range 4 {
		go func() {
			req, _ := http.NewRequest(http.MethodPost, ce.srv.URL+campaignOp(cid, "redial"), nil)
			req.Header.Set("X-API-Key", ce.keyA)
			res, err := http.DefaultClient.Do(req)
			if err != nil {
				answers <- answer{status: -1, body: []byte(err.Error())}
				return
			}
			defer res.Body.Close()
			b, _ := io.ReadAll(res.Body)
			answers <- answer{res.StatusCode, b}
		}()
	}
	var child map[string]any
	conflicts := 0
	for range 4 {
		a := <-answers
		switch a.status {
		case http.StatusOK:
			if child != nil {
				t.Errorf("two concurrent redials succeeded")
			}
			if err := json.Unmarshal(a.body, &child); err != nil {
				t.Fatalf("redial answer: %v", err)
			}
		case http.StatusConflict:
			conflicts++
			if !strings.HasPrefix(string(a.body), fmt.Sprintf(`{"detail":"campaign %d was already redialed as campaign `, cid)) {
				t.Errorf("concurrent redial conflict: %s", a.body)
			}
		default:
			t.Errorf("concurrent redial: %d %s", a.status, a.body)
		}
	}
	if child == nil || conflicts != 3 {
		t.Fatalf("concurrent redials: %d conflicts and child %v; want one redial and 3 conflicts", conflicts, child)
	}
	kid := id(t, child, "id")
	wantChild := map[string]any{"name": "c (redial)", "state": "draft", "parent_campaign_id": float64(cid), "redialed_campaign_id": nil,
		"total_rows": 2.0, "total_queued_count": 2.0, "processed_rows": 0.0, "executed_count": 0.0, "logs": []any{},
		"retry_config": parent["retry_config"], "max_concurrency": 2.0, "rate_limit_per_second": 1000.0,
		"workflow_id": parent["workflow_id"], "telephony_configuration_id": parent["telephony_configuration_id"], "source_id": parent["source_id"]}
	for k, v := range wantChild {
		if !equalJSON(child[k], v) {
			t.Errorf("redial %s = %v, want %v", k, child[k], v)
		}
	}
	if p := ce.campaign(cid); !equalJSON(p["redialed_campaign_id"], float64(kid)) || p["state"] != "completed" {
		t.Errorf("parent redialed_campaign_id = %v, state %v; want %d, completed", p["redialed_campaign_id"], p["state"], kid)
	}
	var got []string
	for _, a := range ce.calls(kid, "") {
		got = append(got, fmt.Sprintf("%v %v %v", a["contact_row"], a["phone_number"], a["state"]))
	}
	if want := []string{"4 " + campPhone(3) + " queued", "6 " + campPhone(5) + " queued"}; fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("redial calls = %v, want %v (rows keep their numbers)", got, want)
	}
	_, _, report := ce.getRaw(ce.keyA, campaignOp(kid, "report"))
	if want := "phone_number,first_name,plan,outcome,attempts,last_call_at,duration_seconds,answered_by,suppression,local_time,abandoned,answer_to_first_audio_ms\n" +
		campPhone(3) + ",Name3,p3,,0,,,,,,,\n" + campPhone(5) + ",Name5,p5,,0,,,,,,,\n"; report != want {
		t.Errorf("redial report =\n%s\nwant\n%s", report, want)
	}
	wantDetail(t, ce.a(http.MethodPost, campaignOp(cid, "redial"), nil), http.StatusConflict,
		fmt.Sprintf("campaign %d was already redialed as campaign %d", cid, kid))
	wantDetail(t, ce.a(http.MethodPost, campaignOp(kid, "redial"), map[string]any{}), http.StatusConflict,
		fmt.Sprintf("campaign %d is draft; redial needs a completed or cancelled campaign", kid))

	// A second campaign: an answered and a failed contact.
	key := ce.upload(ce.keyA, "phone_number,first_name\n"+campPhone(1)+",Ada\n"+campPhone(4)+",Bo\n")
	cid2 := id(t, ce.createCampaign(ce.keyA, campBody("second", s.workflowID, key, "rate_limit_per_second", 1000)), "id")
	wantStatus(t, ce.a(http.MethodPost, campaignOp(cid2, "start"), nil), http.StatusOK)
	ce.waitState(cid2, "completed")
	wantDetail(t, ce.a(http.MethodPost, campaignOp(cid2, "redial"), map[string]any{}), http.StatusConflict,
		fmt.Sprintf("no contact of campaign %d has a matching final outcome", cid2))
	r := ce.a(http.MethodPost, campaignOp(cid2, "redial"), map[string]any{"retry_on_failed": true, "retry_on_busy": false,
		"name": "failed ones", "retry_config": map[string]any{"max_retries": 0}})
	wantStatus(t, r, http.StatusOK)
	child = r.obj(t)
	if child["name"] != "failed ones" || child["total_rows"] != 1.0 || !equalJSON(child["retry_config"], with(defaultRetry, "max_retries", 0.0)) {
		t.Errorf("redial of failed contacts = %s", r.Raw)
	}
	if list := ce.calls(id(t, child, "id"), ""); len(list) != 1 || list[0]["phone_number"] != campPhone(4) {
		t.Errorf("redial calls = %v, want the failed contact only", list)
	}
}

// TestCampaignPauseCancelInFlight: pause and cancel stop new calls at
// once; the calls in flight finish and are recorded.
func TestCampaignPauseCancelInFlight(t *testing.T) {
	t.Parallel()
	ce := newCampEnv(t, campOpts{engine: true, script: ringing})
	s := ce.setup(false)
	noRetry := map[string]any{"enabled": false}
	final := func(cid int64, a map[string]any, status string) {
		t.Helper()
		aid := id(t, a, "id")
		form := ce.statusForm(fmt.Sprint(a["provider_call_id"]), status, 9)
		if code, body, _ := ce.signed(ce.hookURL("twilio", "status", aid, ce.token(aid)), form); code != http.StatusNoContent {
			t.Fatalf("final status: %d %s", code, body)
		}
	}
	ringingCall := func(cid int64, n int) map[string]any {
		t.Helper()
		list := ce.waitCalls(cid, fmt.Sprintf("call %d placed and ringing", n), func(list []map[string]any) bool {
			return len(list) >= n && list[n-1]["raw_status"] == "ringing" && list[n-1]["state"] == "in_flight"
		})
		return list[n-1]
	}

	// Pause: the call in flight ends and is recorded; nothing else is
	// dialled until resume.
	cid := ce.newCampaign(s, 2, "max_concurrency", 1, "rate_limit_per_second", 1000, "retry_config", noRetry)
	wantStatus(t, ce.a(http.MethodPost, campaignOp(cid, "start"), nil), http.StatusOK)
	first := ringingCall(cid, 1)
	r := ce.a(http.MethodPost, campaignOp(cid, "pause"), nil)
	wantStatus(t, r, http.StatusOK)
	final(cid, first, "completed")
	c := ce.campaign(cid)
	wantCounters(t, c, 2, 1, 0, 1, 2)
	if c["state"] != "paused" || ce.sim.Stats().CreateRequests != 1 {
		t.Fatalf("paused campaign: state %v, %d calls placed; want paused, 1", c["state"], ce.sim.Stats().CreateRequests)
	}
	wantStatus(t, ce.a(http.MethodPost, campaignOp(cid, "resume"), nil), http.StatusOK)
	second := ringingCall(cid, 2)
	final(cid, second, "no-answer")
	ce.waitState(cid, "completed")
	c = ce.waitCounters(cid, 2, 2, 1, 2, 2)
	if got := logEvents(t, c["logs"]); fmt.Sprint(got) != "[campaign_started campaign_paused campaign_resumed campaign_completed]" {
		t.Errorf("events = %v", got)
	}

	// The last call ends while paused: the campaign stays paused, and
	// completes as soon as it is resumed.
	cid = ce.newCampaign(s, 1, "rate_limit_per_second", 1000)
	wantStatus(t, ce.a(http.MethodPost, campaignOp(cid, "start"), nil), http.StatusOK)
	only := ringingCall(cid, 1)
	wantStatus(t, ce.a(http.MethodPost, campaignOp(cid, "pause"), nil), http.StatusOK)
	final(cid, only, "completed")
	if c := ce.campaign(cid); c["state"] != "paused" || c["processed_rows"] != 1.0 {
		t.Errorf("state %v, processed_rows %v; want paused, 1", c["state"], c["processed_rows"])
	}
	wantStatus(t, ce.a(http.MethodPost, campaignOp(cid, "resume"), nil), http.StatusOK)
	ce.waitState(cid, "completed")

	// Cancel: the call in flight is recorded, the others never dialled.
	before := ce.sim.Stats().CreateRequests
	cid = ce.newCampaign(s, 3, "max_concurrency", 1, "rate_limit_per_second", 1000)
	wantStatus(t, ce.a(http.MethodPost, campaignOp(cid, "start"), nil), http.StatusOK)
	first = ringingCall(cid, 1)
	wantStatus(t, ce.a(http.MethodPost, campaignOp(cid, "cancel"), nil), http.StatusOK)
	final(cid, first, "busy")
	c = ce.campaign(cid)
	wantCounters(t, c, 3, 0, 0, 1, 4)
	list := ce.calls(cid, "")
	if c["state"] != "cancelled" || ce.sim.Stats().CreateRequests != before+1 || len(list) != 4 || list[0]["outcome"] != "busy" {
		t.Errorf("cancelled campaign: state %v, %d calls placed, calls %v", c["state"], ce.sim.Stats().CreateRequests-before, list)
	}
}

// TestCampaignScheduleWindow: outside its calling window a running
// campaign waits with next_dial_at set; a PATCH that lifts the schedule
// lets it dial at once.
func TestCampaignScheduleWindow(t *testing.T) {
	t.Parallel()
	ce := newCampEnv(t, campOpts{engine: true})
	s := ce.setup(false)
	now := ce.clock.now().UTC()
	today := (int(now.Weekday()) + 6) % 7 // Monday = 0
	opens := time.Date(now.Year(), now.Month(), now.Day()+2, 9, 0, 0, 0, time.UTC)
	sched := map[string]any{"timezone": "UTC", "slots": []any{map[string]any{"day_of_week": (today + 2) % 7, "start_time": "09:00", "end_time": "10:00"}}}
	cid := ce.newCampaign(s, 2, "rate_limit_per_second", 1000, "schedule_config", sched)
	wantStatus(t, ce.a(http.MethodPost, campaignOp(cid, "start"), nil), http.StatusOK)
	// next_dial_at is written just before the log entry: wait for both.
	c := ce.waitCampaign(cid, "waiting for its window", func(c map[string]any) bool {
		logs, _ := c["logs"].([]any)
		return c["next_dial_at"] != nil && len(logs) == 2
	})
	if want := opens.Format("2006-01-02T15:04:05.000Z"); c["next_dial_at"] != want || c["state"] != "running" {
		t.Errorf("state %v, next_dial_at %v; want running, %s", c["state"], c["next_dial_at"], want)
	}
	logs := objects(t, c["logs"])
	if last := logs[len(logs)-1]; last["event"] != "schedule_window_closed" ||
		!equalJSON(last["details"], map[string]any{"next_dial_at": opens.Format(time.RFC3339)}) {
		t.Errorf("last log = %v, want schedule_window_closed with details.next_dial_at", last)
	}
	if n := ce.sim.Stats().CreateRequests; n != 0 {
		t.Errorf("%d calls placed outside the window", n)
	}
	r := ce.a(http.MethodPatch, campaignPath(cid), map[string]any{"schedule_config": nil})
	wantStatus(t, r, http.StatusOK)
	c = ce.waitState(cid, "completed")
	if got := logEvents(t, c["logs"]); fmt.Sprint(got) != "[campaign_started schedule_window_closed schedule_window_opened campaign_completed]" {
		t.Errorf("events = %v", got)
	}
	if c["next_dial_at"] != nil {
		t.Errorf("next_dial_at = %v after completion", c["next_dial_at"])
	}
}

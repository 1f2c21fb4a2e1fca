package web_test

import (
	"fmt"
	"net"
	"net/http"
	"strconv"
	"testing"
	"time"

	"github.com/outdial/outdial/dialer/carrier/twiliosim"
)

func eventsPath(id int64) string { return campaignOp(id, "events") }

// noRetries turns a campaign's retries off: runScript's busy and no-answer
// numbers would otherwise wait 120 s for their retry.
var noRetries = map[string]any{"enabled": false}

// A campaign's stream, from before its start to its end: a snapshot at
// once, snapshots following the progress (never more than 2 a second),
// log entries with ids, one call event per ended call, and the end of the
// stream after the completed snapshot. Reconnecting with Last-Event-ID
// replays the log entries after it.
func TestEventsCampaignStream(t *testing.T) {
	t.Parallel()
	// runScript with calls long enough for the campaign to run over
	// several snapshots (about 1.5 s).
	slow := func(ci twiliosim.CallInfo) twiliosim.Script {
		sc := runScript(ci)
		if sc.TalkDuration > 0 {
			sc.TalkDuration = 250 * time.Millisecond
		}
		return sc
	}
	ce := newCampEnv(t, campOpts{engine: true, script: slow})
	s := ce.setup(true)
	const n = 12
	cid := ce.newCampaign(s, n, "max_concurrency", 2, "rate_limit_per_second", 1000, "retry_config", noRetries)
	st := ce.openEvents(eventsPath(cid), ce.keyA)
	if got := st.res.Header.Get("Content-Type"); got != "text/event-stream" {
		t.Fatalf("Content-Type = %q, want text/event-stream", got)
	}
	first, ok := st.next()
	if !ok || first.name != "campaign" {
		t.Fatalf("first event = %+v, want a campaign snapshot", first)
	}
	snap := first.obj(t)
	if snap["state"] != "draft" || num(t, snap, "id") != float64(cid) || num(t, snap, "total_rows") != n ||
		num(t, snap, "processed_rows") != 0 || num(t, snap, "max_concurrency") != 2 {
		t.Fatalf("first snapshot = %v, want the draft campaign %d of %d rows", snap, cid, n)
	}
	wantStatus(t, ce.a(http.MethodPost, campaignOp(cid, "start"), nil), http.StatusOK)
	evs := st.untilEnd()

	snaps := named(evs, "campaign")
	if len(snaps) == 0 {
		t.Fatal("no snapshot after the start")
	}
	last := snaps[len(snaps)-1].obj(t)
	if evs[len(evs)-1].name != "campaign" || last["state"] != "completed" {
		t.Fatalf("the stream ended after %q %s, want the completed snapshot last", evs[len(evs)-1].name, evs[len(evs)-1].data)
	}
	outcomes := last["outcomes"].(map[string]any)
	if num(t, last, "processed_rows") != n || num(t, last, "executed_count") != n || num(t, last, "in_flight") != 0 ||
		num(t, outcomes, "answered")+num(t, outcomes, "voicemail")+num(t, outcomes, "busy")+num(t, outcomes, "no_answer")+num(t, outcomes, "failed") != n ||
		num(t, outcomes, "failed") != 1 || num(t, outcomes, "busy") != 1 || num(t, last, "calls_last_minute") != n {
		t.Errorf("final snapshot = %v; want %d processed and executed, none in flight, %d outcomes (1 busy, 1 failed), %d calls in the last minute", last, n, n, n)
	}
	running := false
	prev := 0.0
	for i, ev := range snaps {
		sn := ev.obj(t)
		p := num(t, sn, "processed_rows")
		if p < prev {
			t.Errorf("snapshot %d: processed_rows went back from %v to %v", i, prev, p)
		}
		prev = p
		if sn["state"] == "running" && p > 0 && p < n {
			running = true
		}
	}
	// At most 2 a second: counted over the whole run, since the client
	// reads each one some time after it was sent (on a loaded machine two
	// consecutive ones can arrive closer than 500 ms), while a broken
	// coalescing sends one per change (dozens for 12 calls).
	if span := snaps[len(snaps)-1].at.Sub(snaps[0].at); float64(len(snaps)) > 2*span.Seconds()+3 {
		t.Errorf("%d snapshots in %v; at most 2 a second", len(snaps), span)
	}
	if !running {
		t.Errorf("no snapshot showed the campaign running part way: %d snapshots", len(snaps))
	}

	calls := named(evs, "call")
	if len(calls) != n {
		t.Errorf("%d call events, want %d (retries are off)", len(calls), n)
	}
	seen := map[float64]bool{}
	startedAt := map[float64]any{} // by attempt id, as the calls list has it
	for _, c := range ce.calls(cid, "") {
		startedAt[num(t, c, "id")] = c["started_at"]
	}
	for _, ev := range calls {
		c := ev.obj(t)
		if c["state"] != "done" || c["outcome"] == nil || c["ended_at"] == nil || num(t, c, "attempt") != 1 {
			t.Errorf("call event %v: want a done attempt 1 with outcome and ended_at", c)
		}
		// The live row's "Started": the attempt's started_at, as /calls has it.
		if want := startedAt[num(t, c, "id")]; want == nil || c["started_at"] != want {
			t.Errorf("call event %v: started_at = %v, want the attempt's %v", c, c["started_at"], want)
		}
		seen[num(t, c, "contact_row")] = true
	}
	if len(seen) != n {
		t.Errorf("call events name %d distinct rows, want %d", len(seen), n)
	}

	logs := named(evs, "log")
	var ids []int64
	events := map[string]bool{}
	for _, ev := range logs {
		id, err := strconv.ParseInt(ev.id, 10, 64)
		if err != nil {
			t.Fatalf("log event id %q: %v", ev.id, err)
		}
		l := ev.obj(t)
		if num(t, l, "id") != float64(id) {
			t.Errorf("log event id: %d, data id %v", id, l["id"])
		}
		if len(ids) > 0 && id <= ids[len(ids)-1] {
			t.Errorf("log ids not increasing: %d after %d", id, ids[len(ids)-1])
		}
		ids = append(ids, id)
		events[l["event"].(string)] = true
	}
	if !events["campaign_started"] || !events["campaign_completed"] {
		t.Fatalf("log events %v; want campaign_started and campaign_completed", events)
	}

	// Replay: from the first entry on, the others come back first, then
	// the final snapshot, then the end.
	re := ce.openEvents(eventsPath(cid), ce.keyA, "Last-Event-ID", strconv.FormatInt(ids[0], 10))
	replay := re.untilEnd()
	var got []int64
	for _, ev := range named(replay, "log") {
		id, _ := strconv.ParseInt(ev.id, 10, 64)
		got = append(got, id)
	}
	if fmt.Sprint(got) != fmt.Sprint(ids[1:]) {
		t.Errorf("replayed log ids %v, want %v", got, ids[1:])
	}
	if len(replay) == 0 || replay[len(replay)-1].name != "campaign" || replay[len(replay)-1].obj(t)["state"] != "completed" {
		t.Errorf("replay ended with %v, want the completed snapshot", replay)
	}
}

// More than 50 calls ending in a second: at most 50 call events a second,
// and the snapshots count the others in calls_skipped.
func TestEventsCallRateLimit(t *testing.T) {
	t.Parallel()
	ce := newCampEnv(t, campOpts{engine: true, script: runScript})
	s := ce.setup(true)
	const n = 150
	cid := ce.newCampaign(s, n, "max_concurrency", n, "rate_limit_per_second", 1000, "retry_config", noRetries)
	st := ce.openEvents(eventsPath(cid), ce.keyA)
	wantStatus(t, ce.a(http.MethodPost, campaignOp(cid, "start"), nil), http.StatusOK)
	evs := st.untilEnd()
	calls := named(evs, "call")
	skipped := 0
	for _, ev := range named(evs, "campaign") {
		skipped += int(num(t, ev.obj(t), "calls_skipped"))
	}
	if len(calls)+skipped != n {
		t.Errorf("%d call events + %d skipped = %d, want %d", len(calls), skipped, len(calls)+skipped, n)
	}
	if skipped == 0 {
		t.Errorf("no call skipped: %d calls sent", len(calls))
	}
	// The server sends a flush's calls before its snapshot, and a flush
	// never more than 50 (when the client reads is up to it, so the check
	// is per flush rather than per second of arrival).
	inFlush := 0
	for _, ev := range evs {
		switch ev.name {
		case "call":
			inFlush++
		case "campaign":
			if inFlush > callsPerSecondLimit {
				t.Errorf("%d call events before one snapshot, want at most %d", inFlush, callsPerSecondLimit)
			}
			inFlush = 0
		}
	}
}

const callsPerSecondLimit = 50

// A client that opens a stream and never reads it: the campaign runs to
// its end as fast as without it, and the server's goroutine for it ends.
func TestEventsClientNeverReads(t *testing.T) {
	t.Parallel()
	ce := newCampEnv(t, campOpts{engine: true, script: runScript})
	s := ce.setup(true)
	const n = 100
	cid := ce.newCampaign(s, n, "max_concurrency", 50, "rate_limit_per_second", 1000, "retry_config", noRetries)
	conn, err := net.Dial("tcp", ce.srv.Listener.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if tc, ok := conn.(*net.TCPConn); ok {
		_ = tc.SetReadBuffer(1024) // as little as the kernel allows
	}
	fmt.Fprintf(conn, "GET %s HTTP/1.1\r\nHost: x\r\nX-API-Key: %s\r\n\r\n", eventsPath(cid), ce.keyA)
	// A reading stream beside it, to see the same campaign.
	st := ce.openEvents(eventsPath(cid), ce.keyA)
	wantStatus(t, ce.a(http.MethodPost, campaignOp(cid, "start"), nil), http.StatusOK)
	evs := st.untilEnd()
	if last := evs[len(evs)-1]; last.obj(t)["state"] != "completed" {
		t.Errorf("the reading stream ended with %s", last.data)
	}
	if c := ce.campaign(cid); c["state"] != "completed" || num(t, c, "executed_count") != n {
		t.Errorf("campaign after the stream's end: %v", c)
	}
}

// Errors: no key 401, another organization's campaign 404, a bad
// Last-Event-ID 422, a campaign that does not exist 404; HEAD answers the
// headers.
func TestEventsErrors(t *testing.T) {
	t.Parallel()
	ce := newCampEnv(t, campOpts{engine: true, script: runScript})
	s := ce.setup(true)
	cid := ce.newCampaign(s, 2)
	for _, tc := range []struct {
		name, path, key string
		headers         []string
		want            int
	}{
		{"no key", eventsPath(cid), "", nil, http.StatusUnauthorized},
		{"bad key", eventsPath(cid), "od_nope", nil, http.StatusUnauthorized},
		{"other organization", eventsPath(cid), ce.keyB, nil, http.StatusNotFound},
		{"no such campaign", eventsPath(cid + 1000), ce.keyA, nil, http.StatusNotFound},
		{"bad campaign id", campaignsPath + "/x/events", ce.keyA, nil, http.StatusUnprocessableEntity},
		{"bad Last-Event-ID", eventsPath(cid), ce.keyA, []string{"Last-Event-ID", "abc"}, http.StatusUnprocessableEntity},
		{"org stream without a key", "/api/v1/events", "", nil, http.StatusUnauthorized},
	} {
		c := ce.openEvents(tc.path, tc.key, tc.headers...)
		if c.res.StatusCode != tc.want {
			t.Errorf("%s: status = %d, want %d", tc.name, c.res.StatusCode, tc.want)
		}
		c.close()
	}
	req, _ := http.NewRequest(http.MethodHead, ce.srv.URL+eventsPath(cid), nil)
	req.Header.Set("X-API-Key", ce.keyA)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != http.StatusOK || res.Header.Get("Content-Type") != "text/event-stream" {
		t.Errorf("HEAD: %d %q, want 200 text/event-stream", res.StatusCode, res.Header.Get("Content-Type"))
	}
}

// The organization-wide stream: a snapshot of each unfinished campaign at
// once, then the snapshots of a campaign started later, and none of
// another organization's.
func TestEventsOrganizationStream(t *testing.T) {
	t.Parallel()
	ce := newCampEnv(t, campOpts{engine: true, script: runScript})
	s := ce.setup(true)
	a := ce.newCampaign(s, 3, "max_concurrency", 1, "retry_config", noRetries)
	st := ce.openEvents("/api/v1/events", ce.keyA)
	other := ce.openEvents("/api/v1/events", ce.keyB)
	ev, ok := st.next()
	if !ok || ev.name != "campaign" || num(t, ev.obj(t), "id") != float64(a) {
		t.Fatalf("first event %+v, want campaign %d's snapshot", ev, a)
	}
	b := ce.newCampaign(s, 4, "max_concurrency", 2, "retry_config", noRetries)
	wantStatus(t, ce.a(http.MethodPost, campaignOp(b, "start"), nil), http.StatusOK)
	deadline := time.After(60 * time.Second)
	for done := false; !done; {
		select {
		case ev, ok := <-st.events:
			if !ok {
				t.Fatal("the organization stream ended")
			}
			if ev.name == "campaign" {
				sn := ev.obj(t)
				done = num(t, sn, "id") == float64(b) && sn["state"] == "completed"
			}
		case <-deadline:
			t.Fatal("no completed snapshot of the campaign started after connecting, in 60 s")
		}
	}
	select {
	case ev := <-other.events:
		if !ev.comment {
			t.Errorf("organization B's stream got %s %s", ev.name, ev.data)
		}
	default:
	}
}

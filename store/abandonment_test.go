package store_test

import (
	"context"
	"testing"
	"time"

	"github.com/outdial/outdial/store"
)

func ptrTime(t time.Time) *time.Time { return &t }

func TestDecideAbandonment(t *testing.T) {
	t0 := time.Date(2030, 1, 2, 10, 0, 0, 0, time.UTC)
	ms := func(n int) *time.Time { return ptrTime(t0.Add(time.Duration(n) * time.Millisecond)) }
	for _, tc := range []struct {
		name          string
		in            store.CallAudio
		wantAbandoned string // "null", "true", "false"
		wantMS        int64  // -1: null
	}{
		{"no person", store.CallAudio{AnsweredAt: t0, FirstAudioAt: ms(100)}, "null", -1},
		{"in time", store.CallAudio{PersonAnswered: true, AnsweredAt: t0, FirstAudioAt: ms(700)}, "false", 700},
		{"window edge", store.CallAudio{PersonAnswered: true, AnsweredAt: t0, FirstAudioAt: ms(2000)}, "false", 2000},
		{"just past the edge", store.CallAudio{PersonAnswered: true, AnsweredAt: t0, FirstAudioAt: ms(2001)}, "true", 2001},
		{"never", store.CallAudio{PersonAnswered: true, AnsweredAt: t0}, "true", -1},
		{"before the answer webhook", store.CallAudio{PersonAnswered: true, AnsweredAt: t0, FirstAudioAt: ms(-300)}, "false", 0},
		{"failed, no audio", store.CallAudio{PersonAnswered: true, AnsweredAt: t0, FailedAt: ms(500)}, "true", -1},
		{"failed before audio", store.CallAudio{PersonAnswered: true, AnsweredAt: t0, FailedAt: ms(500), FirstAudioAt: ms(900)}, "true", 900},
		{"failed after audio", store.CallAudio{PersonAnswered: true, AnsweredAt: t0, FirstAudioAt: ms(500), FailedAt: ms(9000)}, "false", 500},
		{"greeting", store.CallAudio{PersonAnswered: true, AnsweredAt: t0, AudioAtAnswer: true}, "false", 0},
		{"policy window", store.CallAudio{PersonAnswered: true, AnsweredAt: t0, FirstAudioAt: ms(2500), AbandonAfter: 3 * time.Second}, "false", 2500},
		{"policy window edge", store.CallAudio{PersonAnswered: true, AnsweredAt: t0, FirstAudioAt: ms(1001), AbandonAfter: time.Second}, "true", 1001},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := store.DecideAbandonment(tc.in)
			if a := boolString(got.Abandoned); a != tc.wantAbandoned {
				t.Fatalf("abandoned = %s, want %s", a, tc.wantAbandoned)
			}
			if m := intOrMinus(got.AnswerToFirstAudioMs); m != tc.wantMS {
				t.Fatalf("answer_to_first_audio_ms = %d, want %d", m, tc.wantMS)
			}
		})
	}
}

func boolString(b *bool) string {
	switch {
	case b == nil:
		return "null"
	case *b:
		return "true"
	}
	return "false"
}

func intOrMinus(v *int64) int64 {
	if v == nil {
		return -1
	}
	return *v
}

// The verdict stored with the final status, from the agent's events as they
// arrive around the answer webhook and the hang-up, and a late first audio.
func TestAbandonmentStored(t *testing.T) {
	t0 := time.Date(2030, 1, 2, 10, 0, 0, 0, time.UTC)
	at := func(ms int) time.Time { return t0.Add(time.Duration(ms) * time.Millisecond) }
	type step struct {
		kind string // "answer", "end", or an agent event
		ms   int
	}
	for _, tc := range []struct {
		name          string
		steps         []step
		outcome       string
		answeredBy    string
		greeting      bool
		wantAbandoned string
		wantMS        int64
		wantFirst     []bool // AgentEvent's First, per agent event in order
	}{
		{"audio in time", []step{{"answer", 0}, {"connected", 100}, {"first_audio", 800}, {"end", 30000}}, "answered", "", false, "false", 800, []bool{true, true}},
		{"audio at the edge", []step{{"answer", 0}, {"first_audio", 2000}, {"end", 30000}}, "answered", "", false, "false", 2000, []bool{true}},
		{"audio past the edge", []step{{"answer", 0}, {"first_audio", 2001}, {"end", 30000}}, "answered", "", false, "true", 2001, []bool{true}},
		{"never", []step{{"answer", 0}, {"end", 30000}}, "answered", "", false, "true", -1, nil},
		{"before the answer webhook", []step{{"first_audio", 0}, {"answer", 400}, {"end", 9000}}, "answered", "", false, "false", 0, []bool{true}},
		{"twice", []step{{"answer", 0}, {"first_audio", 500}, {"first_audio", 5000}, {"end", 9000}}, "answered", "", false, "false", 500, []bool{true, false}},
		{"failed", []step{{"answer", 0}, {"failed", 300}, {"failed", 400}, {"end", 1000}}, "answered", "", false, "true", -1, []bool{true, false}},
		{"late audio after the end", []step{{"answer", 0}, {"end", 1500}, {"first_audio", 1800}, {"first_audio", 1900}}, "answered", "", false, "true", 1800, []bool{true, false}},
		{"greeting", []step{{"answer", 0}, {"end", 8000}}, "answered", "", true, "false", 0, nil},
		{"machine", []step{{"answer", 0}, {"end", 8000}}, "answered", "machine_start", false, "null", -1, nil},
		{"no answer", []step{{"first_audio", 10}, {"end", 8000}}, "no_answer", "", false, "null", -1, []bool{true}},
		{"late audio without a person", []step{{"end", 8000}, {"first_audio", 9000}}, "busy", "", false, "null", -1, []bool{true}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			db := newDB(t)
			ctx := context.Background()
			org := newOrg(t, db.DB, "acme")
			c, err := db.CreateCampaign(ctx, org, newCampaignInput("x"), feedContacts(1, nil, nil))
			if err != nil {
				t.Fatal(err)
			}
			list, err := db.ClaimAttempts(ctx, leaseOf(t, db, c.ID), t0.Add(-time.Minute), t0.Add(time.Hour), c.Timezones, 1)
			if err != nil || len(list) != 1 {
				t.Fatalf("claim: %d %v", len(list), err)
			}
			id := list[0].ID
			var firsts []bool
			for _, s := range tc.steps {
				switch s.kind {
				case "answer":
					_, err = db.ApplyStatus(ctx, id, store.StatusUpdate{At: at(s.ms), Raw: "in-progress", Sequence: 1,
						Answered: true, AnsweredBy: tc.answeredBy, FromProvider: true}, nil)
				case "end":
					var res store.Applied
					res, err = db.ApplyStatus(ctx, id, store.StatusUpdate{At: at(s.ms), Raw: "completed", Final: true,
						Outcome: tc.outcome, Sequence: 2, FromProvider: true, Machine: func(v string) bool { return v == "machine_start" },
						AudioAtAnswer: tc.greeting}, noRetry)
					// The verdict never changes after the end.
					if err == nil && boolString(res.Abandonment.Abandoned) != tc.wantAbandoned {
						t.Fatalf("Applied abandoned = %s, want %s", boolString(res.Abandonment.Abandoned), tc.wantAbandoned)
					}
				default:
					var r store.AgentEventResult
					r, err = db.AgentEvent(ctx, id, s.kind, at(s.ms), ptrTime(at(s.ms-5)))
					firsts = append(firsts, r.First)
				}
				if err != nil {
					t.Fatalf("%s: %v", s.kind, err)
				}
			}
			a, err := db.GetAttempt(ctx, id)
			if err != nil {
				t.Fatal(err)
			}
			if got := boolString(a.Abandoned); got != tc.wantAbandoned {
				t.Fatalf("abandoned = %s, want %s", got, tc.wantAbandoned)
			}
			if got := intOrMinus(a.AnswerToFirstAudioMs); got != tc.wantMS {
				t.Fatalf("answer_to_first_audio_ms = %d, want %d", got, tc.wantMS)
			}
			if len(firsts) != len(tc.wantFirst) {
				t.Fatalf("first reports = %v, want %v", firsts, tc.wantFirst)
			}
			for i := range firsts {
				if firsts[i] != tc.wantFirst[i] {
					t.Fatalf("first reports = %v, want %v", firsts, tc.wantFirst)
				}
			}
		})
	}
}

// Only the first report of an event counts, with its arrival and the time
// the agent gave; unknown attempts and events are refused.
func TestAgentEventFirstReportCounts(t *testing.T) {
	db := newDB(t)
	ctx := context.Background()
	org := newOrg(t, db.DB, "acme")
	c, err := db.CreateCampaign(ctx, org, newCampaignInput("x"), feedContacts(1, nil, nil))
	if err != nil {
		t.Fatal(err)
	}
	t0 := time.Date(2030, 1, 2, 10, 0, 0, 0, time.UTC)
	list, err := db.ClaimAttempts(ctx, leaseOf(t, db, c.ID), t0, t0.Add(time.Hour), c.Timezones, 1)
	if err != nil || len(list) != 1 {
		t.Fatalf("claim: %d %v", len(list), err)
	}
	id := list[0].ID
	for i, ev := range []string{store.AgentConnected, store.AgentConnected, store.AgentFailed} {
		r, err := db.AgentEvent(ctx, id, ev, t0.Add(time.Duration(i)*time.Second), nil)
		if err != nil {
			t.Fatal(err)
		}
		if r.CampaignID != c.ID || r.First != (i != 1) {
			t.Fatalf("event %d: %+v", i, r)
		}
	}
	a, err := db.GetAttempt(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	if a.AgentConnectedAt == nil || !a.AgentConnectedAt.Equal(t0) || a.AgentFailedAt == nil || !a.AgentFailedAt.Equal(t0.Add(2*time.Second)) || a.AgentFirstAudioAt != nil {
		t.Fatalf("arrivals: connected %v, first audio %v, failed %v", a.AgentConnectedAt, a.AgentFirstAudioAt, a.AgentFailedAt)
	}
	if _, err := db.AgentEvent(ctx, id+1000, store.AgentConnected, t0, nil); store.ErrorCode(err) != store.ENOTFOUND {
		t.Fatalf("unknown attempt: %v, want ENOTFOUND", err)
	}
	if _, err := db.AgentEvent(ctx, id, "speaking", t0, nil); store.ErrorCode(err) != store.EINVALID {
		t.Fatalf("unknown event: %v, want EINVALID", err)
	}
}

// AbandonedRate counts person-answered calls answered at or after since,
// per campaign and per organization, and nothing of another organization.
func TestAbandonedRate(t *testing.T) {
	db := newDB(t)
	ctx := context.Background()
	acme, other := newOrg(t, db.DB, "acme"), newOrg(t, db.DB, "other")
	t0 := time.Date(2030, 1, 2, 10, 0, 0, 0, time.UTC)
	since := t0.Add(-24 * time.Hour)
	// Each call: its answer's offset from since, the agent's audio delay
	// (-1: none; -2: no person answered).
	type call struct {
		answer time.Duration
		audio  int
	}
	mk := func(org int64, calls []call) int64 {
		c, err := db.CreateCampaign(ctx, org, newCampaignInput("c"), feedContacts(len(calls), nil, nil))
		if err != nil {
			t.Fatal(err)
		}
		list, err := db.ClaimAttempts(ctx, leaseOf(t, db, c.ID), t0, t0.Add(time.Hour), c.Timezones, len(calls))
		if err != nil || len(list) != len(calls) {
			t.Fatalf("claim: %d %v", len(list), err)
		}
		for i, cl := range calls {
			ans := since.Add(cl.answer)
			id := list[i].ID
			outcome := "answered"
			if cl.audio == -2 {
				outcome = "voicemail"
			}
			if _, err := db.ApplyStatus(ctx, id, store.StatusUpdate{At: ans, Raw: "in-progress", Sequence: 1, Answered: true, FromProvider: true}, nil); err != nil {
				t.Fatal(err)
			}
			if cl.audio >= 0 {
				if _, err := db.AgentEvent(ctx, id, store.AgentFirstAudio, ans.Add(time.Duration(cl.audio)*time.Millisecond), nil); err != nil {
					t.Fatal(err)
				}
			}
			if _, err := db.ApplyStatus(ctx, id, store.StatusUpdate{At: ans.Add(time.Minute), Raw: "completed", Final: true,
				Outcome: outcome, Sequence: 2, FromProvider: true}, noRetry); err != nil {
				t.Fatal(err)
			}
		}
		return c.ID
	}
	a := mk(acme, []call{{0, 100}, {time.Hour, 3000}, {-time.Millisecond, -1}, {2 * time.Hour, -1}, {3 * time.Hour, -2}})
	b := mk(acme, []call{{time.Hour, 100}, {time.Hour, 100}})
	x := mk(other, []call{{time.Hour, -1}})
	for _, tc := range []struct {
		name                string
		org, campaign       int64
		abandoned, answered int64
	}{
		{"campaign a", acme, a, 2, 3},
		{"campaign b", acme, b, 0, 2},
		{"organization", acme, 0, 2, 5},
		{"other organization's campaign", acme, x, 0, 0},
		{"other organization", other, 0, 1, 1},
	} {
		ab, an, err := db.AbandonedRate(ctx, tc.org, tc.campaign, since)
		if err != nil {
			t.Fatal(err)
		}
		if ab != tc.abandoned || an != tc.answered {
			t.Errorf("%s: %d of %d abandoned, want %d of %d", tc.name, ab, an, tc.abandoned, tc.answered)
		}
	}
	if r := store.AbandonedShare(2, 9); r != nil {
		t.Fatalf("share below 10 = %v, want nil", *r)
	}
	if r := store.AbandonedShare(1, 10); r == nil || *r != 0.1 {
		t.Fatalf("share of 1 in 10 = %v, want 0.1", r)
	}
}

package dialer_test

// Calling hours through the engine (API.md 12.2, 12.5): a campaign whose
// callees are outside their hours waits without polling and dials when the
// hours open; an attempt the hours closed on between its claim and its check
// goes back with the evidence of the hold.

import (
	"slices"
	"testing"
	"time"

	"github.com/outdial/outdial/dialer/carrier/twiliosim"
	"github.com/outdial/outdial/store"
)

// checkPlacedInHours checks the evidence of an attempt placed inside the
// calling hours of zone, on policy version.
func checkPlacedInHours(t *testing.T, a *store.Attempt, zone string, version int64) {
	t.Helper()
	ev := evidenceOf(t, a)
	loc, err := time.LoadLocation(zone)
	if err != nil {
		t.Fatal(err)
	}
	local, err := time.Parse(time.RFC3339, ev.LocalTime)
	if err != nil {
		t.Fatalf("local_time %q: %v", ev.LocalTime, err)
	}
	_, wantOffset := ev.CheckedAt.In(loc).Zone()
	if _, offset := local.Zone(); offset != wantOffset || !local.Equal(ev.CheckedAt.Truncate(time.Second)) {
		t.Fatalf("local_time %s, want checked_at %v in %s", ev.LocalTime, ev.CheckedAt, zone)
	}
	if ev.CallingHours != "open" || !slices.Equal(ev.Timezones, []string{zone}) || ev.TimezoneSource != "number" ||
		ev.Suppression != "clear" || ev.AttemptCap != "disabled" || ev.PolicyVersion != version || a.ProviderCallID == nil ||
		a.StartedAt == nil || ev.CheckedAt.Before(*a.StartedAt) {
		t.Fatalf("attempt %d evidence %s (claimed %v), want placed after its claim with the hours open in %s, policy %d", a.ID, a.Compliance, a.StartedAt, zone, version)
	}
}

// TestCallingHoursClosedUntilOpen: a New York number at 01:59 EST on the
// night the clocks spring forward waits, without polling, until 08:00 EDT
// (12:00 UTC, not 13:00): next_dial_at says so, the log records
// calling_hours_closed then calling_hours_opened, and the calls go out
// when the runner's own timer fires.
func TestCallingHoursClosedUntilOpen(t *testing.T) {
	h := newHarness(t, twiliosim.Config{Script: quickCalls})
	reads := h.countingEngine()
	version := h.enableHours()
	c := h.campaignOf([]string{"+12125550100", "+12125550101"}, store.Settings{}, nil)
	h.clock.Set(time.Date(2026, 3, 8, 6, 59, 0, 0, time.UTC))
	h.do(c.ID, store.OpStart)
	opens := time.Date(2026, 3, 8, 12, 0, 0, 0, time.UTC)

	h.waitFor("calling_hours_closed", func() bool { return len(h.logs(c.ID, "calling_hours_closed")) > 0 })
	got := h.get(c.ID)
	if got.State != store.StateRunning || got.NextDialAt == nil || !got.NextDialAt.Equal(opens) {
		t.Fatalf("state %s next_dial_at %v, want running until %v", got.State, got.NextDialAt, opens)
	}
	if at := h.logs(c.ID, "calling_hours_closed")[0].Details["next_dial_at"]; at != "2026-03-08T12:00:00Z" {
		t.Fatalf("calling_hours_closed next_dial_at = %v, want 2026-03-08T12:00:00Z", at)
	}
	// Waiting: nothing is claimed, nothing requested, and the runner does
	// not poll (its clock is hardly read).
	before := reads.Load()
	for range 3 {
		h.steady("nothing claimed outside the hours", func() bool {
			return h.sim.Stats().CreateRequests == 0 && h.countAttempts(c.ID, store.AttemptQueued) == 2
		})
	}
	if n := reads.Load() - before; n > 5 {
		t.Fatalf("the engine read its clock %d times while waiting 5 hours for the calling hours: it polls", n)
	}
	for _, a := range h.attempts(c.ID) {
		if a.Compliance != nil {
			t.Fatalf("attempt %d has evidence %s: it was claimed outside the hours", a.ID, a.Compliance)
		}
	}

	// 200 ms before the opening: woken, the runner still waits, then
	// dials on its own timer.
	h.clock.Set(opens.Add(-200 * time.Millisecond))
	h.eng.Wake(c.ID)
	done := h.waitState(c.ID, store.StateCompleted)
	checkCounters(t, done, 2, 0, 2, 2)
	if done.NextDialAt != nil {
		t.Fatalf("next_dial_at = %v after the hours opened, want null", done.NextDialAt)
	}
	ev := h.events(c.ID)
	closed, opened := slices.Index(ev, "calling_hours_closed"), slices.Index(ev, "calling_hours_opened")
	if closed < 0 || opened < closed || len(h.logs(c.ID, "calling_hours_closed")) != 1 {
		t.Fatalf("log events %v: want calling_hours_closed once, then calling_hours_opened", ev)
	}
	for _, a := range h.attempts(c.ID) {
		if a.StartedAt.Before(opens) {
			t.Fatalf("attempt %d started at %v, before the hours opened at %v", a.ID, a.StartedAt, opens)
		}
		checkPlacedInHours(t, a, "America/New_York", version)
	}
}

// holdAtCheck runs a New York contact's attempt claimed at 20:59:50 EST
// whose check runs at 21:00:05 (the dispatch paused in between): it returns
// the harness, the campaign, the policy version and the next opening.
func holdAtCheck(t *testing.T) (h *harness, c *store.Campaign, version int64, opens time.Time) {
	t.Helper()
	p := newBuildPause()
	h = newHarness(t, twiliosim.Config{Script: quickCalls}, p.option())
	version = h.enableHours()
	c = h.campaignOf([]string{"+12125550100"}, store.Settings{}, nil)
	// Sunday 2026-11-01 20:59:50 EST (the day New York fell back).
	h.clock.Set(time.Date(2026, 11, 2, 1, 59, 50, 0, time.UTC))
	p.armed.Store(true)
	h.do(c.ID, store.OpStart)
	p.wait(t)
	h.clock.Set(time.Date(2026, 11, 2, 2, 0, 5, 0, time.UTC)) // 21:00:05 EST
	p.open()
	h.waitFor("the attempt held", func() bool {
		list := h.attempts(c.ID)
		return len(list) == 1 && list[0].State == store.AttemptQueued && list[0].Compliance != nil
	})
	return h, c, version, time.Date(2026, 11, 2, 13, 0, 0, 0, time.UTC) // Monday 08:00 EST
}

// TestCallingHoursCloseBetweenClaimAndCheck: an attempt claimed at 20:59:50
// whose check runs after 21:00 is not placed: it goes back to the queue due
// at the next opening, with the evidence of the hold, and is placed then.
func TestCallingHoursCloseBetweenClaimAndCheck(t *testing.T) {
	h, c, version, opens := holdAtCheck(t)
	held := h.attempts(c.ID)[0]
	ev := evidenceOf(t, held)
	if !held.DueAt.Equal(opens) || ev.CallingHours != "held" || !slices.Equal(ev.Timezones, []string{"America/New_York"}) ||
		ev.TimezoneSource != "number" || ev.Suppression != "clear" || ev.PolicyVersion != version ||
		ev.CheckedAt.Before(time.Date(2026, 11, 2, 2, 0, 5, 0, time.UTC)) ||
		ev.LocalTime[:19] != ev.CheckedAt.Add(-5*time.Hour).Format("2006-01-02T15:04:05") || ev.LocalTime[19:] != "-05:00" {
		t.Fatalf("held attempt due %v, evidence %s; want due %v, hours held in America/New_York at 21:00 EST", held.DueAt, held.Compliance, opens)
	}
	if got := h.sim.Stats().CreateRequests; got != 0 {
		t.Fatalf("%d calls requested after the hours closed", got)
	}

	h.clock.Set(opens)
	h.eng.Wake(c.ID)
	checkCounters(t, h.waitState(c.ID, store.StateCompleted), 1, 0, 1, 1)
	placed := h.attempts(c.ID)
	if len(placed) != 1 || placed[0].ID != held.ID {
		t.Fatalf("attempts %s, want the held attempt placed", describe(placed))
	}
	checkPlacedInHours(t, placed[0], "America/New_York", version)
}

// TestCallingHoursHeldAtCheckWaits: a campaign whose only attempt the
// check held for the calling hours is waiting for them (docs/api.md 4.1,
// 4.5): next_dial_at says until when and the log has calling_hours_closed,
// as when the runner finds the hours closed itself (and as an attempt the
// cap put back does, with attempt_cap_reached).
func TestCallingHoursHeldAtCheckWaits(t *testing.T) {
	h, c, _, opens := holdAtCheck(t)
	h.eng.Wake(c.ID)
	h.waitFor("calling_hours_closed", func() bool { return len(h.logs(c.ID, "calling_hours_closed")) == 1 })
	if n := h.get(c.ID).NextDialAt; n == nil || !n.Equal(opens) {
		t.Fatalf("next_dial_at %v, want %v", n, opens)
	}
}

// TestCallingHoursUnknownZone: a number the numbering plan gives no zone
// (an international network) is held while the campaign names no timezone,
// and called in the campaign's timezone's hours once it names one.
func TestCallingHoursUnknownZone(t *testing.T) {
	h := newHarness(t, twiliosim.Config{Script: quickCalls})
	h.enableHours()
	h.clock.Set(time.Date(2026, 6, 1, 12, 0, 0, 0, time.UTC)) // Monday 14:00 in Madrid
	c := h.campaignOf([]string{"+883510012345", "+12125550100"}, store.Settings{}, nil)
	h.do(c.ID, store.OpStart)
	h.waitSim("the New York number called", func(s twiliosim.Stats) bool { return s.Final == 1 })
	h.eng.Wake(c.ID)
	h.steady("the number without a zone held", func() bool {
		return h.sim.CreatesTo("+883510012345") == 0 && h.get(c.ID).State == store.StateRunning
	})

	h.patch(c.ID, func(s *store.Settings) {
		s.ScheduleConfig = &store.ScheduleConfig{Enabled: true, Timezone: "Europe/Madrid",
			Slots: []store.Slot{{DayOfWeek: 0, StartTime: "00:00", EndTime: "24:00"}}}
	})
	h.waitState(c.ID, store.StateCompleted)
	for _, a := range h.attempts(c.ID) {
		if a.PhoneNumber != "+883510012345" {
			continue
		}
		ev := evidenceOf(t, a)
		local, err := time.Parse(time.RFC3339, ev.LocalTime)
		_, offset := local.Zone()
		if err != nil || offset != 2*60*60 || local.Hour() != 14 || !slices.Equal(ev.Timezones, []string{"Europe/Madrid"}) ||
			ev.TimezoneSource != "campaign" || ev.CallingHours != "open" {
			t.Fatalf("evidence %s, want the hours checked open in the campaign's Europe/Madrid (14:xx+02:00)", a.Compliance)
		}
	}
}

// TestCallingHoursContactsWithoutZones: contacts stored without zones (a
// campaign imported before migration 0008: timezone "" although the number
// has zones) follow docs/api.md 9.4: their calling hours run on the
// campaign's timezone, else they are held; the check right before the
// request still uses the number's zones. (API.md 12.2 puts the number's
// zones before the campaign's timezone: see the report of this test.)
func TestCallingHoursContactsWithoutZones(t *testing.T) {
	allWeek := func(tz string) store.Settings {
		var slots []store.Slot
		for d := range 7 {
			slots = append(slots, store.Slot{DayOfWeek: d, StartTime: "00:00", EndTime: "24:00"})
		}
		return schedule(tz, slots...)
	}
	t.Run("no campaign timezone: held", func(t *testing.T) {
		h := newHarness(t, twiliosim.Config{Script: quickCalls})
		h.enableHours()
		h.clock.Set(time.Date(2026, 6, 1, 18, 0, 0, 0, time.UTC)) // 11:00 PDT for the +1 415 numbers
		c := h.campaign(2, store.Settings{}, nil)                 // contacts without zones
		h.do(c.ID, store.OpStart)
		h.steady("contacts without zones held", func() bool {
			return h.sim.Stats().CreateRequests == 0 && h.countAttempts(c.ID, store.AttemptQueued) == 2
		})
		// Named a timezone (New York, 14:00): claimed on its clock, checked
		// on the numbers' Los Angeles (11:00) and placed.
		h.patch(c.ID, func(s *store.Settings) { s.ScheduleConfig = allWeek("America/New_York").ScheduleConfig })
		h.waitState(c.ID, store.StateCompleted)
		for _, a := range h.attempts(c.ID) {
			if ev := evidenceOf(t, a); !slices.Equal(ev.Timezones, []string{"America/Los_Angeles"}) || ev.TimezoneSource != "number" || ev.CallingHours != "open" {
				t.Fatalf("%s evidence %s, want the hours open in the number's Los Angeles", a.PhoneNumber, a.Compliance)
			}
		}
	})
	t.Run("campaign timezone, then the number's zones at the check", func(t *testing.T) {
		h := newHarness(t, twiliosim.Config{Script: quickCalls})
		h.enableHours()
		// 06:00 UTC: 15:00 in Tokyo (open), 23:00 PDT in Los Angeles
		// (closed): claimed on Tokyo's clock, held at the check until
		// 08:00 PDT (15:00 UTC).
		h.clock.Set(time.Date(2026, 6, 1, 6, 0, 0, 0, time.UTC))
		c := h.campaign(2, allWeek("Asia/Tokyo"), nil)
		h.do(c.ID, store.OpStart)
		laOpens := time.Date(2026, 6, 1, 15, 0, 0, 0, time.UTC)
		h.waitFor("both attempts held at the check", func() bool {
			for _, a := range h.attempts(c.ID) {
				if a.State != store.AttemptQueued || a.Compliance == nil || !a.DueAt.Equal(laOpens) {
					return false
				}
			}
			return true
		})
		for _, a := range h.attempts(c.ID) {
			if ev := evidenceOf(t, a); ev.CallingHours != "held" || !slices.Equal(ev.Timezones, []string{"America/Los_Angeles"}) || ev.TimezoneSource != "number" {
				t.Fatalf("%s evidence %s, want held in the number's Los Angeles", a.PhoneNumber, a.Compliance)
			}
		}
		// 15:00 UTC is midnight in Tokyo: the runner waits for Tokyo's
		// 08:00 (23:00 UTC), when Los Angeles is at 16:00.
		h.clock.Set(laOpens)
		h.eng.Wake(c.ID)
		tokyoOpens := time.Date(2026, 6, 1, 23, 0, 0, 0, time.UTC)
		h.waitFor("calling_hours_closed", func() bool { return len(h.logs(c.ID, "calling_hours_closed")) == 1 })
		if n := h.get(c.ID).NextDialAt; n == nil || !n.Equal(tokyoOpens) || h.sim.Stats().CreateRequests != 0 {
			t.Fatalf("next_dial_at %v, %d calls; want %v, none", n, h.sim.Stats().CreateRequests, tokyoOpens)
		}
		h.clock.Set(tokyoOpens)
		h.eng.Wake(c.ID)
		checkCounters(t, h.waitState(c.ID, store.StateCompleted), 2, 0, 2, 2)
	})
}

package dialer_test

import (
	"slices"
	"testing"
	"time"

	"github.com/outdial/outdial/dialer/carrier/twiliosim"
	"github.com/outdial/outdial/store"
)

// quickCalls answers every call at once and ends it a few ms later.
func quickCalls(twiliosim.CallInfo) twiliosim.Script {
	return twiliosim.Script{Outcome: twiliosim.Human, TalkDuration: 5 * time.Millisecond}
}

func schedule(tz string, slots ...store.Slot) store.Settings {
	return store.Settings{ScheduleConfig: &store.ScheduleConfig{Enabled: true, Timezone: tz, Slots: slots}}
}

// waitWindowClosed waits for the schedule_window_closed entry and checks that
// the campaign still runs, waits until want and placed nothing more than
// placed calls.
func (h *harness) waitWindowClosed(id int64, want time.Time, placed int) {
	h.t.Helper()
	h.waitFor("schedule_window_closed", func() bool { return len(h.logs(id, "schedule_window_closed")) > 0 })
	c := h.get(id)
	if c.State != store.StateRunning {
		h.t.Fatalf("state = %s outside the window, want running", c.State)
	}
	if c.NextDialAt == nil || !c.NextDialAt.Equal(want) {
		h.t.Fatalf("next_dial_at = %v, want %v", c.NextDialAt, want.UTC())
	}
	if got := h.logs(id, "schedule_window_closed")[0].Details["next_dial_at"]; got != want.UTC().Format(time.RFC3339) {
		h.t.Fatalf("schedule_window_closed next_dial_at = %v, want %s", got, want.UTC().Format(time.RFC3339))
	}
	if got := h.sim.Stats().CreateRequests; got != placed {
		h.t.Fatalf("%d calls requested outside the window, want %d", got, placed)
	}
}

// checkWindowOpened checks a completed campaign's window log: closed, then
// opened, and no next_dial_at left.
func (h *harness) checkWindowOpened(c *store.Campaign) {
	h.t.Helper()
	ev := h.events(c.ID)
	closed, opened := slices.Index(ev, "schedule_window_closed"), slices.Index(ev, "schedule_window_opened")
	if closed < 0 || opened < closed {
		h.t.Fatalf("log events %v: want schedule_window_closed then schedule_window_opened", ev)
	}
	if c.NextDialAt != nil {
		h.t.Fatalf("next_dial_at = %v after the window opened, want null", c.NextDialAt)
	}
}

func TestWindowClosedUntilSlotOpens(t *testing.T) {
	h := newHarness(t, twiliosim.Config{Script: quickCalls})
	// Monday 09:00–17:00 in Berlin (UTC+1 in November): 08:00–16:00 UTC.
	c := h.campaign(3, schedule("Europe/Berlin", store.Slot{DayOfWeek: 0, StartTime: "09:00", EndTime: "17:00"}), nil)
	h.clock.Set(time.Date(2026, 11, 23, 7, 30, 0, 0, time.UTC)) // Monday 08:30 in Berlin
	h.do(c.ID, store.OpStart)
	opens := time.Date(2026, 11, 23, 8, 0, 0, 0, time.UTC)
	h.waitWindowClosed(c.ID, opens, 0)

	// Still before the slot: waking the engine dials nobody.
	h.advance(29*time.Minute, c.ID) // 08:59 in Berlin
	h.steady("nothing dialled before 09:00", func() bool { return h.sim.Stats().CreateRequests == 0 })

	h.clock.Set(opens.Add(time.Second))
	h.eng.Wake(c.ID)
	done := h.waitState(c.ID, store.StateCompleted)
	h.checkWindowOpened(done)
	checkCounters(t, done, 3, 0, 3, 3)
	for _, a := range h.attempts(c.ID) {
		if a.StartedAt.Before(opens) {
			t.Fatalf("attempt %d started at %v, before the window opened at %v", a.ID, a.StartedAt, opens)
		}
	}
}

func TestWindowSlotEndingAtMidnight(t *testing.T) {
	h := newHarness(t, twiliosim.Config{Script: quickCalls})
	slots := []store.Slot{{DayOfWeek: 0, StartTime: "22:00", EndTime: "24:00"}, {DayOfWeek: 1, StartTime: "10:00", EndTime: "11:00"}}
	// Monday 23:59:30: the 22:00–24:00 slot is open up to its last second.
	h.clock.Set(time.Date(2026, 11, 23, 23, 59, 30, 0, time.UTC))
	late := h.campaign(2, schedule("UTC", slots...), nil)
	h.do(late.ID, store.OpStart)
	done := h.waitState(late.ID, store.StateCompleted)
	checkCounters(t, done, 2, 0, 2, 2)
	if len(h.logs(late.ID, "schedule_window_closed")) != 0 {
		t.Fatalf("log %v: the window was open", h.events(late.ID))
	}

	// Tuesday 00:00:01: 24:00 is exclusive, the next slot is Tuesday 10:00.
	h.clock.Set(time.Date(2026, 11, 24, 0, 0, 1, 0, time.UTC))
	early := h.campaign(2, schedule("UTC", slots...), nil)
	h.do(early.ID, store.OpStart)
	tuesday10 := time.Date(2026, 11, 24, 10, 0, 0, 0, time.UTC)
	h.waitWindowClosed(early.ID, tuesday10, 2)
	h.clock.Set(tuesday10)
	h.eng.Wake(early.ID)
	h.checkWindowOpened(h.waitState(early.ID, store.StateCompleted))
}

func TestWindowContactTimezone(t *testing.T) {
	h := newHarness(t, twiliosim.Config{Script: quickCalls})
	// Every weekday 09:00–17:00; the campaign dials in New York, contacts 1
	// and 3 in Tokyo.
	var slots []store.Slot
	for d := 0; d < 5; d++ {
		slots = append(slots, store.Slot{DayOfWeek: d, StartTime: "09:00", EndTime: "17:00"})
	}
	tokyo := func(i int) string {
		if i%2 == 1 {
			return "Asia/Tokyo"
		}
		return ""
	}
	c := h.campaign(4, schedule("America/New_York", slots...), tokyo)
	// Monday 01:00 UTC: Monday 10:00 in Tokyo, Sunday 20:00 in New York.
	h.clock.Set(time.Date(2026, 11, 23, 1, 0, 0, 0, time.UTC))
	h.do(c.ID, store.OpStart)
	h.waitSim("the Tokyo contacts called", func(s twiliosim.Stats) bool { return s.Final >= 2 })
	nyOpens := time.Date(2026, 11, 23, 14, 0, 0, 0, time.UTC) // Monday 09:00 EST
	h.waitWindowClosed(c.ID, nyOpens, 2)
	if got := h.sim.CreatesByTo(); got[number(1)] != 1 || got[number(3)] != 1 || len(got) != 2 {
		t.Fatalf("called %v before New York's window, want only the Tokyo contacts", got)
	}

	// Monday 14:00:01 UTC: 09:00 in New York, 23:00 in Tokyo.
	h.clock.Set(nyOpens.Add(time.Second))
	h.eng.Wake(c.ID)
	done := h.waitState(c.ID, store.StateCompleted)
	h.checkWindowOpened(done)
	h.checkCalledOnce(4)
	for _, a := range h.attempts(c.ID) {
		if tz := tokyo(int(a.ContactRow - 2)); tz == "" && a.StartedAt.Before(nyOpens) {
			t.Fatalf("New York contact %s started at %v, before %v", a.PhoneNumber, a.StartedAt, nyOpens)
		}
	}
}

// TestWindowAcrossDST: a slot is wall-clock time, so on the day the clocks
// change it opens at a different UTC time than the day before.
func TestWindowAcrossDST(t *testing.T) {
	tests := []struct {
		name  string
		tz    string
		start time.Time // Saturday afternoon before the change
		opens time.Time // Sunday 09:00 local, after the change
	}{
		// 2026-03-08 02:00 EST → 03:00 EDT: Sunday 09:00 is 13:00 UTC (14:00 the day before).
		{"New York spring forward", "America/New_York", time.Date(2026, 3, 7, 20, 0, 0, 0, time.UTC), time.Date(2026, 3, 8, 13, 0, 0, 0, time.UTC)},
		// 2026-10-25 03:00 CEST → 02:00 CET: Sunday 09:00 is 08:00 UTC (07:00 the day before).
		{"Berlin fall back", "Europe/Berlin", time.Date(2026, 10, 24, 12, 0, 0, 0, time.UTC), time.Date(2026, 10, 25, 8, 0, 0, 0, time.UTC)},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t, twiliosim.Config{Script: quickCalls})
			c := h.campaign(2, schedule(tc.tz, store.Slot{DayOfWeek: 6, StartTime: "09:00", EndTime: "10:00"}), nil)
			h.clock.Set(tc.start)
			h.do(c.ID, store.OpStart)
			h.waitWindowClosed(c.ID, tc.opens, 0)
			h.clock.Set(tc.opens.Add(-2 * time.Second)) // 08:59:58 local
			h.eng.Wake(c.ID)
			h.steady("nothing dialled at 08:59:58", func() bool { return h.sim.Stats().CreateRequests == 0 })
			h.clock.Set(tc.opens)
			h.eng.Wake(c.ID)
			h.checkWindowOpened(h.waitState(c.ID, store.StateCompleted))
		})
	}
}

// TestWindowPatchedWhileWaiting: a PATCH of schedule_config applies to a
// campaign waiting for its window: next_dial_at follows the new slots, and
// dropping the schedule dials at once.
func TestWindowPatchedWhileWaiting(t *testing.T) {
	h := newHarness(t, twiliosim.Config{Script: quickCalls})
	c := h.campaign(2, schedule("UTC", store.Slot{DayOfWeek: 0, StartTime: "09:00", EndTime: "17:00"}), nil)
	h.clock.Set(time.Date(2026, 11, 23, 7, 0, 0, 0, time.UTC)) // Monday 07:00
	h.do(c.ID, store.OpStart)
	h.waitWindowClosed(c.ID, time.Date(2026, 11, 23, 9, 0, 0, 0, time.UTC), 0)

	h.patch(c.ID, func(s *store.Settings) { s.ScheduleConfig.Slots[0].StartTime = "08:30" })
	want := time.Date(2026, 11, 23, 8, 30, 0, 0, time.UTC)
	h.waitFor("next_dial_at to follow the PATCH", func() bool {
		n := h.get(c.ID).NextDialAt
		return n != nil && n.Equal(want)
	})
	if got := h.sim.Stats().CreateRequests; got != 0 {
		t.Fatalf("%d calls requested outside the window", got)
	}

	h.patch(c.ID, func(s *store.Settings) { s.ScheduleConfig = nil })
	done := h.waitState(c.ID, store.StateCompleted)
	h.checkWindowOpened(done)
	checkCounters(t, done, 2, 0, 2, 2)
}

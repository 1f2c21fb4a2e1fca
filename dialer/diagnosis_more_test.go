package dialer_test

// The diagnosis of a running campaign's queue (API.md 11): contacts held by
// the calling window, the organization's calling hours (12.2, known and
// unknown time zones), retry delays and the attempt cap (12.3), each with
// its count and until. Helpers are in diagnosis_test.go.

import (
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/outdial/outdial/dialer"
	"github.com/outdial/outdial/dialer/carrier/twiliosim"
	"github.com/outdial/outdial/store"
)

// Monday 2026-11-23 20:00 UTC is 12:00 in Los Angeles (the harness's
// +1415 numbers) and Tuesday 05:00 in Tokyo.
var monday20UTC = time.Date(2026, 11, 23, 20, 0, 0, 0, time.UTC)

// hoursEveryDay is calling hours start-end on every day of the week.
func hoursEveryDay(start, end string) func(*store.Policy) {
	return func(p *store.Policy) {
		p.CallingHours = store.CallingHours{Enabled: true, Start: start, End: end, Days: []int{0, 1, 2, 3, 4, 5, 6}}
	}
}

// scheduleAllWeek is an enabled schedule in tz open at every hour.
func scheduleAllWeek(tz string) store.Settings {
	var slots []store.Slot
	for d := 0; d < 7; d++ {
		slots = append(slots, store.Slot{DayOfWeek: d, StartTime: "00:00", EndTime: "24:00"})
	}
	return schedule(tz, slots...)
}

// unknownZone returns n numbers of the international networks code +883,
// for which the numbering plan gives no time zone.
func unknownZone(first, n int) []string {
	var out []string
	for i := first; i < first+n; i++ {
		out = append(out, fmt.Sprintf("+88351000%04d", i))
	}
	return out
}

// TestDiagnoseCallingWindowClosed: before the Monday 09:00 Berlin slot, the
// ready contacts are held by the window until it opens (08:00 UTC, the
// campaign's next_dial_at too).
func TestDiagnoseCallingWindowClosed(t *testing.T) {
	h := newHarness(t, twiliosim.Config{Script: quickCalls})
	c := h.campaign(3, schedule("Europe/Berlin", store.Slot{DayOfWeek: 0, StartTime: "09:00", EndTime: "17:00"}), nil)
	h.clock.Set(time.Date(2026, 11, 23, 7, 30, 0, 0, time.UTC)) // Monday 08:30 in Berlin
	h.do(c.ID, store.OpStart)
	opens := time.Date(2026, 11, 23, 8, 0, 0, 0, time.UTC)
	h.waitWindowClosed(c.ID, opens, 0)
	d := h.diagNow(c.ID)
	diagWant{state: store.StateRunning, maxConc: 10, reasons: []string{dialer.ReasonWindowClosed}}.check(t, d)
	checkReason(t, d.Reasons[0], 3, opens, "calling window", "schedule_config")

	h.clock.Set(opens.Add(time.Second))
	h.eng.Wake(c.ID)
	h.waitState(c.ID, store.StateCompleted)
}

// TestDiagnoseWindowBeforeCallingHours: contacts held by both the window
// and the calling hours count under the window (the campaign's own rule)
// until it opens; then the hours hold them, until they open in the
// callees' zone; then they are called.
func TestDiagnoseWindowBeforeCallingHours(t *testing.T) {
	h := newHarness(t, twiliosim.Config{Script: quickCalls})
	h.setPolicy(hoursEveryDay("08:00", "21:00"))
	// Monday 09:00-24:00 in Berlin is 08:00-23:00 UTC; 08:00-21:00 in Los
	// Angeles is 16:00-05:00 UTC.
	c := h.campaignOf([]string{number(0), number(1)},
		schedule("Europe/Berlin", store.Slot{DayOfWeek: 0, StartTime: "09:00", EndTime: "24:00"}), nil)
	// Monday 07:30 UTC: 08:30 in Berlin, Sunday 23:30 in Los Angeles.
	h.clock.Set(time.Date(2026, 11, 23, 7, 30, 0, 0, time.UTC))
	h.do(c.ID, store.OpStart)
	h.waitFor("schedule_window_closed", func() bool { return len(h.logs(c.ID, "schedule_window_closed")) > 0 })
	windowOpens := time.Date(2026, 11, 23, 8, 0, 0, 0, time.UTC)
	d := h.diagNow(c.ID)
	diagWant{state: store.StateRunning, maxConc: 10, reasons: []string{dialer.ReasonWindowClosed}}.check(t, d)
	checkReason(t, d.Reasons[0], 2, windowOpens)

	// Monday 08:00:01 UTC: the window is open, Los Angeles is at midnight.
	h.clock.Set(windowOpens.Add(time.Second))
	h.eng.Wake(c.ID)
	hoursOpen := time.Date(2026, 11, 23, 16, 0, 0, 0, time.UTC)
	d = h.diagNow(c.ID)
	diagWant{state: store.StateRunning, maxConc: 10, reasons: []string{dialer.ReasonCallingHours}}.check(t, d)
	checkReason(t, d.Reasons[0], 2, hoursOpen, "calling hours")
	if n := h.sim.Stats().CreateRequests; n != 0 {
		t.Fatalf("%d calls requested outside the calling hours", n)
	}

	h.clock.Set(hoursOpen.Add(time.Second))
	h.eng.Wake(c.ID)
	h.waitState(c.ID, store.StateCompleted)
}

// TestDiagnoseCallingHours: calling hours that closed an hour ago in the
// numbers' zone (Los Angeles, from the numbering plan) hold every contact
// until they open the next morning, which is also the campaign's
// next_dial_at; at that time the campaign dials.
func TestDiagnoseCallingHours(t *testing.T) {
	h := newHarness(t, twiliosim.Config{Script: quickCalls})
	h.setPolicy(hoursEveryDay("08:00", "11:00"))
	c := h.campaignOf([]string{number(0), number(1), number(2)}, store.Settings{}, nil)
	h.clock.Set(monday20UTC) // 12:00 in Los Angeles
	h.do(c.ID, store.OpStart)
	h.waitFor("calling_hours_closed", func() bool { return len(h.logs(c.ID, "calling_hours_closed")) > 0 })
	opens := time.Date(2026, 11, 24, 16, 0, 0, 0, time.UTC) // Tuesday 08:00 in Los Angeles
	d := h.diagNow(c.ID)
	diagWant{state: store.StateRunning, maxConc: 10, reasons: []string{dialer.ReasonCallingHours}}.check(t, d)
	checkReason(t, d.Reasons[0], 3, opens, "outside the organization's calling hours")
	if got := h.get(c.ID).NextDialAt; got == nil || !got.Equal(opens) {
		t.Fatalf("next_dial_at = %v, want %v, the diagnosis's until", got, opens)
	}
	if n := h.sim.Stats().CreateRequests; n != 0 {
		t.Fatalf("%d calls requested outside the calling hours", n)
	}

	h.clock.Set(opens.Add(time.Second))
	h.eng.Wake(c.ID)
	h.waitState(c.ID, store.StateCompleted)
}

// TestDiagnoseCallingHoursHeldAtCheck: contacts imported without zones use
// the campaign's timezone in the runner (Tokyo, open) but the check right
// before the request uses the number's (Los Angeles, closed): each attempt
// is put back with evidence "held", and the diagnosis reads those until
// the hours open in Los Angeles.
func TestDiagnoseCallingHoursHeldAtCheck(t *testing.T) {
	h := newHarness(t, twiliosim.Config{Script: quickCalls})
	h.setPolicy(hoursEveryDay("09:00", "17:00"))
	c := h.campaign(2, scheduleAllWeek("Asia/Tokyo"), nil)
	// Monday 03:00 UTC: Monday 12:00 in Tokyo, Sunday 19:00 in Los Angeles.
	h.clock.Set(time.Date(2026, 11, 23, 3, 0, 0, 0, time.UTC))
	h.do(c.ID, store.OpStart)
	d := h.waitDiag(c.ID, "both contacts held at their check", func(d *dialer.Diagnosis) bool {
		r := d.Reasons
		return len(r) == 1 && r[0].Code == dialer.ReasonCallingHours && r[0].Count != nil && *r[0].Count == 2 && d.InFlight == 0
	})
	diagWant{state: store.StateRunning, maxConc: 10, reasons: []string{dialer.ReasonCallingHours}}.check(t, d)
	opens := time.Date(2026, 11, 23, 17, 0, 0, 0, time.UTC) // Monday 09:00 in Los Angeles
	checkReason(t, d.Reasons[0], 2, opens, "calling hours")
	for _, a := range h.attempts(c.ID) {
		var ev dialer.Evidence
		if err := json.Unmarshal(a.Compliance, &ev); err != nil {
			t.Fatalf("attempt %d evidence %s: %v", a.ID, a.Compliance, err)
		}
		if a.State != store.AttemptQueued || !a.DueAt.Equal(opens) || ev.CallingHours != "held" || ev.TimezoneSource != "number" {
			t.Fatalf("attempt %d %s due %v evidence %s; want queued, due %v, held by the number's zone", a.ID, a.State, a.DueAt, a.Compliance, opens)
		}
	}
	if n := h.sim.Stats().CreateRequests; n != 0 {
		t.Fatalf("%d calls requested outside the calling hours", n)
	}
}

// TestDiagnoseUnknownTimezone: numbers the numbering plan gives no zone,
// in a campaign without a timezone, are held by the calling hours with no
// until; the message names the first ten rows and how many more. Once the
// campaign names a timezone, the hours run on it and until is when they
// open there.
func TestDiagnoseUnknownTimezone(t *testing.T) {
	h := newHarness(t, twiliosim.Config{Script: quickCalls})
	h.setPolicy(hoursEveryDay("08:00", "21:00"))
	c := h.campaignOf(unknownZone(0, 12), store.Settings{}, nil)
	h.clock.Set(monday20UTC)
	h.do(c.ID, store.OpStart)
	d := h.waitDiag(c.ID, "calling_hours", func(d *dialer.Diagnosis) bool { return hasCode(d, dialer.ReasonCallingHours) })
	diagWant{state: store.StateRunning, maxConc: 10, reasons: []string{dialer.ReasonCallingHours}}.check(t, d)
	checkReason(t, d.Reasons[0], 12, time.Time{}, "time zone is unknown", "contact rows 2, 3, 4, 5, 6, 7, 8, 9, 10, 11 and 2 more")

	// Tuesday 05:00 in Tokyo: the hours open at 08:00 there, 23:00 UTC.
	h.patch(c.ID, func(s *store.Settings) { s.ScheduleConfig = scheduleAllWeek("Asia/Tokyo").ScheduleConfig })
	d = h.diagNow(c.ID)
	diagWant{state: store.StateRunning, maxConc: 10, reasons: []string{dialer.ReasonCallingHours}}.check(t, d)
	checkReason(t, d.Reasons[0], 12, time.Date(2026, 11, 23, 23, 0, 0, 0, time.UTC), "outside the organization's calling hours")
	if n := h.sim.Stats().CreateRequests; n != 0 {
		t.Fatalf("%d calls requested without a known time zone", n)
	}
}

// TestDiagnoseUnknownTimezoneMixed: a campaign of numbers with and without
// a zone: one calling_hours reason counts both, until the known zone's
// hours open, and still names the rows of unknown zone.
func TestDiagnoseUnknownTimezoneMixed(t *testing.T) {
	h := newHarness(t, twiliosim.Config{Script: quickCalls})
	h.setPolicy(hoursEveryDay("08:00", "11:00"))
	c := h.campaignOf(append([]string{number(0), number(1)}, unknownZone(0, 2)...), store.Settings{}, nil)
	h.clock.Set(monday20UTC)
	h.do(c.ID, store.OpStart)
	d := h.waitDiag(c.ID, "calling_hours", func(d *dialer.Diagnosis) bool { return hasCode(d, dialer.ReasonCallingHours) })
	diagWant{state: store.StateRunning, maxConc: 10, reasons: []string{dialer.ReasonCallingHours}}.check(t, d)
	checkReason(t, d.Reasons[0], 4, time.Date(2026, 11, 24, 16, 0, 0, 0, time.UTC), "contact rows 4, 5")
}

// TestDiagnoseWaitingForRetries: two busy contacts wait 30 s for their
// retries: waiting_for_retries with both, until the first is due; dialing
// for 5 s after the calls, then not; once due they are dialled.
func TestDiagnoseWaitingForRetries(t *testing.T) {
	h := newHarness(t, twiliosim.Config{Script: func(twiliosim.CallInfo) twiliosim.Script {
		return twiliosim.Script{Outcome: twiliosim.Busy}
	}})
	rc := store.RetryConfig{Enabled: true, MaxRetries: 1, RetryDelaySeconds: 30, RetryOnBusy: true}
	c := h.campaign(2, store.Settings{MaxConcurrency: 2, RetryConfig: rc}, nil)
	h.clock.Set(time.Date(2026, 11, 23, 10, 0, 0, 0, time.UTC))
	h.do(c.ID, store.OpStart)
	var first time.Time
	h.waitFor("both retries queued", func() bool {
		n := 0
		for _, a := range h.attempts(c.ID) {
			if a.Attempt == 2 && a.State == store.AttemptQueued {
				if n++; first.IsZero() || a.DueAt.Before(first) {
					first = a.DueAt
				}
			}
		}
		return n == 2
	})
	d := h.waitDiag(c.ID, "the slots free", func(d *dialer.Diagnosis) bool { return d.InFlight == 0 })
	want := diagWant{state: store.StateRunning, dialing: true, maxConc: 2, reasons: []string{dialer.ReasonRetries}}
	want.check(t, d)
	checkReason(t, d.Reasons[0], 2, first, "retry delay")

	h.advance(6*time.Second, c.ID)
	d = h.diagNow(c.ID)
	want.dialing = false
	want.check(t, d)
	checkReason(t, d.Reasons[0], 2, first)

	h.advance(30*time.Second, c.ID)
	h.waitState(c.ID, store.StateCompleted)
	if n := h.sim.Stats().CreateRequests; n != 4 {
		t.Fatalf("%d calls requested, want 4", n)
	}
}

// TestDiagnoseAttemptCap: with one call per number a day, a second
// campaign's contact whose number the first campaign called waits for the
// cap until 24 h after that call; the other contact is called.
func TestDiagnoseAttemptCap(t *testing.T) {
	h := newHarness(t, twiliosim.Config{Script: quickCalls})
	h.setPolicy(func(p *store.Policy) { p.AttemptCap = store.AttemptCap{Enabled: true, MaxAttempts: 1, WindowHours: 24} })
	h.clock.Set(time.Date(2026, 11, 23, 10, 0, 0, 0, time.UTC))
	a := h.campaignFrom(0, 1, store.Settings{}, nil)
	h.do(a.ID, store.OpStart)
	h.waitState(a.ID, store.StateCompleted)
	var ev dialer.Evidence
	if err := json.Unmarshal(h.attempts(a.ID)[0].Compliance, &ev); err != nil {
		t.Fatal(err)
	}
	until := time.UnixMilli(ev.CheckedAt.UnixMilli()).Add(24 * time.Hour)

	b := h.campaignFrom(0, 2, store.Settings{}, nil) // number(0) again, and number(1)
	h.do(b.ID, store.OpStart)
	d := h.waitDiag(b.ID, "attempt_cap, the other contact called", func(d *dialer.Diagnosis) bool {
		return hasCode(d, dialer.ReasonAttemptCap) && d.InFlight == 0 && h.countAttempts(b.ID, store.AttemptDone) == 1
	})
	want := diagWant{state: store.StateRunning, dialing: true, maxConc: 10, reasons: []string{dialer.ReasonAttemptCap}}
	want.check(t, d)
	checkReason(t, d.Reasons[0], 1, until, "attempt cap")
	for _, at := range h.attempts(b.ID) {
		if at.PhoneNumber == number(0) && (at.State != store.AttemptQueued || !at.DueAt.Equal(until)) {
			t.Fatalf("attempt to %s: %s due %v, want queued due %v", at.PhoneNumber, at.State, at.DueAt, until)
		}
	}

	h.advance(6*time.Second, b.ID)
	want.dialing = false
	want.check(t, h.diagNow(b.ID))
	if got := h.sim.CreatesTo(number(0)); got != 1 {
		t.Fatalf("%s called %d times, want 1 (the cap)", number(0), got)
	}
}

// TestDiagnoseUnknownTimezoneBeyondFirstChunk: the same with the rows of
// unknown zone after the first 1,000 contacts (the part of the queue not
// materialised yet, counted after the queued part): the message still
// names them.
func TestDiagnoseUnknownTimezoneBeyondFirstChunk(t *testing.T) {
	h := newHarness(t, twiliosim.Config{Script: quickCalls})
	h.setPolicy(hoursEveryDay("08:00", "11:00"))
	var numbers []string
	for i := range 1000 {
		numbers = append(numbers, number(i))
	}
	c := h.campaignOf(append(numbers, unknownZone(0, 2)...), store.Settings{}, nil)
	h.clock.Set(monday20UTC)
	h.do(c.ID, store.OpStart)
	d := h.waitDiag(c.ID, "calling_hours", func(d *dialer.Diagnosis) bool { return hasCode(d, dialer.ReasonCallingHours) })
	diagWant{state: store.StateRunning, maxConc: 10, reasons: []string{dialer.ReasonCallingHours}}.check(t, d)
	checkReason(t, d.Reasons[0], 1002, time.Date(2026, 11, 24, 16, 0, 0, 0, time.UTC), "contact rows 1002, 1003")
}

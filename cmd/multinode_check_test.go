package cmd_test

// TestMultiNodeOnPostgres's final checks: the campaign's attempts and report against
// the contacts file and against what the simulator saw.

import (
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/outdial/outdial/dialer/carrier/twiliosim"
)

// checkOutcome checks the completed campaign: every contact final, no
// attempt placed twice, no number called more often than it has attempts,
// max_concurrency kept at the simulator by all nodes together, and nothing
// placed by the paused node, once woken, that it had claimed before.
func (m *mnCluster) checkOutcome(final map[string]any, paused pausedNode) {
	t := m.t
	t.Helper()
	for _, k := range []string{"total_rows", "processed_rows"} {
		if final[k] != float64(mnContacts) {
			t.Errorf("%s = %v, want %d", k, final[k], mnContacts)
		}
	}
	// No node dials a completed campaign: its holder lets the lease go
	// (allowed a lease TTL to do so).
	for t0, by := time.Now(), final["dialed_by"]; by != nil; by = m.c.get(fmt.Sprintf("/api/v1/campaign/%d", m.campID))["dialed_by"] {
		if time.Since(t0) > mnLeaseTTL {
			t.Errorf("the campaign completed %v ago and is still dialed_by %v, want null", time.Since(t0).Round(time.Millisecond), by)
			break
		}
		time.Sleep(20 * time.Millisecond)
	}

	// The attempts: each done with an outcome, every row of the file has
	// one.
	_, phones := crashCSV(mnContacts)
	attempts := map[int64]map[string]any{}
	perPhone := map[string]int{}
	rows := map[int]bool{}
	outcomes := map[string]int{}
	for _, a := range m.c.calls(m.campID) {
		id := int64(a["id"].(float64))
		row := int(a["contact_row"].(float64))
		phone, _ := a["phone_number"].(string)
		outcome, _ := a["outcome"].(string)
		attempts[id] = a
		perPhone[phone]++
		rows[row] = true
		if raw, _ := a["raw_status"].(string); outcome != "answered" {
			outcome += " (" + raw + ")"
		}
		outcomes[outcome]++
		if a["state"] != "done" || a["outcome"] == nil || a["outcome"] == "" {
			t.Errorf("attempt %d (row %d): state %v, outcome %v; want done with an outcome", id, row, a["state"], a["outcome"])
		}
		if phones[row] != phone {
			t.Errorf("attempt %d: row %d phone %q, the file has %q", id, row, phone, phones[row])
		}
	}
	for row := 2; row < 2+mnContacts; row++ {
		if !rows[row] {
			t.Errorf("contact of row %d has no attempt: lost", row)
		}
	}
	t.Logf("%d attempts; outcomes: %v", len(attempts), outcomes)

	report := m.c.report(m.campID)
	if len(report) != mnContacts {
		t.Errorf("report has %d rows, want %d", len(report), mnContacts)
	}
	for _, r := range report {
		if r["outcome"] == "" {
			t.Errorf("report row %v has no outcome", r)
		}
	}

	// The simulator's calls: each for an attempt of the campaign, to its
	// number, at most one per attempt and no more per number than the
	// number has attempts.
	calls := m.sim.Calls()
	by := map[string]simCreate{}
	for _, p := range m.dl.placed() {
		by[p.sid] = p
	}
	perAttempt := map[int64][]twiliosim.CallRecord{}
	unknown := map[string]bool{} // calls whose attempt ended unknown
	for _, c := range calls {
		id := attemptOf(c.Form.Get("Url"))
		perAttempt[id] = append(perAttempt[id], c)
		a := attempts[id]
		switch {
		case a == nil:
			t.Errorf("call %s to %s (placed by %s) is for attempt %d, which the campaign does not have", c.SID, c.To, by[c.SID].node, id)
		case a["phone_number"] != c.To:
			t.Errorf("call %s for attempt %d went to %s, the attempt's number is %v", c.SID, id, c.To, a["phone_number"])
		case a["outcome"] == "unknown":
			unknown[c.SID] = true
		}
	}
	for id, cs := range perAttempt {
		if len(cs) > 1 {
			t.Errorf("attempt %d was placed %d times: %s", id, len(cs), m.describe(cs, by, attempts))
		}
	}
	for phone, n := range m.sim.CreatesByTo() {
		if n > perPhone[phone] {
			t.Errorf("%s was called %d times for %d attempts", phone, n, perPhone[phone])
		}
	}

	// Concurrency, counting every node: calls up together at the
	// simulator. (Its own PeakInFlight counts a call until its final
	// callback starts, which a paused node can hold up long after the
	// call ended and the node that took over learnt so from the provider.)
	peak, at := peakInFlight(calls, nil)
	if peak > mnConcurrency {
		t.Errorf("the simulator had %d calls up at once, max_concurrency is %d: %s",
			peak, mnConcurrency, m.describe(at, by, attempts))
	}
	m.figures = append(m.figures, fmt.Sprintf("most calls placed in any 1 s, all nodes together: %d (rate_limit_per_second %d)",
		m.dl.busiestSecond(), mnRate))
	known, _ := peakInFlight(calls, unknown)
	t.Logf("peak of calls up at the simulator: %d (%d without the %d calls whose attempts ended unknown; "+
		"the simulator's in-flight counter, callbacks included, peaked at %d)", peak, known, len(unknown), m.sim.PeakInFlight())

	// The paused node, once woken, placed nothing it had claimed. (It may
	// place calls it claimed afterwards, when it took the lease again.)
	later := 0
	for _, p := range m.dl.placed() {
		if p.node != paused.node.name || p.at.Before(paused.woke) {
			continue
		}
		if paused.claimed[p.attempt] {
			t.Errorf("%s, woken, placed attempt %d (to %s) %v after SIGCONT: it had claimed it before the pause",
				p.node, p.attempt, p.to, p.at.Sub(paused.woke))
		} else {
			later++
		}
	}
	if later > 0 {
		t.Logf("%s, woken, placed %d calls it claimed after it woke (it held the lease again)", paused.node.name, later)
	}
}

// describe lists calls as "sid to (attempt, node, up from-to, attempt's
// outcome)", times relative to the first call's creation.
func (m *mnCluster) describe(cs []twiliosim.CallRecord, by map[string]simCreate, attempts map[int64]map[string]any) string {
	sort.Slice(cs, func(i, j int) bool { return cs[i].Created.Before(cs[j].Created) })
	var zero time.Time
	if all := m.sim.Calls(); len(all) > 0 {
		zero = all[0].Created
	}
	var b strings.Builder
	for _, c := range cs {
		id := attemptOf(c.Form.Get("Url"))
		end := "still"
		if !c.Ended.IsZero() {
			end = c.Ended.Sub(zero).Round(time.Millisecond).String()
		}
		outcome := "?"
		if a := attempts[id]; a != nil {
			outcome = fmt.Sprintf("%v/%v", a["outcome"], a["raw_status"])
		}
		fmt.Fprintf(&b, "\n  %s to %s: attempt %d by %s, up %v..%s, outcome %s",
			c.SID, c.To, id, by[c.SID].node, c.Created.Sub(zero).Round(time.Millisecond), end, outcome)
	}
	return b.String()
}

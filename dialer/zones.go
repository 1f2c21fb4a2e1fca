package dialer

import (
	"time"

	"github.com/outdial/outdial/dialer/phone"
	"github.com/outdial/outdial/store"
)

// Callee-local time (API.md 12.2). A campaign's queue is grouped by contact
// timezone (store/zones.go): a contact's timezone column, else the key of
// the zone set the numbering plan gives for its number, else "". Each group
// has two clocks:
//
//   - the campaign's calling window (schedule_config) runs on the contact's
//     timezone column, else the campaign's timezone (API.md 4.5);
//   - the organization's calling hours run on the callee's zones: the
//     timezone column, else the number's zones (open only when open in
//     every one of them), else the campaign's timezone, else none, and the
//     group is held (never callable while calling hours are enabled).
//
// Both must be open for a call to start.

// Where a group's calling-hours zones come from.
const (
	zonesFromContact  = "contact"  // the contact's timezone column
	zonesFromNumber   = "number"   // the numbering plan, for the number
	zonesFromCampaign = "campaign" // the campaign's schedule_config.timezone
	zonesUnknown      = "none"     // nothing: held under calling hours
)

// zoneGroup is one contact timezone of a campaign and its clocks.
type zoneGroup struct {
	key    string
	winLoc *time.Location   // the calling window's clock
	hours  []*time.Location // the callee's zones; empty: unknown
	names  []string         // their names, for the evidence
	source string           // zonesFrom*
}

// zoneGroups builds the groups of campaign c's contact timezones.
func zoneGroups(c *store.Campaign) map[string]*zoneGroup {
	campaignLoc, campaignZone := time.UTC, ""
	if c.ScheduleConfig != nil && c.ScheduleConfig.Timezone != "" {
		if l, err := time.LoadLocation(c.ScheduleConfig.Timezone); err == nil {
			campaignLoc, campaignZone = l, c.ScheduleConfig.Timezone
		}
	}
	out := make(map[string]*zoneGroup, len(c.Timezones))
	for _, key := range c.Timezones {
		out[key] = groupFor(key, c.ZoneSets[key], campaignLoc, campaignZone)
	}
	return out
}

// groupFor resolves one contact timezone: key, with its zone set when key
// is a zone-set key; campaignZone is "" when the campaign names none.
func groupFor(key string, set []string, campaignLoc *time.Location, campaignZone string) *zoneGroup {
	g := &zoneGroup{key: key, winLoc: campaignLoc, source: zonesUnknown}
	switch {
	case key != "" && !store.IsZoneKey(key):
		if l, err := time.LoadLocation(key); err == nil {
			g.winLoc, g.hours, g.names, g.source = l, []*time.Location{l}, []string{key}, zonesFromContact
		}
	case store.IsZoneKey(key):
		g.source = zonesFromNumber
		for _, z := range set {
			l, err := time.LoadLocation(z)
			if err != nil {
				// A zone this binary cannot evaluate: the hours cannot be
				// checked, so the group is held (fail closed).
				g.hours, g.names, g.source = nil, nil, zonesUnknown
				break
			}
			g.hours, g.names = append(g.hours, l), append(g.names, z)
		}
		if len(set) == 0 {
			g.source = zonesUnknown
		}
	case campaignZone != "":
		g.hours, g.names, g.source = []*time.Location{campaignLoc}, []string{campaignZone}, zonesFromCampaign
	}
	return g
}

// attemptGroup resolves the group of an attempt at dispatch from its
// number when its key has none (contacts imported before zones were
// recorded), so the last check before the request always knows the
// number's zones when the numbering plan does.
func attemptGroup(g *zoneGroup, a *store.Attempt, campaignLoc *time.Location) *zoneGroup {
	if g != nil && g.source != zonesUnknown && g.source != zonesFromCampaign {
		return g
	}
	if zones := phone.Zones(a.PhoneNumber); zones != nil && a.Timezone == "" {
		return groupFor(store.ZoneKey(zones), zones, campaignLoc, "")
	}
	return g
}

// callingHours builds the weekly window of a policy's calling hours; nil
// when they are disabled (every time is open).
func callingHours(p store.CallingHours) *window {
	if !p.Enabled {
		return nil
	}
	start, err1 := ParseClock(p.Start, false)
	end, err2 := ParseClock(p.End, true)
	w := &window{}
	if err1 != nil || err2 != nil || start >= end {
		return w // validated on input; a bad stored policy never opens
	}
	for _, d := range p.Days {
		w.slots = append(w.slots, slotMinutes{day: d, start: start, end: end})
	}
	return w
}

// hoursOpen reports whether calling hours are open at t for group g: in
// every one of its zones.
func hoursOpen(hours *window, g *zoneGroup, t time.Time) bool {
	if hours == nil {
		return true
	}
	if len(g.hours) == 0 {
		return false
	}
	for _, l := range g.hours {
		if !hours.open(t, l) {
			return false
		}
	}
	return true
}

// nextCallable returns the earliest time at or after t at which both the
// campaign's window (win, nil: always) and the calling hours (nil: always)
// are open for group g, or the zero time when that never happens within a
// week (no slot at all, zones whose hours never overlap, unknown zones).
func nextCallable(win, hours *window, g *zoneGroup, t time.Time) time.Time {
	if hours != nil && len(g.hours) == 0 {
		return time.Time{}
	}
	limit := t.Add(8 * 24 * time.Hour)
	for range 64 {
		moved := false
		if win != nil {
			o := win.nextOpen(t, g.winLoc)
			if o.IsZero() {
				return time.Time{}
			}
			if o.After(t) {
				t, moved = o, true
			}
		}
		if hours != nil {
			for _, l := range g.hours {
				o := hours.nextOpen(t, l)
				if o.IsZero() {
					return time.Time{}
				}
				if o.After(t) {
					t, moved = o, true
				}
			}
		}
		if !moved {
			return t
		}
		if t.After(limit) {
			break
		}
	}
	return time.Time{}
}

// openTimezones returns the contact timezones whose calling window and
// calling hours are both open.
func (r *runner) openTimezones(now time.Time) []string {
	if r.win == nil && r.hours == nil {
		return r.tzs
	}
	open := make([]string, 0, len(r.tzs))
	for _, tz := range r.tzs {
		if g := r.groups[tz]; r.win.open(now, g.winLoc) && hoursOpen(r.hours, g, now) {
			open = append(open, tz)
		}
	}
	return open
}

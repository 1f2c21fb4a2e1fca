package dialer

import (
	"slices"
	"testing"
	"time"
	_ "time/tzdata" // the zone tests do not depend on the host's zoneinfo (the binary embeds it in cmd)

	"github.com/outdial/outdial/dialer/phone"
	"github.com/outdial/outdial/store"
)

// The callee's zones (API.md 12.2) and the calling hours evaluated on them,
// at instants around the DST changes of 2026: US 03-08 / 11-01, EU 03-29 /
// 10-25, south-east Australia 04-05 / 10-04. Every expected instant below is
// worked out by hand in the comments; reachable() cross-checks it with a
// minute-by-minute scan that shares no code with the dialer.

// resolve returns the group calling hours are evaluated on for a contact
// with number and timezone column (""), in a campaign whose
// schedule_config names campaignZone (""): as the runner builds it from
// the stored campaign (store: the column, else the number's zone-set key)
// and as the dispatch then resolves it (attemptGroup). legacy stores the
// contact as one imported before zones were recorded (timezone "" although
// the number has zones).
func resolve(t *testing.T, number, column, campaignZone string, legacy bool) (runner, dispatch *zoneGroup) {
	t.Helper()
	key, sets := column, map[string][]string{}
	if key == "" && !legacy {
		if z := phone.Zones(number); z != nil {
			key = store.ZoneKey(z)
			sets[key] = z
		}
	}
	c := &store.Campaign{Timezones: []string{key}, ZoneSets: sets}
	loc := time.UTC
	if campaignZone != "" {
		c.ScheduleConfig = &store.ScheduleConfig{Enabled: true, Timezone: campaignZone}
		loc = mustLoc(t, campaignZone)
	}
	g := zoneGroups(c)[key]
	return g, attemptGroup(g, &store.Attempt{PhoneNumber: number, Timezone: key}, loc)
}

var everyDay = []int{0, 1, 2, 3, 4, 5, 6}

func hoursOf(start, end string, days ...int) *window {
	if len(days) == 0 {
		days = everyDay
	}
	return callingHours(store.CallingHours{Enabled: true, Start: start, End: end, Days: days})
}

// nanpTollFree are the 42 zones libphonenumber gives +1 800: every NANP
// zone from Guam (UTC+10) to Pago Pago (UTC-11).
var nanpTollFree = []string{"America/Adak", "America/Anchorage", "America/Anguilla", "America/Antigua", "America/Barbados",
	"America/Boise", "America/Cayman", "America/Chicago", "America/Denver", "America/Dominica", "America/Edmonton",
	"America/Fort_Nelson", "America/Grand_Turk", "America/Grenada", "America/Halifax", "America/Jamaica", "America/Juneau",
	"America/Los_Angeles", "America/Lower_Princes", "America/Montserrat", "America/Nassau", "America/New_York",
	"America/North_Dakota/Center", "America/Phoenix", "America/Port_of_Spain", "America/Puerto_Rico", "America/Regina",
	"America/Santo_Domingo", "America/St_Johns", "America/St_Kitts", "America/St_Lucia", "America/St_Thomas",
	"America/St_Vincent", "America/Toronto", "America/Tortola", "America/Vancouver", "America/Winnipeg", "Atlantic/Bermuda",
	"Pacific/Guam", "Pacific/Honolulu", "Pacific/Pago_Pago", "Pacific/Saipan"}

func TestCalleeZones(t *testing.T) {
	tests := []struct {
		name                 string
		number, column, camp string
		legacy               bool
		want                 []string
		source               string
	}{
		{"France", "+33142685300", "", "", false, []string{"Europe/Paris"}, zonesFromNumber},
		{"Germany", "+4930123456", "", "", false, []string{"Europe/Berlin"}, zonesFromNumber},
		{"UK landline", "+442071234567", "", "", false, []string{"Europe/London"}, zonesFromNumber},
		{"Japan", "+81312345678", "", "", false, []string{"Asia/Tokyo"}, zonesFromNumber},
		{"Brazil, São Paulo", "+5511912345678", "", "", false, []string{"America/Sao_Paulo"}, zonesFromNumber},
		{"Brazil, Manaus (no multi-zone Brazilian range in the data)", "+5592912345678", "", "", false, []string{"America/Manaus"}, zonesFromNumber},
		{"Russia, Vladivostok", "+74232123456", "", "", false, []string{"Asia/Vladivostok"}, zonesFromNumber},
		{"US 415", "+14155550100", "", "", false, []string{"America/Los_Angeles"}, zonesFromNumber},
		{"US 212", "+12125550100", "", "", false, []string{"America/New_York"}, zonesFromNumber},
		{"Canada 604", "+16045550100", "", "", false, []string{"America/Vancouver"}, zonesFromNumber},
		{"Australia 8: two zones", "+61881234567", "", "", false, []string{"Australia/Adelaide", "Australia/Perth"}, zonesFromNumber},
		{"US toll-free: every NANP zone", "+18005550100", "", "", false, nanpTollFree, zonesFromNumber},
		{"Mexico 200", "+522001234567", "", "", false, []string{"America/Mexico_City", "America/Tijuana"}, zonesFromNumber},
		{"Mexico 649", "+526491234567", "", "", false, []string{"America/Mazatlan", "America/Mexico_City"}, zonesFromNumber},
		{"Russia 840", "+78402123456", "", "", false, []string{"Europe/Bucharest", "Europe/Moscow"}, zonesFromNumber},
		{"Russia 800", "+78001234567", "", "", false, []string{"Asia/Almaty", "Asia/Aqtobe", "Europe/Moscow"}, zonesFromNumber},
		{"Indonesian mobile", "+62811234567", "", "", false, []string{"Asia/Jakarta", "Asia/Makassar"}, zonesFromNumber},
		{"Indonesia 403", "+62403123456", "", "", false, []string{"Asia/Jayapura", "Asia/Makassar"}, zonesFromNumber},
		{"UK mobile", "+447911123456", "", "", false, []string{"Europe/Guernsey", "Europe/Isle_of_Man", "Europe/London"}, zonesFromNumber},
		{"Australian mobile", "+61412345678", "", "", false, []string{"Australia/Sydney"}, zonesFromNumber},
		{"international network, campaign zone", "+883510012345", "", "Europe/Madrid", false, []string{"Europe/Madrid"}, zonesFromCampaign},
		{"international network, no campaign zone: held", "+883510012345", "", "", false, nil, zonesUnknown},
		{"timezone column wins over the number", "+12125550100", "Asia/Tokyo", "Europe/Madrid", false, []string{"Asia/Tokyo"}, zonesFromContact},
		{"timezone column wins over an unknown number", "+883510012345", "Asia/Tokyo", "", false, []string{"Asia/Tokyo"}, zonesFromContact},
		{"the number wins over the campaign zone", "+33142685300", "", "America/New_York", false, []string{"Europe/Paris"}, zonesFromNumber},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			run, disp := resolve(t, tc.number, tc.column, tc.camp, tc.legacy)
			for _, g := range []*zoneGroup{run, disp} {
				if !slices.Equal(g.names, tc.want) || g.source != tc.source || len(g.hours) != len(tc.want) {
					t.Fatalf("zones %v (%d locations) from %s, want %v from %s", g.names, len(g.hours), g.source, tc.want, tc.source)
				}
			}
		})
	}

	// A contact stored without zones (imported before they were recorded):
	// the dispatch still evaluates the hours on its number's zones.
	_, disp := resolve(t, "+12125550100", "", "Europe/Madrid", true)
	if !slices.Equal(disp.names, []string{"America/New_York"}) || disp.source != zonesFromNumber || disp.winLoc.String() != "Europe/Madrid" {
		t.Fatalf("stored without zones: dispatch on %v from %s (window clock %v), want America/New_York from the number, window on Europe/Madrid",
			disp.names, disp.source, disp.winLoc)
	}
}

func utc(y int, mo time.Month, d, h, mi int) time.Time {
	return time.Date(y, mo, d, h, mi, 0, 0, time.UTC)
}

func TestCallingHoursAcrossDST(t *testing.T) {
	day := hoursOf("08:00", "21:00")
	tests := []struct {
		name   string
		number string
		column string
		hours  *window
		at     time.Time
		open   bool
		next   time.Time // zero: never
	}{
		// New York springs forward at 07:00 UTC on 2026-03-08: 01:59 EST,
		// then 08:00 EDT = 12:00 UTC (13:00 the day before).
		{"NY before spring forward", "+12125550100", "", day, utc(2026, 3, 8, 6, 59), false, utc(2026, 3, 8, 12, 0)},
		{"NY Saturday 20:59 EST", "+12125550100", "", day, utc(2026, 3, 8, 1, 59), true, utc(2026, 3, 8, 1, 59)},
		{"NY Saturday 21:00 EST, opens 08:00 EDT", "+12125550100", "", day, utc(2026, 3, 8, 2, 0), false, utc(2026, 3, 8, 12, 0)},
		{"NY Sunday 08:00 EDT", "+12125550100", "", day, utc(2026, 3, 8, 12, 0), true, utc(2026, 3, 8, 12, 0)},
		// Falls back at 06:00 UTC on 2026-11-01: 08:00 EST = 13:00 UTC.
		{"NY Saturday 21:00 EDT, opens 08:00 EST", "+12125550100", "", day, utc(2026, 11, 1, 1, 0), false, utc(2026, 11, 1, 13, 0)},
		{"NY 07:59 EST", "+12125550100", "", day, utc(2026, 11, 1, 12, 59), false, utc(2026, 11, 1, 13, 0)},
		{"NY 20:59 EST", "+12125550100", "", day, utc(2026, 11, 2, 1, 59), true, utc(2026, 11, 2, 1, 59)},
		// Weekdays only: Sunday's opening moves to Monday 08:00 EDT.
		{"NY weekdays only, on Sunday", "+12125550100", "", hoursOf("08:00", "21:00", 0, 1, 2, 3, 4), utc(2026, 3, 8, 6, 59), false, utc(2026, 3, 9, 12, 0)},
		// Los Angeles springs forward at 10:00 UTC: 08:00 PDT = 15:00 UTC.
		{"LA 01:59 PST", "+14155550100", "", day, utc(2026, 3, 8, 9, 59), false, utc(2026, 3, 8, 15, 0)},
		{"Vancouver 07:59 PDT", "+16045550100", "", day, utc(2026, 3, 8, 14, 59), false, utc(2026, 3, 8, 15, 0)},
		// EU springs forward at 01:00 UTC on 2026-03-29.
		{"Paris 07:59 CET the day before", "+33142685300", "", day, utc(2026, 3, 28, 6, 59), false, utc(2026, 3, 28, 7, 0)},
		{"Paris 07:59 CEST", "+33142685300", "", day, utc(2026, 3, 29, 5, 59), false, utc(2026, 3, 29, 6, 0)},
		{"London 07:59 BST", "+442071234567", "", day, utc(2026, 3, 29, 6, 59), false, utc(2026, 3, 29, 7, 0)},
		{"UK mobile 07:59 BST", "+447911123456", "", day, utc(2026, 3, 29, 6, 59), false, utc(2026, 3, 29, 7, 0)},
		// EU falls back at 01:00 UTC on 2026-10-25.
		{"Berlin 21:00 CEST, opens 08:00 CET", "+4930123456", "", day, utc(2026, 10, 24, 19, 0), false, utc(2026, 10, 25, 7, 0)},
		{"Paris 20:59 CEST", "+33142685300", "", day, utc(2026, 10, 24, 18, 59), true, utc(2026, 10, 24, 18, 59)},
		{"London 07:59 GMT", "+442071234567", "", day, utc(2026, 10, 25, 7, 59), false, utc(2026, 10, 25, 8, 0)},
		{"Tokyo 21:00 JST (no DST)", "+81312345678", "", day, utc(2026, 3, 8, 12, 0), false, utc(2026, 3, 8, 23, 0)},
		// Sydney falls back at 16:00 UTC on 2026-04-04: 08:00 AEDT is 21:00
		// UTC the day before, 08:00 AEST 22:00 UTC.
		{"Australian mobile 07:59 AEDT", "+61412345678", "", day, utc(2026, 4, 3, 20, 59), false, utc(2026, 4, 3, 21, 0)},
		{"Australian mobile 07:59 AEST", "+61412345678", "", day, utc(2026, 4, 4, 21, 59), false, utc(2026, 4, 4, 22, 0)},
		// +61 8: Adelaide (+10:30 ACDT, +9:30 ACST from 2026-04-04 16:30
		// UTC) and Perth (+8). Open from Perth's 08:00 (00:00 UTC, the
		// last zone to open) to Adelaide's 21:00 (10:30 UTC in ACDT,
		// 11:30 in ACST: the first to close).
		{"+61 8 Perth 07:59", "+61881234567", "", day, utc(2026, 4, 3, 23, 59), false, utc(2026, 4, 4, 0, 0)},
		{"+61 8 Adelaide 20:59 ACDT", "+61881234567", "", day, utc(2026, 4, 4, 10, 29), true, utc(2026, 4, 4, 10, 29)},
		{"+61 8 Adelaide 21:00 ACDT", "+61881234567", "", day, utc(2026, 4, 4, 10, 30), false, utc(2026, 4, 5, 0, 0)},
		{"+61 8 Adelaide 20:00 ACST", "+61881234567", "", day, utc(2026, 4, 5, 10, 30), true, utc(2026, 4, 5, 10, 30)},
		{"+61 8 Adelaide 21:00 ACST", "+61881234567", "", day, utc(2026, 4, 5, 11, 30), false, utc(2026, 4, 6, 0, 0)},
		// Adelaide springs forward at 16:30 UTC on 2026-10-03.
		{"+61 8 Adelaide 20:30 ACST", "+61881234567", "", day, utc(2026, 10, 3, 11, 0), true, utc(2026, 10, 3, 11, 0)},
		{"+61 8 Adelaide 21:00 ACDT", "+61881234567", "", day, utc(2026, 10, 4, 10, 30), false, utc(2026, 10, 5, 0, 0)},
		// +1 800, standard time: Guam/Saipan (+10) open last at 22:00 UTC,
		// St John's (-3:30) closes first at 00:30 UTC. From 2026-03-08
		// (NDT, -2:30) St John's closes at 23:30 UTC.
		{"toll-free open, St John's 20:59 NST", "+18005550100", "", day, utc(2026, 3, 8, 0, 29), true, utc(2026, 3, 8, 0, 29)},
		{"toll-free, St John's 21:00 NST", "+18005550100", "", day, utc(2026, 3, 8, 0, 30), false, utc(2026, 3, 8, 22, 0)},
		{"toll-free, Guam 07:59", "+18005550100", "", day, utc(2026, 3, 8, 21, 59), false, utc(2026, 3, 8, 22, 0)},
		{"toll-free, St John's 20:59 NDT", "+18005550100", "", day, utc(2026, 3, 8, 23, 29), true, utc(2026, 3, 8, 23, 29)},
		{"toll-free, St John's 21:00 NDT", "+18005550100", "", day, utc(2026, 3, 8, 23, 30), false, utc(2026, 3, 9, 22, 0)},
		// 09:00–17:00: Guam is open 23:00–07:00 UTC, St John's 11:30–19:30
		// or 12:30–20:30: never at once.
		{"toll-free, hours that never overlap", "+18005550100", "", hoursOf("09:00", "17:00"), utc(2026, 3, 8, 12, 0), false, time.Time{}},
		// Mexico City (-6, no DST) and Tijuana (US rules): open from
		// Tijuana's 08:00 (16:00 UTC in PST, 15:00 in PDT) to Mexico
		// City's 21:00 (03:00 UTC).
		{"Mexico 200, Tijuana 07:30 PST", "+522001234567", "", day, utc(2026, 3, 7, 15, 30), false, utc(2026, 3, 7, 16, 0)},
		{"Mexico 200, Tijuana 08:30 PDT", "+522001234567", "", day, utc(2026, 3, 8, 15, 30), true, utc(2026, 3, 8, 15, 30)},
		{"Mexico 200, Mexico City 21:00", "+522001234567", "", day, utc(2026, 3, 9, 3, 0), false, utc(2026, 3, 9, 15, 0)},
		// +7 840: Bucharest (EET +2, EEST +3 from 2026-03-29 01:00 UTC)
		// and Moscow (+3): 06:00–18:00 UTC, then 05:00–18:00.
		{"Russia 840, Bucharest 07:30 EET", "+78402123456", "", day, utc(2026, 3, 28, 5, 30), false, utc(2026, 3, 28, 6, 0)},
		{"Russia 840, Bucharest 08:30 EEST", "+78402123456", "", day, utc(2026, 3, 29, 5, 30), true, utc(2026, 3, 29, 5, 30)},
		{"Russia 840, Moscow 21:00", "+78402123456", "", day, utc(2026, 3, 29, 18, 0), false, utc(2026, 3, 30, 5, 0)},
		// Jakarta (+7) and Makassar (+8): 01:00–13:00 UTC.
		{"Indonesian mobile, Jakarta 07:30", "+62811234567", "", day, utc(2026, 3, 8, 0, 30), false, utc(2026, 3, 8, 1, 0)},
		{"Indonesian mobile, Makassar 21:00", "+62811234567", "", day, utc(2026, 3, 8, 13, 0), false, utc(2026, 3, 9, 1, 0)},
		// No zone and no campaign zone: held, never callable.
		{"international network", "+883510012345", "", day, utc(2026, 3, 8, 12, 0), false, time.Time{}},
		// The column wins: a New York number living in Tokyo.
		{"column Asia/Tokyo on a NY number", "+12125550100", "Asia/Tokyo", day, utc(2026, 3, 8, 12, 0), false, utc(2026, 3, 8, 23, 0)},
		{"column Asia/Tokyo, 08:00 JST", "+12125550100", "Asia/Tokyo", day, utc(2026, 3, 8, 23, 0), true, utc(2026, 3, 8, 23, 0)},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, g := resolve(t, tc.number, tc.column, "", false)
			if got := hoursOpen(tc.hours, g, tc.at); got != tc.open {
				t.Fatalf("hoursOpen at %v (%s) = %v, want %v", tc.at, localTimes(g, tc.at), got, tc.open)
			}
			if got := nextCallable(nil, tc.hours, g, tc.at); !got.Equal(tc.next) {
				t.Fatalf("nextCallable from %v = %v (%s), want %v", tc.at, got, localTimes(g, got), tc.next)
			}
			if got := reachable(t, nil, tc.hours, g, tc.at); !got.Equal(tc.next) {
				t.Fatalf("the minute scan from %v finds %v, the table says %v", tc.at, got, tc.next)
			}
		})
	}
	// No calling hours: always open.
	_, g := resolve(t, "+883510012345", "", "", false)
	if at := utc(2026, 3, 8, 3, 0); !hoursOpen(nil, g, at) || !nextCallable(nil, nil, g, at).Equal(at) {
		t.Fatal("disabled calling hours must always be open, even for an unknown zone")
	}
}

// TestCallingHoursWithSchedule: the campaign's window (on the campaign's
// timezone for number-zoned contacts) and the calling hours (on the
// callee's zones) must both be open.
func TestCallingHoursWithSchedule(t *testing.T) {
	day := hoursOf("08:00", "21:00")
	weekdays := func(start, end string) *store.ScheduleConfig {
		sc := &store.ScheduleConfig{Enabled: true}
		for d := range 5 {
			sc.Slots = append(sc.Slots, store.Slot{DayOfWeek: d, StartTime: start, EndTime: end})
		}
		return sc
	}
	daily := func(start, end string) *store.ScheduleConfig {
		sc := &store.ScheduleConfig{Enabled: true}
		for d := range 7 {
			sc.Slots = append(sc.Slots, store.Slot{DayOfWeek: d, StartTime: start, EndTime: end})
		}
		return sc
	}
	tests := []struct {
		name     string
		number   string
		campZone string
		sc       *store.ScheduleConfig
		at       time.Time
		next     time.Time
	}{
		// Sunday 2026-03-08: NY opens at 12:00 UTC but the Chicago window
		// is weekdays 10:00–18:00: Monday 10:00 CDT = 15:00 UTC (11:00 EDT).
		{"window later than the hours", "+12125550100", "America/Chicago", weekdays("10:00", "18:00"), utc(2026, 3, 8, 6, 59), utc(2026, 3, 9, 15, 0)},
		// Window Monday 06:00–09:00 Chicago (11:00–14:00 UTC); NY opens at
		// 12:00 UTC (08:00 EDT), inside the window.
		{"hours later than the window", "+12125550100", "America/Chicago", weekdays("06:00", "09:00"), utc(2026, 3, 9, 10, 0), utc(2026, 3, 9, 12, 0)},
		// A Tokyo window 10:00–11:00 JST is 01:00–02:00 UTC; NY's hours end
		// at 02:00 UTC in EST (21:00), 01:00 UTC in EDT: callable on
		// Saturday evening EST, never once New York is on EDT.
		{"window and hours overlap in EST", "+12125550100", "Asia/Tokyo", daily("10:00", "11:00"), utc(2026, 3, 7, 6, 59), utc(2026, 3, 8, 1, 0)},
		{"open in both", "+12125550100", "Asia/Tokyo", daily("10:00", "11:00"), utc(2026, 3, 8, 1, 1), utc(2026, 3, 8, 1, 1)},
		{"window and hours never overlap in EDT", "+12125550100", "Asia/Tokyo", daily("10:00", "11:00"), utc(2026, 3, 8, 2, 0), time.Time{}},
		// Adelaide & Perth with a Perth window 18:00–22:00 (10:00–14:00
		// UTC): Adelaide closes at 10:30 UTC in ACDT, 11:30 in ACST.
		{"+61 8, window after Adelaide's close in ACDT", "+61881234567", "Australia/Perth", daily("18:00", "22:00"), utc(2026, 4, 4, 10, 30), utc(2026, 4, 5, 10, 0)},
		// A campaign window on Madrid's clock for an unknown number: the
		// hours run on Madrid too, 07:59 CEST on 2026-03-29.
		{"unknown number, campaign zone", "+883510012345", "Europe/Madrid", daily("00:00", "24:00"), utc(2026, 3, 29, 5, 59), utc(2026, 3, 29, 6, 0)},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, g := resolve(t, tc.number, "", tc.campZone, false)
			tc.sc.Timezone = tc.campZone
			win := newWindow(tc.sc)
			if got := nextCallable(win, day, g, tc.at); !got.Equal(tc.next) {
				t.Fatalf("nextCallable from %v = %v (%s), want %v", tc.at, got, localTimes(g, got), tc.next)
			}
			if got := reachable(t, win, day, g, tc.at); !got.Equal(tc.next) {
				t.Fatalf("the minute scan from %v finds %v, the table says %v", tc.at, got, tc.next)
			}
		})
	}
}

// reachable is nextCallable by brute force: the first minute boundary (or
// at itself) within a week at which the window is open on g's window clock
// and the hours on every one of g's zones, comparing wall clocks directly.
func reachable(t *testing.T, win, hours *window, g *zoneGroup, at time.Time) time.Time {
	t.Helper()
	inSlots := func(w *window, lt time.Time) bool {
		day, m := (int(lt.Weekday())+6)%7, lt.Hour()*60+lt.Minute()
		for _, s := range w.slots {
			if s.day == day && m >= s.start && m < s.end {
				return true
			}
		}
		return false
	}
	ok := func(u time.Time) bool {
		if win != nil && !inSlots(win, u.In(g.winLoc)) {
			return false
		}
		if hours == nil {
			return true
		}
		if len(g.hours) == 0 {
			return false
		}
		for _, l := range g.hours {
			if !inSlots(hours, u.In(l)) {
				return false
			}
		}
		return true
	}
	if ok(at) {
		return at
	}
	for u := at.Truncate(time.Minute).Add(time.Minute); u.Before(at.Add(8 * 24 * time.Hour)); u = u.Add(time.Minute) {
		if ok(u) {
			return u
		}
	}
	return time.Time{}
}

// localTimes describes t on each of g's clocks, for failure messages.
func localTimes(g *zoneGroup, t time.Time) string {
	if t.IsZero() {
		return "never"
	}
	var s string
	for i, l := range g.hours {
		if i == 3 {
			return s + ", ..."
		}
		if i > 0 {
			s += ", "
		}
		s += t.In(l).Format("Mon 15:04 MST")
	}
	return s
}

package workflow

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Built-in variable names: always available when rendering and never required
// from the contacts CSV.
const (
	VarPhoneNumber    = "phone_number"
	VarCallerNumber   = "caller_number"
	VarCampaignID     = "campaign_id"
	VarCurrentTime    = "current_time"
	VarCurrentWeekday = "current_weekday"
)

// Prefixes of the zoned built-ins (API.md 5.1, from the origin system):
// "current_time_<IANA zone>" and "current_weekday_<IANA zone>", the zone
// written as in the IANA database, slashes included
// ("current_time_America/New_York").
const (
	prefixCurrentTime    = VarCurrentTime + "_"
	prefixCurrentWeekday = VarCurrentWeekday + "_"
)

// Layouts of the time built-ins. current_time keeps the RFC 3339 form it has
// always had; current_time_<zone> is the origin system's form
// ("%Y-%m-%d %H:%M:%S %Z": "2026-11-21 19:04:35 EST").
const (
	layoutCurrentTime      = time.RFC3339
	layoutCurrentTimeZoned = "2006-01-02 15:04:05 MST"
)

// IsBuiltin reports whether name is one of the built-in variables:
// phone_number, caller_number, campaign_id, current_time, current_weekday,
// or current_time_<zone> / current_weekday_<zone> with a zone that
// time.LoadLocation knows ("Local" is not a zone). Names are case-sensitive.
func IsBuiltin(name string) bool {
	switch name {
	case VarPhoneNumber, VarCallerNumber, VarCampaignID, VarCurrentTime, VarCurrentWeekday:
		return true
	}
	if _, zone, ok := splitZoned(name); ok {
		_, err := loadZone(zone)
		return err == nil
	}
	return false
}

// splitZoned splits a zoned built-in name into whether it is the weekday
// one and its zone (possibly empty or unknown). ok is false when name has
// neither prefix.
func splitZoned(name string) (weekday bool, zone string, ok bool) {
	if zone, ok := strings.CutPrefix(name, prefixCurrentTime); ok {
		return false, zone, true
	}
	if zone, ok := strings.CutPrefix(name, prefixCurrentWeekday); ok {
		return true, zone, true
	}
	return false, "", false
}

// checkZoned returns, for a zoned built-in name, its location, or a
// non-empty reason when the zone is unknown. Other names give nil, "".
func checkZoned(name string) (*time.Location, string) {
	_, zone, ok := splitZoned(name)
	if !ok {
		return nil, ""
	}
	loc, err := loadZone(zone)
	if err != nil {
		return nil, fmt.Sprintf("unknown time zone %q in %q", zone, name)
	}
	return loc, ""
}

// zones caches the locations time.LoadLocation found, so validating a large
// definition that names one zone in every prompt reads the zone database
// once. Only successes are cached: the set of real zones is finite, while
// unknown names come from users and would grow the cache without bound.
var zones = struct {
	sync.RWMutex
	m map[string]*time.Location
}{m: map[string]*time.Location{}}

// errUnknownZone is returned by loadZone for names it refuses to look up.
var errUnknownZone = errors.New("unknown time zone")

// loadZone returns the location of the IANA zone name. It refuses, without
// touching the zone database, names that cannot be IANA names: empty,
// longer than 64 bytes, starting with "/", or with a byte outside
// [A-Za-z0-9/_+-] (so no ".." and no white space); and "Local", which
// time.LoadLocation would take as the server's own zone.
func loadZone(name string) (*time.Location, error) {
	zones.RLock()
	loc, ok := zones.m[name]
	zones.RUnlock()
	if ok {
		return loc, nil
	}
	if !zoneSyntax(name) {
		return nil, errUnknownZone
	}
	loc, err := time.LoadLocation(name)
	if err != nil {
		return nil, fmt.Errorf("load time zone: %w", err)
	}
	zones.Lock()
	zones.m[name] = loc
	zones.Unlock()
	return loc, nil
}

// zoneSyntax reports whether name is shaped like an IANA zone name.
func zoneSyntax(name string) bool {
	if name == "" || len(name) > 64 || name[0] == '/' || name == "Local" {
		return false
	}
	for i := 0; i < len(name); i++ {
		switch c := name[i]; {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9':
		case c == '/', c == '_', c == '+', c == '-':
		default:
			return false
		}
	}
	return true
}

// Builtins are the values of the built-in variables for one call. Unset
// values (empty strings, zero id, zero time) render as missing, so a
// default applies.
type Builtins struct {
	// PhoneNumber is the dialled number (E.164).
	PhoneNumber string
	// CallerNumber is the caller id the call is placed from.
	CallerNumber string
	// CampaignID is the campaign's id.
	CampaignID int64
	// CurrentTime is the time of the call. current_time is it formatted
	// with time.RFC3339 and current_weekday its English weekday name
	// ("Monday"), both in its own location (so pass it in the zone the text
	// should speak of), unless the template also uses a zoned built-in: then
	// both take the zone of the first zoned built-in of the template, as in
	// the origin system. current_time_<zone> is "2006-01-02 15:04:05 MST"
	// and current_weekday_<zone> the weekday name, in that zone.
	CurrentTime time.Time
}

// value returns the built-in value of name and whether name is a built-in.
// zone is the location plain current_time and current_weekday are given in
// (nil: CurrentTime's own location).
func (b Builtins) value(name string, zone *time.Location) (string, bool) {
	switch name {
	case VarPhoneNumber:
		return b.PhoneNumber, true
	case VarCallerNumber:
		return b.CallerNumber, true
	case VarCampaignID:
		if b.CampaignID == 0 {
			return "", true
		}
		return strconv.FormatInt(b.CampaignID, 10), true
	case VarCurrentTime, VarCurrentWeekday:
		if b.CurrentTime.IsZero() {
			return "", true
		}
		t := b.CurrentTime
		if zone != nil {
			t = t.In(zone)
		}
		if name == VarCurrentWeekday {
			return t.Weekday().String(), true
		}
		return t.Format(layoutCurrentTime), true
	}
	weekday, zoneName, ok := splitZoned(name)
	if !ok {
		return "", false
	}
	loc, err := loadZone(zoneName)
	if err != nil {
		// Not a built-in (as IsBuiltin says); ParseTemplate rejects such a
		// name, so only a hand-made caller gets here.
		return "", false
	}
	if b.CurrentTime.IsZero() {
		return "", true
	}
	t := b.CurrentTime.In(loc)
	if weekday {
		return t.Weekday().String(), true
	}
	return t.Format(layoutCurrentTimeZoned), true
}

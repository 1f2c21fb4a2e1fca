package phone

import "github.com/nyaruka/phonenumbers"

// Zones returns the IANA time zones libphonenumber's numbering-plan data
// gives for an E.164 number: one for most geographic ranges, several for a
// range that spans zones (a US toll-free number, an Australian region, a
// Mexican mobile), nil when the data knows none (it says Etc/Unknown, as for
// international networks). The slice is shared: callers must not change it.
func Zones(e164 string) []string {
	zones, err := phonenumbers.GetTimezonesForPrefix(e164)
	if err != nil || len(zones) == 0 || (len(zones) == 1 && zones[0] == phonenumbers.UNKNOWN_TIMEZONE) {
		return nil
	}
	return zones
}

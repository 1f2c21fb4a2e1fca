package store

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"strings"
)

// Zone keys. A contact's timezone (contacts.timezone, copied to each of its
// attempts) is what the dialer groups its queue by: the contact's timezone
// column when it has one; else, when the numbering plan gives time zones
// for its number, the key of that zone set ("~" and 12 hex digits of a
// hash of the sorted zones), the set itself kept once per campaign in
// campaigns.zone_sets; else "". So the claim query can leave out, in one
// index walk, every contact whose calling hours or window are closed,
// whatever the campaign's size.

// ZoneKeyPrefix starts every zone-set key; IANA names never start with it.
const ZoneKeyPrefix = "~"

// ZoneKey returns the key of zone set zones.
func ZoneKey(zones []string) string {
	h := sha256.Sum256([]byte(strings.Join(zones, " ")))
	return ZoneKeyPrefix + hex.EncodeToString(h[:6])
}

// IsZoneKey reports whether a contact timezone is a zone-set key.
func IsZoneKey(tz string) bool { return strings.HasPrefix(tz, ZoneKeyPrefix) }

// zoneKey returns zones' key, recording the set.
func (imp *importer) zoneKey(zones []string) string {
	if k, ok := imp.zoneKeys[&zones[0]]; ok {
		return k
	}
	k := ZoneKey(zones)
	imp.zoneSets[k] = zones
	imp.zoneKeys[&zones[0]] = k
	return k
}

// zoneSetsOf returns the zone sets of campaign id whose keys are in keys.
func (db *DB) zoneSetsOf(ctx context.Context, id int64, keys map[string]int64) (map[string][]string, error) {
	raw, err := db.rq.CampaignZoneSets(ctx, id)
	if err != nil {
		return nil, fmt.Errorf("zone sets of campaign %d: %w", id, err)
	}
	all := map[string][]string{}
	if err := json.Unmarshal([]byte(raw), &all); err != nil {
		return nil, fmt.Errorf("zone sets of campaign %d: %w", id, err)
	}
	out := map[string][]string{}
	for k := range keys {
		if set, ok := all[k]; ok {
			out[k] = set
		}
	}
	return out, nil
}

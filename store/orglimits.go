package store

import (
	"context"
	"database/sql"
	"fmt"

	"github.com/outdial/outdial/store/sqlcdb"
)

// Organization-wide concurrency (API.md 19): at most the organization's
// max_concurrent_calls of its calls dialing or in flight, counting every
// campaign on every node, shared fairly between its running campaigns.
// The count is the database's, taken in the claim's transaction under a
// lock on the organization's slots (a transaction-level advisory lock on
// PostgreSQL; SQLite's one writer holds it already), so claims of two
// campaigns of one organization on two nodes take turns and never exceed
// the limit together.

// MaxConcurrentCallsLimit bounds an organization's max_concurrent_calls.
const MaxConcurrentCallsLimit = 100000

// OrganizationLimits returns the organization's max_concurrent_calls; nil
// when it has no limit. An organization that does not exist is ENOTFOUND.
func (db *DB) OrganizationLimits(ctx context.Context, org int64) (*int, error) {
	n, err := db.rq.GetOrganizationLimits(ctx, org)
	if errNoRows(err) {
		return nil, Errorf(ENOTFOUND, "organization %d not found", org)
	}
	if err != nil {
		return nil, fmt.Errorf("organization limits: %w", err)
	}
	return intOrNil(n), nil
}

// SetOrganizationLimits sets the organization's max_concurrent_calls (nil:
// no limit; otherwise 1..MaxConcurrentCallsLimit, else EINVALID) and
// returns it before and after.
func (db *DB) SetOrganizationLimits(ctx context.Context, org int64, limit *int) (before, after *int, err error) {
	if limit != nil && (*limit < 1 || *limit > MaxConcurrentCallsLimit) {
		return nil, nil, Errorf(EINVALID, "max_concurrent_calls must be between 1 and %d", MaxConcurrentCallsLimit)
	}
	err = db.inTx(ctx, func(q sqlcdb.Querier) error {
		if err := lockOrganization(ctx, q, org); err != nil {
			return err
		}
		old, err := q.GetOrganizationLimits(ctx, org)
		if errNoRows(err) {
			return Errorf(ENOTFOUND, "organization %d not found", org)
		}
		if err != nil {
			return err
		}
		var v sql.NullInt64
		if limit != nil {
			v = sql.NullInt64{Int64: int64(*limit), Valid: true}
		}
		if _, err := q.SetOrganizationLimits(ctx, sqlcdb.SetOrganizationLimitsParams{MaxConcurrentCalls: v, ID: org}); err != nil {
			return err
		}
		before, after = intOrNil(old), intOrNil(v)
		return nil
	})
	if err != nil {
		return nil, nil, fmt.Errorf("set organization limits: %w", err)
	}
	return before, after, nil
}

func intOrNil(n sql.NullInt64) *int {
	if !n.Valid {
		return nil
	}
	v := int(n.Int64)
	return &v
}

// OrgShare is the organization's limit a claim of one of its campaigns
// is made under (a zero Limit: none).
type OrgShare struct {
	Organization int64
	Limit        int
}

// orgAllowance returns how many attempts campaign may claim now under
// share: the organization's free slots, less those its other ready
// campaigns below their fair share (⌊limit / ready campaigns⌋) are owed,
// but never less than what campaign itself is owed. A campaign with 10,000
// ready contacts so takes nothing a campaign with 10 is owed: as calls end,
// the freed slots go to the one below its share first.
func orgAllowance(ctx context.Context, q sqlcdb.Querier, share OrgShare, campaign int64, now int64) (int, error) {
	if err := lockKey(ctx, q, fmt.Sprintf("org_slots/%d", share.Organization)); err != nil {
		return 0, err
	}
	active, err := q.OrganizationActiveAttempts(ctx, share.Organization)
	if err != nil {
		return 0, fmt.Errorf("organization active attempts: %w", err)
	}
	ready, err := q.OrganizationReadyCampaigns(ctx, sqlcdb.OrganizationReadyCampaignsParams{
		OrganizationID: share.Organization, Now: sql.NullInt64{Int64: now, Valid: true}})
	if err != nil {
		return 0, fmt.Errorf("organization ready campaigns: %w", err)
	}
	inFlight := make(map[int64]int, len(active))
	total := 0
	for _, a := range active {
		inFlight[a.CampaignID] = int(a.InFlight)
		total += int(a.InFlight)
	}
	caps := make(map[int64]int, len(ready))
	ids := make([]int64, len(ready))
	for i, r := range ready {
		ids[i], caps[r.ID] = r.ID, int(r.MaxConcurrency)
	}
	return fairShare(share.Limit, total, campaign, inFlight, ids, caps), nil
}

// fairShare is orgAllowance's rule: limit, the organization's calls in
// flight in all (total) and per campaign (inFlight), the campaigns ready
// to dial (campaign counts as one, listed or not) and their own
// max_concurrency (caps: a campaign is owed no more than it may use).
func fairShare(limit, total int, campaign int64, inFlight map[int64]int, ready []int64, caps map[int64]int) int {
	free := limit - total
	if free <= 0 {
		return 0
	}
	n := len(ready)
	listed := false
	for _, id := range ready {
		listed = listed || id == campaign
	}
	if !listed {
		n++
	}
	fair := limit / n
	owed := 0 // to the other ready campaigns below their share
	for _, id := range ready {
		if id != campaign {
			share := fair
			if c, ok := caps[id]; ok && c < share {
				share = c
			}
			owed += max(0, share-inFlight[id])
		}
	}
	own := max(0, fair-inFlight[campaign])
	return min(free, max(own, free-owed))
}

package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"maps"
	"reflect"
	"slices"
	"time"

	"github.com/outdial/outdial/store/sqlcdb"
)

// An organization's compliance policy (API.md 12.2, 12.3, 19): calling
// hours in the callee's local time, the cross-campaign attempt cap and the
// abandoned-calls policy. It is
// versioned: every update increments the version and logs what changed and
// which API key changed it, in the same transaction.

// CallingHours is the window a call may start in, on the callee's clock.
type CallingHours struct {
	Enabled bool   `json:"enabled"`
	Start   string `json:"start"`
	End     string `json:"end"`
	// Days are 0 = Monday .. 6 = Sunday.
	Days []int `json:"days"`
}

// AttemptCap bounds the calls to one number in a rolling window.
type AttemptCap struct {
	Enabled     bool `json:"enabled"`
	MaxAttempts int  `json:"max_attempts"`
	WindowHours int  `json:"window_hours"`
}

// AbandonmentPolicy is the abandoned-calls policy (API.md 19). The figures
// (the verdict with AbandonAfterMs, the rates) are measured whether it is
// enabled or not; Enabled turns on the pause at MaxRate and the recall
// hold.
type AbandonmentPolicy struct {
	Enabled bool `json:"enabled"`
	// AbandonAfterMs is how long a person who answered may wait for the
	// agent's first audio before the call counts as abandoned.
	AbandonAfterMs int `json:"abandon_after_ms"`
	// MaxRate is the abandoned / person-answered share over WindowHours
	// above which a campaign pauses itself, once it has MinAnswered
	// person-answered calls in the window.
	MaxRate     float64 `json:"max_rate"`
	WindowHours int     `json:"window_hours"`
	MinAnswered int     `json:"min_answered"`
	// RecallAfterHours is how long after an abandoned call's answer its
	// number is not called again by any campaign of the organization.
	RecallAfterHours int `json:"recall_after_hours"`
}

// Policy is an organization's compliance policy.
type Policy struct {
	CallingHours CallingHours      `json:"calling_hours"`
	AttemptCap   AttemptCap        `json:"attempt_cap"`
	Abandonment  AbandonmentPolicy `json:"abandonment"`
}

// MaxRecallAfterHours is the longest recall hold; abandoned calls answered
// longer ago are forgotten.
const MaxRecallAfterHours = 720

// MaxCapWindowHours is the longest attempt-cap window; placements older than
// it are forgotten.
const MaxCapWindowHours = 720

// DefaultPolicy is the policy of an organization that never changed it:
// calls start between 08:00 and 21:00 callee-local every day; no cap; the
// abandonment policy off (its abandon_after_ms, 2000, applies all the same).
func DefaultPolicy() Policy {
	return Policy{
		CallingHours: CallingHours{Enabled: true, Start: "08:00", End: "21:00", Days: []int{0, 1, 2, 3, 4, 5, 6}},
		AttemptCap:   AttemptCap{Enabled: false, MaxAttempts: 3, WindowHours: 24},
		Abandonment: AbandonmentPolicy{Enabled: false, AbandonAfterMs: int(DefaultAbandonAfter / time.Millisecond),
			MaxRate: 0.03, WindowHours: 24, MinAnswered: 100, RecallAfterHours: 72},
	}
}

// VersionedPolicy is a policy with its version (1 for the defaults).
type VersionedPolicy struct {
	Policy
	Version   int64
	UpdatedAt *time.Time
}

// PolicyChange is one entry of a policy's change log.
type PolicyChange struct {
	ID        int64
	Version   int64
	ChangedAt time.Time
	APIKeyID  *int64
	// Changes maps a field path ("calling_hours.start") to {"from", "to"}.
	Changes map[string]map[string]any
}

// CompliancePolicy returns org's policy.
func (db *DB) CompliancePolicy(ctx context.Context, org int64) (VersionedPolicy, error) {
	return policyOf(ctx, db.rq, org)
}

func policyOf(ctx context.Context, q sqlcdb.Querier, org int64) (VersionedPolicy, error) {
	r, err := q.GetCompliancePolicy(ctx, org)
	if errNoRows(err) {
		return VersionedPolicy{Policy: DefaultPolicy(), Version: 1}, nil
	}
	if err != nil {
		return VersionedPolicy{}, fmt.Errorf("compliance policy: %w", err)
	}
	vp := VersionedPolicy{Policy: DefaultPolicy(), Version: r.Version}
	if err := json.Unmarshal([]byte(r.Policy), &vp.Policy); err != nil {
		return VersionedPolicy{}, fmt.Errorf("compliance policy of organization %d: %w", org, err)
	}
	t := fromMS(r.UpdatedAt)
	vp.UpdatedAt = &t
	return vp, nil
}

// UpdateCompliancePolicy applies change to org's policy and stores the
// result as the next version, logging the fields that changed and the API
// key apiKeyID (0: none). An error from change stores nothing.
func (db *DB) UpdateCompliancePolicy(ctx context.Context, org, apiKeyID int64, change func(p *Policy) error) (VersionedPolicy, error) {
	var out VersionedPolicy
	err := db.inTx(ctx, func(q sqlcdb.Querier) error {
		// Read under the organization's lock: two changes at once (on two
		// nodes) both read version n, both stored n+1, and the second
		// undid the first's change (TestRaceCompliancePolicy).
		if err := lockOrganization(ctx, q, org); err != nil {
			return err
		}
		cur, err := policyOf(ctx, q, org)
		if err != nil {
			return err
		}
		next := cur.Policy
		next.CallingHours.Days = slices.Clone(cur.CallingHours.Days)
		if err := change(&next); err != nil {
			return err
		}
		now := db.Now()
		version := cur.Version + 1
		if err := q.SaveCompliancePolicy(ctx, sqlcdb.SaveCompliancePolicyParams{OrganizationID: org, Version: version,
			Policy: mustJSON(next), UpdatedAt: now.UnixMilli()}); err != nil {
			return fmt.Errorf("save compliance policy: %w", err)
		}
		key := sql.NullInt64{Int64: apiKeyID, Valid: apiKeyID != 0}
		if err := q.InsertPolicyChange(ctx, sqlcdb.InsertPolicyChangeParams{OrganizationID: org, Version: version,
			ChangedAt: now.UnixMilli(), ApiKeyID: key, Changes: mustJSON(policyDiff(cur.Policy, next))}); err != nil {
			return fmt.Errorf("log compliance policy change: %w", err)
		}
		t := fromMS(now.UnixMilli())
		out = VersionedPolicy{Policy: next, Version: version, UpdatedAt: &t}
		return nil
	})
	return out, err
}

// policyDiff lists the fields of b that differ from a.
func policyDiff(a, b Policy) map[string]map[string]any {
	fa, fb := flatten(a), flatten(b)
	out := map[string]map[string]any{}
	for _, k := range slices.Sorted(maps.Keys(fb)) {
		if !reflect.DeepEqual(fa[k], fb[k]) {
			out[k] = map[string]any{"from": fa[k], "to": fb[k]}
		}
	}
	return out
}

// flatten maps every leaf of p's JSON to its dotted path.
func flatten(p Policy) map[string]any {
	var m map[string]any
	_ = json.Unmarshal([]byte(mustJSON(p)), &m)
	out := map[string]any{}
	for section, v := range m {
		fields, _ := v.(map[string]any)
		for f, fv := range fields {
			out[section+"."+f] = fv
		}
	}
	return out
}

// PolicyChanges returns org's policy changes with an id below beforeID
// (0: from the newest), newest first.
func (db *DB) PolicyChanges(ctx context.Context, org int64, beforeID int64, limit int) ([]PolicyChange, error) {
	if beforeID <= 0 {
		beforeID = 1 << 62
	}
	rows, err := db.rq.ListPolicyChanges(ctx, sqlcdb.ListPolicyChangesParams{OrganizationID: org, BeforeID: beforeID, MaxRows: int64(limit)})
	if err != nil {
		return nil, fmt.Errorf("policy changes: %w", err)
	}
	out := make([]PolicyChange, len(rows))
	for i, r := range rows {
		out[i] = PolicyChange{ID: r.ID, Version: r.Version, ChangedAt: fromMS(r.ChangedAt), APIKeyID: optInt(r.ApiKeyID)}
		if err := json.Unmarshal([]byte(r.Changes), &out[i].Changes); err != nil {
			return nil, fmt.Errorf("policy change %d: %w", r.ID, err)
		}
	}
	return out, nil
}

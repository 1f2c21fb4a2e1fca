package store

import (
	"context"
	"fmt"
)

// CampaignOrganization returns the organization campaign id belongs to, or
// ENOTFOUND. The opt-out endpoint (API.md 12.4) uses it to find whose
// suppression list an attempt's number goes on: its request carries the
// attempt's webhook token, not an API key.
func (db *DB) CampaignOrganization(ctx context.Context, id int64) (int64, error) {
	org, err := db.rq.OrganizationOfCampaign(ctx, id)
	if errNoRows(err) {
		return 0, Errorf(ENOTFOUND, "campaign %d not found", id)
	}
	if err != nil {
		return 0, fmt.Errorf("organization of campaign %d: %w", id, err)
	}
	return org, nil
}

package dialer

import (
	"context"

	"github.com/outdial/outdial/dialer/workflow"
)

// campaignInfo is what never changes about a campaign once created: its
// organization, telephony configuration and workflow snapshot. Webhooks need
// only this, so it is cached for the life of the process instead of reading
// and decoding the campaign row for every status event.
type campaignInfo struct {
	id       int64
	orgID    int64
	configID int64
	def      *workflow.Definition // nil when the stored definition does not parse
}

func (e *Engine) campaignInfo(ctx context.Context, id int64) (*campaignInfo, error) {
	e.mu.Lock()
	ci := e.infos[id]
	e.mu.Unlock()
	if ci != nil {
		return ci, nil
	}
	c, err := e.db.CampaignByID(ctx, id)
	if err != nil {
		return nil, err
	}
	ci = &campaignInfo{id: c.ID, orgID: c.OrganizationID, configID: c.TelephonyConfigurationID}
	if def, err := workflow.Parse(c.WorkflowDefinition); err == nil {
		ci.def = def
	}
	e.mu.Lock()
	// Cached while the campaign has a runner (evict.go drops it when the
	// runner ends): a late webhook of a finished campaign reads it again
	// instead of keeping it for good.
	if e.runners[id] != nil {
		if e.infos == nil || len(e.infos) >= maxCachedCampaigns {
			e.infos = map[int64]*campaignInfo{}
		}
		e.infos[id] = ci
	}
	e.mu.Unlock()
	return ci, nil
}

package main

import (
	"context"
	"fmt"
	"time"

	"github.com/outdial/outdial/store"
)

// workflow is the campaign's workflow: a greeting, never spoken here.
const workflow = `{"nodes":[
 {"id":"s","type":"startCall","data":{"name":"Start","prompt":"Greet","greeting":"Hello {{first_name}}"}},
 {"id":"e","type":"endCall","data":{"name":"End","prompt":"Bye"}}],
 "edges":[{"id":"e1","source":"s","target":"e","data":{"label":"done","condition":"over"}}]}`

// prepare creates, for sc's provider, an organization with a default
// configuration, a caller id, a workflow and a running campaign of n
// contacts, then claims every attempt and records it placed under
// sc.callID, as the dialer does once the provider took the call. It returns
// the campaign and its attempts in contact order.
func (s *service) prepare(ctx context.Context, sc scheme, n int) (int64, []*store.Attempt, error) {
	db := s.db
	k, _, err := db.CreateAPIKey(ctx, "bench-"+sc.name, "hookbench", store.RoleAdmin)
	if err != nil {
		return 0, nil, err
	}
	org := k.OrganizationID
	cfg, err := db.CreateTelephonyConfig(ctx, org, store.TelephonyConfig{Name: sc.name, Provider: sc.name,
		IsDefaultOutbound: true, Credentials: sc.creds()})
	if err != nil {
		return 0, nil, err
	}
	if _, err := db.AddPhoneNumber(ctx, org, cfg.ID, store.PhoneNumber{Address: "+14155550100",
		AddressNormalized: "+14155550100", AddressType: store.AddressPSTN, IsActive: true, IsDefaultCallerID: true}); err != nil {
		return 0, nil, err
	}
	wf, err := db.CreateWorkflow(ctx, org, "bench", []byte(workflow))
	if err != nil {
		return 0, nil, err
	}
	c, err := db.CreateCampaign(ctx, org, store.NewCampaign{
		Settings:   store.Settings{Name: "hookbench", MaxConcurrency: 1000, RateLimitPerSecond: 1000},
		WorkflowID: wf.ID, WorkflowName: "bench", WorkflowDefinition: []byte(workflow),
		TelephonyConfigurationID: cfg.ID, SourceID: "hookbench",
	}, func(add func(store.ContactInput) error) ([]string, error) {
		for i := 0; i < n; i++ {
			if err := add(store.ContactInput{Row: i + 2, PhoneNumber: fmt.Sprintf("+1415%07d", i),
				Context: map[string]string{"first_name": fmt.Sprintf("P%d", i)}}); err != nil {
				return nil, err
			}
		}
		return []string{"phone_number", "first_name"}, nil
	})
	if err != nil {
		return 0, nil, err
	}
	// Started in the store only: the engine is not woken, so it places no
	// call of its own; the attempts are claimed here instead.
	if _, err := db.TransitionCampaign(ctx, org, c.ID, store.OpStart); err != nil {
		return 0, nil, err
	}
	tzs := c.Timezones
	lease, ok, err := db.AcquireLease(ctx, c.ID, "hookbench", time.Hour)
	if err != nil || !ok {
		return 0, nil, fmt.Errorf("acquire lease: ok=%v, %v", ok, err)
	}
	var out []*store.Attempt
	deadline := time.Now().Add(time.Hour)
	for len(out) < n {
		list, err := db.ClaimAttempts(ctx, lease, time.Now(), time.Now().Add(time.Hour), tzs, 1000)
		if err != nil {
			return 0, nil, err
		}
		if len(list) == 0 {
			return 0, nil, fmt.Errorf("claimed %d of %d attempts", len(out), n)
		}
		for _, a := range list {
			if _, err := db.MarkPlaced(ctx, store.Placement{AttemptID: a.ID, CampaignID: c.ID, OrganizationID: c.OrganizationID,
				PhoneNumber: a.PhoneNumber, ProviderCallID: sc.callID(len(out)), CallerID: "+14155550100",
				At: time.Now(), Deadline: deadline}); err != nil {
				return 0, nil, err
			}
			out = append(out, a)
		}
	}
	return c.ID, out, nil
}

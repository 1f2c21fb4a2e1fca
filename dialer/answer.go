package dialer

import (
	"context"
	"encoding/json"
	"fmt"
	"net/url"

	"github.com/outdial/outdial/dialer/carrier"
	"github.com/outdial/outdial/dialer/workflow"
	"github.com/outdial/outdial/store"
)

// answerFor builds the answer of an answered attempt: the workflow's
// agent_url (else the server's --agent-url) as a media stream, else the
// start node's greeting rendered for the contact. It always carries the
// attempt's webhook token, opt-out URL and agent events URL, which the
// carriers hand the voice agent beside the attempt id (API.md 12.4, 19).
func (e *Engine) answerFor(ctx context.Context, c *campaignInfo, a *store.Attempt) (carrier.Answer, error) {
	contact, err := e.db.GetContact(ctx, a.ContactID)
	if err != nil {
		return carrier.Answer{}, fmt.Errorf("contact of attempt: %w", err)
	}
	vars := map[string]string{}
	if err := json.Unmarshal(contact.Context, &vars); err != nil {
		return carrier.Answer{}, fmt.Errorf("contact context: %w", err)
	}
	token := e.Token(a.ID)
	ans := carrier.Answer{AttemptID: a.ID, Context: vars, AgentURL: e.cfg.AgentURL,
		OptOutToken: token, OptOutURL: e.optOutURL(a.ID, token), AgentEventsURL: e.agentEventsURL(a.ID, token)}
	def := c.def
	if def == nil {
		return ans, nil
	}
	ans.AgentURL = e.agentURL(c)
	caller := ""
	if a.CallerID != nil {
		caller = *a.CallerID
	}
	greeting, err := workflow.Render(def.Greeting(), vars, workflow.Builtins{
		PhoneNumber: a.PhoneNumber, CallerNumber: caller, CampaignID: c.id, CurrentTime: e.now().UTC(),
	})
	if err == nil {
		ans.Greeting = greeting
	}
	return ans, nil
}

// optOutURL is the URL the voice agent POSTs to to opt the callee of
// attempt id out (API.md 12.4): the public URL, then
// /api/v1/telephony/opt-out/<id>?t=<token> with the attempt's webhook token.
func (e *Engine) optOutURL(attemptID int64, token string) string {
	return fmt.Sprintf("%s/api/v1/telephony/opt-out/%d?t=%s", e.cfg.PublicURL, attemptID, url.QueryEscape(token))
}

// agentEventsURL is the URL the voice agent POSTs its events to for
// attempt id (API.md 19): the public URL, then
// /api/v1/telephony/agent/<id>?t=<token> with the attempt's webhook token.
func (e *Engine) agentEventsURL(attemptID int64, token string) string {
	return fmt.Sprintf("%s/api/v1/telephony/agent/%d?t=%s", e.cfg.PublicURL, attemptID, url.QueryEscape(token))
}

// agentURL is the voice agent the answers of campaign c connect to: the
// workflow's agent_url, else the server's --agent-url; "" when neither is
// set and the answer speaks the greeting (API.md 6).
func (e *Engine) agentURL(c *campaignInfo) string {
	if c != nil && c.def != nil {
		if u := c.def.AgentURL(); u != "" {
			return u
		}
	}
	return e.cfg.AgentURL
}

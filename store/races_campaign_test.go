package store_test

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/outdial/outdial/store"
)

// transitionTo is the state each transition's log entry moves to.
var transitionTo = map[string]string{
	"campaign_started":   store.StateRunning,
	"campaign_paused":    store.StatePaused,
	"campaign_resumed":   store.StateRunning,
	"campaign_cancelled": store.StateCancelled,
}

// opFrom lists the states each operation moves a campaign from.
var opFrom = map[string][]string{
	store.OpStart:  {store.StateDraft, store.StatePaused},
	store.OpPause:  {store.StateRunning},
	store.OpResume: {store.StatePaused},
	store.OpCancel: {store.StateDraft, store.StateRunning, store.StatePaused},
}

// TestRaceTransitions: start, pause, resume and cancel racing on two nodes
// apply in some order, one at a time: the log's entries, in order, each
// leave the state the one before entered (from_state), the campaign ends
// in the last one's, and every refusal names a state that does not allow
// its operation.
func TestRaceTransitions(t *testing.T) {
	ctx := context.Background()
	db, nodes := twoNodes(t)
	org := newOrg(t, db.DB, "acme")
	raw := rawDB(t, db.path)
	// Cancel ends a campaign: one operation in eight.
	ops := []string{store.OpStart, store.OpPause, store.OpResume, store.OpStart, store.OpPause, store.OpResume, store.OpPause, store.OpCancel}
	for round := range 6 {
		c, err := db.CreateCampaign(ctx, org, newCampaignInput(fmt.Sprint("race ", round)), feedContacts(1, nil, nil))
		if err != nil {
			t.Fatal(err)
		}
		errs := make([]error, 3*len(ops))
		race(len(errs), func(i int) {
			_, errs[i] = nodes[i/len(ops)%2].TransitionCampaign(ctx, org, c.ID, ops[i%len(ops)])
		})
		done := 0
		for i, err := range errs {
			op := ops[i%len(ops)]
			if err == nil {
				done++
				continue
			}
			msg := store.ErrorMessage(err)
			_, rest, _ := strings.Cut(msg, " is ")
			state, _, _ := strings.Cut(rest, ";")
			if store.ErrorCode(err) != store.ECONFLICT || slices.Contains(opFrom[op], state) {
				t.Errorf("round %d: %s refused: %v", round, op, err)
			}
		}
		rows, err := raw.Query("SELECT event, details FROM campaign_logs WHERE campaign_id = $1 ORDER BY id", c.ID)
		if err != nil {
			t.Fatal(err)
		}
		state, logged := store.StateDraft, 0
		for rows.Next() {
			var event, details string
			if err := rows.Scan(&event, &details); err != nil {
				t.Fatal(err)
			}
			to, ok := transitionTo[event]
			if !ok {
				continue
			}
			var d struct {
				From string `json:"from_state"`
			}
			if err := json.Unmarshal([]byte(details), &d); err != nil {
				t.Fatal(err)
			}
			if d.From != state {
				t.Errorf("round %d: %s logged from %s, but the campaign was %s", round, event, d.From, state)
			}
			state = to
			logged++
		}
		if err := rows.Err(); err != nil {
			t.Fatal(err)
		}
		rows.Close()
		got, err := db.GetCampaign(ctx, org, c.ID)
		if err != nil {
			t.Fatal(err)
		}
		if got.State != state || logged != done {
			t.Fatalf("round %d: campaign %s after %d transitions (%d logged), want the last logged state %s", round, got.State, done, logged, state)
		}
	}
}

// TestRaceCampaignSettings: settings changes racing on two nodes each start
// from the settings the one before left: none is lost.
func TestRaceCampaignSettings(t *testing.T) {
	ctx := context.Background()
	db, nodes := twoNodes(t)
	org := newOrg(t, db.DB, "acme")
	c, err := db.CreateCampaign(ctx, org, newCampaignInput("race"), feedContacts(1, nil, nil))
	if err != nil {
		t.Fatal(err)
	}
	const changes = 24
	errs := make([]error, changes)
	race(changes, func(i int) {
		_, errs[i] = nodes[i%2].UpdateCampaignSettings(ctx, org, c.ID, func(s *store.Settings) error {
			s.MaxConcurrency++
			return nil
		})
	})
	for i, err := range errs {
		if err != nil {
			t.Fatalf("change %d: %v", i, err)
		}
	}
	got, err := db.GetCampaign(ctx, org, c.ID)
	if err != nil {
		t.Fatal(err)
	}
	if want := c.MaxConcurrency + changes; got.MaxConcurrency != want {
		t.Fatalf("max_concurrency = %d after %d increments from %d, want %d", got.MaxConcurrency, changes, c.MaxConcurrency, want)
	}
}

// TestRaceWorkflowUpdate: renames racing on two nodes with a definition
// change keep the definition change: a rename writes the name alone.
func TestRaceWorkflowUpdate(t *testing.T) {
	ctx := context.Background()
	db, nodes := twoNodes(t)
	org := newOrg(t, db.DB, "acme")
	for round := range 4 {
		w, err := db.CreateWorkflow(ctx, org, fmt.Sprint("w", round), []byte(`{"v":0}`))
		if err != nil {
			t.Fatal(err)
		}
		names := map[string]bool{}
		for i := 1; i < 12; i++ {
			names[fmt.Sprintf("w%d-%d", round, i)] = true
		}
		errs := make([]error, 12)
		race(len(errs), func(i int) {
			if i == 0 {
				_, errs[i] = nodes[0].UpdateWorkflow(ctx, org, w.ID, nil, []byte(`{"v":1}`))
				return
			}
			name := fmt.Sprintf("w%d-%d", round, i)
			_, errs[i] = nodes[i%2].UpdateWorkflow(ctx, org, w.ID, &name, nil)
		})
		for i, err := range errs {
			if err != nil {
				t.Fatalf("round %d: update %d: %v", round, i, err)
			}
		}
		got, err := db.GetWorkflow(ctx, org, w.ID)
		if err != nil {
			t.Fatal(err)
		}
		if string(got.Definition) != `{"v":1}` || !names[got.Name] {
			t.Fatalf("round %d: workflow %q %s, want one of the new names and the new definition", round, got.Name, got.Definition)
		}
	}
}

package dialer

import (
	"context"
	"log/slog"
	"time"

	"github.com/outdial/outdial/dialer/carrier"
	"github.com/outdial/outdial/store"
)

// expire reconciles the runner's in-flight attempts past their deadline:
// the provider's status when it can be asked, else unknown. An attempt
// whose requeue the store refused is left alone: it was never sent, and is
// put back once the store takes it (requeue.go).
func (r *runner) expire(ctx context.Context, now time.Time) {
	e := r.e
	list, err := e.db.ExpiredAttempts(ctx, r.id, now)
	if err != nil {
		e.log.Error("dialer: expired attempts", slog.String("error", err.Error()))
		return
	}
	for _, a := range list {
		if r.cs.refused.has(a.ID) {
			continue
		}
		e.reconcile(ctx, r.c, a, "no final status before the deadline")
	}
	d, err := e.db.NextDeadline(ctx, r.id)
	if err == nil {
		if !d.IsZero() && !d.After(now) {
			// An overdue deadline that could not be settled (a refused
			// write) is looked at again a second later, not in a loop.
			d = now.Add(time.Second)
		}
		r.setDeadline(d)
	}
}

// reconcile asks the provider for an attempt's status and applies it when
// final; otherwise (or when the provider cannot say) the attempt ends
// unknown and its call, if the provider has one, is hung up. The call is
// looked up by the id the provider gave (its answer, or a webhook of an
// unconfirmed request), else by the id derived from the attempt
// (carrier.CallIDDeriver).
func (e *Engine) reconcile(ctx context.Context, c *store.Campaign, a *store.Attempt, why string) {
	car, _, err := e.carrierFor(ctx, c.OrganizationID, c.TelephonyConfigurationID)
	if err != nil {
		car = nil
	}
	callID := ""
	if a.ProviderCallID != nil {
		callID = *a.ProviderCallID
	}
	if d, ok := car.(carrier.CallIDDeriver); ok && callID == "" {
		callID = d.CallID(a.ID)
	}
	if car != nil && callID != "" {
		if st, err := car.Query(ctx, callID); err == nil && st.Final {
			if st.ProviderCallID == "" {
				st.ProviderCallID = callID
			}
			e.finish(ctx, a.CampaignID, a.ID, st, "", fromProvider)
			return
		}
	}
	e.finish(ctx, a.CampaignID, a.ID, carrier.Status{Final: true, Outcome: carrier.OutcomeUnknown, Raw: "unknown"}, why, fromService)
	if car != nil && callID != "" {
		// The call may still be queued, ringing or up at the provider
		// (a Plivo request still queued rings later): it is ended, so no
		// call outlives its attempt.
		if err := car.HangUp(ctx, callID); err != nil {
			e.log.Warn("dialer: hang up a call past its deadline", slog.Int64("attempt_id", a.ID), slog.String("error", err.Error()))
		}
	}
}

// takeOver settles the attempts of campaign id the previous holder of its
// lease l left unfinished (a process that stopped or died, this node's
// previous life after a restart, another node), before this node dials it.
// A dialing attempt's request may or may not have reached the provider;
// with no provider call id to ask about it ends unknown and is never
// placed again. One whose call id is known (a status webhook came before
// the holder could record the placement) was placed: it is recorded in
// flight like the others. An in-flight attempt is asked about (unless an
// event stream shared by the nodes follows it); a final answer is applied,
// and the others stay in flight (their statuses still arrive, on any node,
// and the deadline reconciles them).
func (e *Engine) takeOver(ctx context.Context, id int64, l store.Lease) error {
	list, err := e.db.UnfinishedAttemptsOf(ctx, id)
	if err != nil || len(list) == 0 {
		return err
	}
	c, err := e.db.CampaignByID(ctx, id)
	if err != nil {
		return err
	}
	for _, a := range list {
		if a.State == store.AttemptDialing && a.ProviderCallID == nil {
			if e.followDerived(ctx, c, a, l) {
				continue
			}
			e.finish(ctx, a.CampaignID, a.ID, carrier.Status{Final: true, Outcome: carrier.OutcomeUnknown, Raw: "interrupted"},
				"the service stopped while the call was being placed; not placed again", fromService)
			continue
		}
		if a.ProviderCallID == nil {
			continue
		}
		if a.State == store.AttemptDialing {
			deadline := e.now().Add(e.callDeadline())
			if _, err := e.db.MarkPlaced(ctx, store.Placement{AttemptID: a.ID, CampaignID: c.ID, OrganizationID: c.OrganizationID,
				PhoneNumber: a.PhoneNumber, ProviderCallID: *a.ProviderCallID, At: e.now(), Deadline: deadline, Lease: l}); err != nil {
				return err
			}
		}
		car, _, err := e.carrierFor(ctx, c.OrganizationID, c.TelephonyConfigurationID)
		if err != nil {
			continue
		}
		if _, ok := car.(carrier.SharedEventSource); ok && e.db.Shared() {
			// The configuration's event stream follows the call, on
			// whichever node holds it (streams.go), and looks up every
			// call in flight when it connects; a lookup here, where the
			// call may not be followed, could only end it knowing less
			// (a call gone, not known answered, ends unknown).
			continue
		}
		if st, err := car.Query(ctx, *a.ProviderCallID); err == nil && st.Final {
			e.finish(ctx, a.CampaignID, a.ID, st, "", fromProvider)
		}
	}
	return nil
}

// followDerived looks up, with its provider, an attempt left dialing whose
// call id is derived from the attempt id (carrier.CallIDDeriver, ARI): a
// call the provider has is recorded in flight and followed (true); a final
// answer is applied (true). When the provider has no such call or cannot be
// asked, it returns false and the attempt ends unknown; it is never placed
// again (Asterisk would dial a destroyed channel's id again).
func (e *Engine) followDerived(ctx context.Context, c *store.Campaign, a *store.Attempt, l store.Lease) bool {
	car, _, err := e.carrierFor(ctx, c.OrganizationID, c.TelephonyConfigurationID)
	if err != nil {
		return false
	}
	d, ok := car.(carrier.CallIDDeriver)
	if !ok {
		return false
	}
	id := d.CallID(a.ID)
	st, err := car.Query(ctx, id)
	if err != nil {
		return false
	}
	if st.Final {
		st.ProviderCallID = id
		e.finish(ctx, a.CampaignID, a.ID, st, "the service stopped while the call was being placed; not placed again", fromProvider)
		return true
	}
	deadline := e.now().Add(e.callDeadline())
	if _, err := e.db.MarkPlaced(ctx, store.Placement{AttemptID: a.ID, CampaignID: c.ID, OrganizationID: c.OrganizationID,
		PhoneNumber: a.PhoneNumber, ProviderCallID: id, At: e.now(), Deadline: deadline, Lease: l}); err != nil {
		e.log.Error("dialer: mark placed", slog.Int64("attempt_id", a.ID), slog.String("error", err.Error()))
		return false
	}
	if st.Answered {
		e.finish(ctx, a.CampaignID, a.ID, st, "", fromProvider)
	}
	return true
}

package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log"
	"net/http"
	"time"

	"github.com/outdial/outdial/bench/internal/realbin"
)

// setup configures both organizations and uploads the big file and the
// victims' files.
func (b *bench) setup() {
	b.wfBench = b.setupOrg(b.c, benchCaller)
	b.wfOther = b.setupOrg(b.o, victimCaller)

	log.Printf("generating %d rows", b.rows)
	t := time.Now()
	big := contactsCSV(b.rows, 0)
	gen := time.Since(t)
	t = time.Now()
	b.bigSource = b.c.UploadCSV("contacts.csv", big)
	up := time.Since(t)
	b.printf("upload: %d rows, %.1f MB CSV (%.1f bytes a row) generated in %.2f s, presigned and uploaded in %.2f s",
		b.rows, float64(len(big))/1e6, float64(len(big))/float64(b.rows), gen.Seconds(), up.Seconds())
	b.victimCSV = contactsCSV(b.victimRows, realbin.MaxNumbers-b.victimRows)
	b.longVictimCSV = contactsCSV(3*b.victimRows, realbin.MaxNumbers-4*b.victimRows)
}

// setupOrg gives c's organization the compliance policy of -policy
// (calling hours off by default: the benchmark dials at any hour), a
// Twilio configuration with the simulator's credentials, caller id caller
// and a workflow, whose id it returns.
func (b *bench) setupOrg(c *realbin.Client, caller string) any {
	c.SetCompliance(b.policy)
	cfg := c.Post("/api/v1/organizations/telephony-configs", map[string]any{
		"name": "sim", "is_default_outbound": true,
		"config": map[string]any{"provider": "twilio", "account_sid": b.sim.AccountSID(), "auth_token": b.sim.AuthToken()},
	})
	c.Post(fmt.Sprintf("/api/v1/organizations/telephony-configs/%v/phone-numbers", cfg["id"]),
		map[string]any{"address": caller, "is_default_caller_id": true})
	wf := c.Post("/api/v1/workflow", map[string]any{"name": "reminder", "workflow_definition": json.RawMessage(workflow)})
	return wf["id"]
}

// id is a campaign answer's id.
func id(camp map[string]any) int64 { return int64(camp["id"].(float64)) }

// num is a number field of an answer.
func num(m map[string]any, field string) int64 {
	f, _ := m[field].(float64)
	return int64(f)
}

// startVictim uploads csv for the other organization (the service deletes
// an upload once a campaign was created from it), creates a victim
// campaign from it (max_concurrency 20, rate_limit_per_second 50, no
// retries), starts it and waits until it has placed 25 calls (half a second
// of dialing).
func (b *bench) startVictim(csv []byte) int64 {
	source := b.o.UploadCSV("victim.csv", csv)
	camp := b.o.Post("/api/v1/campaign", map[string]any{"name": "victim", "workflow_id": b.wfOther, "source_id": source,
		"max_concurrency": 20, "rate_limit_per_second": 50, "retry_config": map[string]any{"enabled": false}})
	vid := id(camp)
	t := time.Now()
	b.o.Post("/api/v1/campaign/"+itoa(vid)+"/start", nil)
	if !b.victim.waitAfter(t, 25, 10*time.Second) {
		b.fail("victim campaign %d placed fewer than 25 calls within 10 s", vid)
	}
	return vid
}

// stopVictim cancels victim campaign vid unless it already ended (409).
func (b *bench) stopVictim(vid int64) {
	res, err := b.o.Send(context.Background(), http.MethodPost, "/api/v1/campaign/"+itoa(vid)+"/cancel", nil)
	if err != nil {
		b.fail("cancel victim: %v", err)
	}
	msg, _ := io.ReadAll(res.Body)
	res.Body.Close()
	if res.StatusCode != http.StatusOK && res.StatusCode != http.StatusConflict {
		b.fail("cancel victim: status %d: %s", res.StatusCode, msg)
	}
}

// watch polls GET /api/v1/health and the victim's GET /campaign/{id}
// every 50 ms while an operation runs.
type watch struct {
	health, camp *prober
}

func (b *bench) watch(vid int64) *watch {
	return &watch{
		health: probe(b.srv.Base, nil, "/api/v1/health", 50*time.Millisecond),
		camp:   probe("", b.o, "/api/v1/campaign/"+itoa(vid), 50*time.Millisecond),
	}
}

// end stops the probes and adds their longest answers to the report.
func (b *bench) endWatch(w *watch, during string) {
	w.health.end()
	w.camp.end()
	longest := max(w.health.max(), w.camp.max())
	errs := ""
	if n := w.health.errs + w.camp.errs; n > 0 {
		errs = fmt.Sprintf(", %d errors, last: %s %s", n, w.health.last, w.camp.last)
	}
	b.printf("  API during %s: longest GET /health %.1f ms, GET /campaign/{victim} %.1f ms (%d + %d polls every 50 ms%s)  target <= %d ms %s",
		during, ms(w.health.max()), ms(w.camp.max()), len(w.health.lat), len(w.camp.lat), errs,
		targetAPIMS, verdict(longest <= targetAPIMS*time.Millisecond && errs == ""))
}

// victimLine adds the victim's longest gap between call creates during
// [from, to] to the report. It first waits (at most 3 s) for a create
// after to, so that a stall running past the window counts whole.
func (b *bench) victimLine(during string, from, to time.Time) {
	b.victim.waitAfter(to, 1, 3*time.Second)
	g := b.victim.gaps(from, to)
	note := ""
	if !g.covered {
		note = " (the victim finished or stalled inside the window: no create after it)"
	}
	b.printf("  victim during %s: longest gap between its call creates %.0f ms (starting at %+.2f s; %d creates in the %.2f s window)%s  target <= %d ms %s",
		during, ms(g.maxGap), g.at.Seconds(), g.n, g.window.Seconds(), note, targetStallMS,
		verdict(g.maxGap <= targetStallMS*time.Millisecond && g.covered))
}

// sizes adds the database's file sizes to the report and returns them; on
// PostgreSQL the database's size (pg_database_size) and its contacts
// table's with its indexes, and wal 0 (PostgreSQL's WAL is the cluster's).
func (b *bench) sizes(when string) (db, wal int64) {
	if b.db.Postgres() {
		db, contacts := b.pgSizes()
		b.printf("database %s: pg_database_size %.1f MB, of which contacts with its indexes %.1f MB (the WAL is the cluster's: not measured)",
			when, float64(db)/1e6, float64(contacts)/1e6)
		return db, 0
	}
	db, wal = realbin.DBSizes(b.db.DataDir)
	free, err := b.ro.count(`SELECT (SELECT freelist_count FROM pragma_freelist_count()) * (SELECT page_size FROM pragma_page_size())`)
	if err != nil {
		b.fail("free pages: %v", err)
	}
	b.printf("database %s: %s %.1f MB (%.1f MB of it free pages), %s-wal %.1f MB",
		when, dbFile, float64(db)/1e6, float64(free)/1e6, dbFile, float64(wal)/1e6)
	return db, wal
}

// pgSizes returns the PostgreSQL database's size (pg_database_size) and
// its contacts table's with its indexes, in bytes.
func (b *bench) pgSizes() (db, contacts int64) {
	err := b.ro.queryRow(`SELECT pg_database_size(current_database()), pg_total_relation_size('contacts')`).Scan(&db, &contacts)
	if err != nil {
		b.fail("database size: %v", err)
	}
	return db, contacts
}

// waitDrained waits until campaign cid has no call being placed or in
// flight.
func (b *bench) waitDrained(cid int64) {
	deadline := time.Now().Add(2 * time.Minute)
	for {
		n, err := b.ro.count(`SELECT count(*) FROM call_attempts WHERE campaign_id = ? AND state IN ('dialing', 'in_flight')`, cid)
		if err != nil {
			b.fail("count calls in flight: %v", err)
		}
		if n == 0 {
			return
		}
		if time.Now().After(deadline) {
			b.fail("campaign %d still has %d calls in flight after 2 minutes", cid, n)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

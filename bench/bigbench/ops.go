package main

import (
	"log"
	"time"
)

// cancelAndRedial cancels the big campaign and redials its busy contacts,
// with a victim dialing.
func (b *bench) cancelAndRedial() {
	log.Printf("cancel and redial")
	path := "/api/v1/campaign/" + itoa(b.big)
	vid := b.startVictim(b.victimCSV)
	w := b.watch(vid)
	t0 := time.Now()
	cp := b.c.Post(path+"/cancel", nil)
	t1 := time.Now()
	if cp["state"] != "cancelled" {
		b.fail("cancel: state %v", cp["state"])
	}
	final, err := b.ro.count(`SELECT count(*) FROM contacts WHERE campaign_id = ? AND is_final = 1`, b.big)
	if err != nil {
		b.fail("count final contacts: %v", err)
	}
	busy, err := b.ro.count(`SELECT count(*) FROM contacts WHERE campaign_id = ? AND is_final = 1 AND outcome = 'busy'`, b.big)
	if err != nil {
		b.fail("count busy contacts: %v", err)
	}
	t2 := time.Now()
	rd := b.c.Post(path+"/redial", map[string]any{"name": "big (redial of the busy)"})
	t3 := time.Now()
	b.redial = id(rd)
	total := num(rd, "total_rows")

	b.printf("cancel: POST /cancel of the campaign of %d contacts answered in %.3f s  target <= %d s %s",
		b.rows, t1.Sub(t0).Seconds(), targetOpSeconds, verdict(t1.Sub(t0) <= targetOpSeconds*time.Second))
	b.victimLine("the cancel", t0, t1)
	b.printf("redial: POST /redial of its %d busy contacts (%d final) answered in %.3f s (total_rows %d: %s)  target <= %d s %s",
		busy, final, t3.Sub(t2).Seconds(), total, verdict(total == busy), targetOpSeconds,
		verdict(t3.Sub(t2) <= targetOpSeconds*time.Second))
	b.victimLine("the redial", t2, t3)
	b.endWatch(w, "the cancel and the redial")
	b.stopVictim(vid)
}

// syntheticRedial deletes the first redial (a campaign is redialed once),
// stops the service, makes every contact of the big campaign final busy in
// SQLite, restarts the service and redials them all, with a victim
// dialing.
func (b *bench) syntheticRedial() {
	log.Printf("synthetic redial")
	d := timed(func() { b.c.Delete("/api/v1/campaign/" + itoa(b.redial)) })
	b.printf("delete of that redial (a draft), so that the campaign can be redialed again: %.1f ms", ms(d))
	b.waitPurged([]int64{b.redial}, time.Minute)
	b.redial = 0

	b.ro.Close()
	b.srv.Stop(30 * time.Second)
	n, took, err := markAllBusy(b.db.DataDir, b.big)
	if err != nil {
		b.fail("%v", err)
	}
	t := time.Now()
	b.serve()
	b.printf("synthetic redial: service stopped; UPDATE contacts SET is_final = 1, outcome = 'busy' of %d contacts: %.2f s; restarted (healthy in %.2f s)",
		n, took.Seconds(), time.Since(t).Seconds())

	vid := b.startVictim(b.victimCSV)
	w := b.watch(vid)
	t0 := time.Now()
	rd := b.c.Post("/api/v1/campaign/"+itoa(b.big)+"/redial", map[string]any{"name": "big (full redial)"})
	t1 := time.Now()
	b.fullRedial = id(rd)
	total := num(rd, "total_rows")
	b.printf("  POST /redial of all %d contacts answered in %.2f s (total_rows %d: %s)  target <= %d s %s",
		n, t1.Sub(t0).Seconds(), total, verdict(total == n), targetOpSeconds, verdict(t1.Sub(t0) <= targetOpSeconds*time.Second))
	b.victimLine("the full redial", t0, t1)
	b.endWatch(w, "the full redial")
	b.stopVictim(vid)
	b.sizes("after the full redial")
}

// deleteAndPurge deletes the big campaign and its redial, and waits until
// their rows are gone, with a victim dialing.
func (b *bench) deleteAndPurge() {
	log.Printf("delete and purge")
	ids := []int64{b.big}
	for _, r := range []int64{b.redial, b.fullRedial} {
		if r != 0 {
			ids = append(ids, r)
		}
	}
	var contacts int64
	for _, cid := range ids {
		n, err := b.ro.count(`SELECT count(*) FROM contacts WHERE campaign_id = ?`, cid)
		if err != nil {
			b.fail("count contacts: %v", err)
		}
		contacts += n
	}
	vid := b.startVictim(b.longVictimCSV)
	w := b.watch(vid)
	t0 := time.Now()
	for _, cid := range ids {
		d := timed(func() { b.c.Delete("/api/v1/campaign/" + itoa(cid)) })
		b.printf("delete: DELETE /campaign/%d answered 204 in %.3f s  target <= %d s %s",
			cid, d.Seconds(), targetOpSeconds, verdict(d <= targetOpSeconds*time.Second))
	}
	contactsGone, allGone := b.waitPurged(ids, 15*time.Minute)
	t1 := time.Now()
	limit := time.Duration(float64(targetOpSeconds*time.Second) * max(1, float64(contacts)/1e6))
	b.printf("  purge of %d campaigns (%d contacts): contacts gone %.2f s after the first DELETE, every row (attempts, contacts, campaigns) %.2f s  target <= %d s per million contacts (%.0f s) %s",
		len(ids), contacts, contactsGone.Sub(t0).Seconds(), allGone.Sub(t0).Seconds(), targetOpSeconds, limit.Seconds(),
		verdict(allGone.Sub(t0) <= limit))
	b.victimLine("the delete and purge", t0, t1)
	b.endWatch(w, "the delete and purge")
	b.stopVictim(vid)
	b.sizes("at the end")
}

// waitPurged polls the database every 200 ms until campaigns ids have no
// contact left (contactsGone) and no attempt nor campaign row (allGone).
// It asks whether a row exists rather than counting them: a count of two
// million index entries every 200 ms would take much of a core from the
// service on a 2-core machine.
func (b *bench) waitPurged(ids []int64, timeout time.Duration) (contactsGone, allGone time.Time) {
	deadline := time.Now().Add(timeout)
	for {
		c, a, k, err := remaining(b.ro, ids)
		if err != nil {
			b.fail("poll the purge: %v", err)
		}
		now := time.Now()
		if c == 0 && contactsGone.IsZero() {
			contactsGone = now
		}
		if c+a+k == 0 {
			return contactsGone, now
		}
		if now.After(deadline) {
			b.fail("campaigns %v not purged within %v: contacts %d, attempts %d, campaigns %d left", ids, timeout, c, a, k)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

package cmd_test

// The backup test of issue 12: `outdial backup` of the database while the
// real binary's serve runs a campaign on it, then serve on a new data
// directory holding the copy and the same secret.key.

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/outdial/outdial/cmd"
	"github.com/outdial/outdial/dialer/carrier/twiliosim"
)

// backupContacts sizes TestBackupDuringCampaign's campaign. docs/performance.md's
// "Backup" figure is the test run with a million:
//
//	go test ./cmd -run TestBackupDuringCampaign -v -backup-contacts 1000000
var backupContacts = flag.Int("backup-contacts", 2000, "contacts of TestBackupDuringCampaign's campaign")

// Shape of the campaign the backup runs under: every call answered by a
// person, talking for backupTalk.
const (
	backupConcurrency = 50
	backupRate        = 500
	backupTalk        = 100 * time.Millisecond
	// backupRestoreComplete is the largest campaign the test lets the
	// restored service finish (at backupRate it takes n/500 s).
	backupRestoreComplete = 20000
)

// TestBackupDuringCampaign runs `outdial backup` while serve dials a
// campaign against the Twilio simulator, and checks that:
//
//   - the backup succeeds without stopping the campaign (the longest gap
//     between two calls while it runs is logged and bounded);
//   - the copy is one consistent snapshot: its campaign counters equal what
//     its own contacts and attempts say (processed_rows = final contacts =
//     attempts done, failed_rows, executed_count = attempts placed), and lie
//     between the service's counters read just before and just after the
//     backup;
//   - the copy is a file of mode 0600 alone in its directory; a second
//     backup to the same name, one into a missing directory and one that
//     runs out of space (a file-size limit) exit non-zero with a clear
//     error and leave no file;
//   - serve on a new data directory holding the copy as outdial.db and the
//     same secret.key authenticates the same API key, answers GET
//     /campaign/{id}, reads the telephony configuration's credentials and
//     (for a campaign of at most backupRestoreComplete contacts) completes
//     the campaign from where the snapshot left it; without the secret.key
//     the credentials cannot be read.
//
// SQLite-specific: outdial backup copies the database file (VACUUM INTO).
func TestBackupDuringCampaign(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the real binary; skipped with -short")
	}
	n := *backupContacts
	bin := cmd.BuildBinary(t)
	dir := filepath.Join(t.TempDir(), "data")
	addr := freeAddr(t)

	var creates createLog
	sim := twiliosim.Start(twiliosim.Config{
		Script: func(twiliosim.CallInfo) twiliosim.Script {
			return twiliosim.Script{Outcome: twiliosim.Human, TalkDuration: backupTalk}
		},
	})
	t.Cleanup(sim.Close)
	sim.SetFault(func(r twiliosim.Request) *twiliosim.Fault {
		if r.Op == twiliosim.OpCreate {
			creates.add(time.Now())
		}
		return nil
	})

	// One node name for the service and its restore (as on the same host
	// and port): the copy holds the campaign's lease under the name of the
	// node that was dialing it, which a restore under another name waits
	// out (--lease-ttl, API.md 16) before it dials.
	env := append(serviceEnv(sim.URL()), "OUTDIAL_NODE_NAME=backup-test-node")
	key := apiKey(t, bin, dir, env)
	first := startService(t, bin, dir, addr, env, "first")
	c := &apiClient{t: t, base: "http://" + addr, key: key}
	c.callingHoursOff()
	cfg := c.post("/api/v1/organizations/telephony-configs", map[string]any{
		"name": "sim", "is_default_outbound": true,
		"config": map[string]any{"provider": "twilio", "account_sid": sim.AccountSID(), "auth_token": sim.AuthToken()},
	})
	cfgPath := fmt.Sprintf("/api/v1/organizations/telephony-configs/%d", int64(cfg["id"].(float64)))
	c.post(cfgPath+"/phone-numbers", map[string]any{"address": "+14155550100", "is_default_caller_id": true})
	wf := c.post("/api/v1/workflow", map[string]any{"name": "reminder", "workflow_definition": json.RawMessage(crashWorkflow)})
	body := backupCSV(t, n)
	up := c.post("/api/v1/s3/presigned-upload-url", map[string]any{
		"file_name": "contacts.csv", "file_size": len(body), "content_type": "text/csv",
	})
	putUpload(t, up["upload_url"].(string), body)
	created := time.Now()
	camp := c.post("/api/v1/campaign", map[string]any{
		"name": "backup", "workflow_id": wf["id"], "source_id": up["file_key"],
		"max_concurrency": backupConcurrency, "rate_limit_per_second": backupRate,
		"retry_config": map[string]any{"enabled": false},
	})
	t.Logf("campaign of %d contacts created in %.2f s", n, time.Since(created).Seconds())
	campID := int64(camp["id"].(float64))
	campPath := fmt.Sprintf("/api/v1/campaign/%d", campID)
	c.post(campPath+"/start", nil)

	// Back up in the middle of the campaign: a quarter of it (at most
	// 5,000 calls) placed and the slots busy.
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	if err := sim.Wait(ctx, func(st twiliosim.Stats) bool {
		return st.Created >= min(n/4, 5000) && st.InFlight >= backupConcurrency/2
	}); err != nil {
		t.Fatalf("campaign never got under way: %v (simulator %+v)\n%s", err, sim.Stats(), first.log())
	}
	backups := t.TempDir()
	to := filepath.Join(backups, "outdial-backup.db")
	walBefore := fileSize(filepath.Join(dir, "outdial.db-wal"))
	before := c.get(campPath)
	res := backupRun(t, bin, env, 0, "--data", dir, "--to", to)
	after := c.get(campPath)
	if res.code != 0 {
		t.Fatalf("backup exited %d: %s%s", res.code, res.stdout, res.stderr)
	}
	walBytes := fileSize(filepath.Join(dir, "outdial.db-wal"))
	st, err := os.Stat(to)
	if err != nil {
		t.Fatal(err)
	}
	stall := creates.longestGap(res.start, res.end)
	earlier := res.start.Add(-res.end.Sub(res.start))
	quiet := creates.longestGap(earlier, res.start)
	t.Logf("backup of %d contacts: %.2f s, %.1f MB, backup process peak RSS %.1f MB; longest gap between calls "+
		"%d ms during it (%d ms in as long a time before it); %d calls placed during it (%d in as long a time before it); "+
		"WAL %.1f MB before, %.1f MB after\n%s",
		n, res.end.Sub(res.start).Seconds(), float64(st.Size())/1e6, float64(res.maxRSSKB)/1024,
		stall.Milliseconds(), quiet.Milliseconds(), creates.count(res.start, res.end), creates.count(earlier, res.start),
		float64(walBefore)/1e6, float64(walBytes)/1e6, res.stdout)
	if stall > 2*time.Second {
		t.Errorf("no call was placed for %v during the backup: it stalled the campaign", stall)
	}
	if mode := st.Mode().Perm(); mode != 0o600 {
		t.Errorf("copy mode = %v, want 0600", mode)
	}
	if got := dirNames(t, backups); !slices.Equal(got, []string{"outdial-backup.db"}) {
		t.Errorf("backup directory holds %v, want the copy alone", got)
	}
	if !strings.Contains(res.stdout, "secret.key") {
		t.Errorf("backup output does not mention secret.key:\n%s", res.stdout)
	}

	// The copy's counters: one snapshot, between the ones read before and
	// after the backup.
	snap := snapshotOf(t, to, filepath.Join(dir, "secret.key"), campID)
	t.Logf("snapshot: state %s, processed_rows %d, failed_rows %d, executed_count %d; %d contacts final, %d attempts done, %d placed",
		snap.State, snap.ProcessedRows, snap.FailedRows, snap.ExecutedCount, snap.finalContacts, snap.doneAttempts, snap.placedAttempts)
	if snap.State != "running" {
		t.Errorf("campaign in the copy is %s, want running", snap.State)
	}
	for _, k := range []struct {
		name string
		v    int64
	}{
		{"total_rows", snap.TotalRows}, {"processed_rows", snap.ProcessedRows}, {"failed_rows", snap.FailedRows},
		{"executed_count", snap.ExecutedCount}, {"total_queued_count", snap.TotalQueuedCount},
	} {
		lo, hi := int64(before[k.name].(float64)), int64(after[k.name].(float64))
		if k.v < lo || k.v > hi {
			t.Errorf("%s = %d in the copy; the service had %d before the backup and %d after", k.name, k.v, lo, hi)
		}
	}
	if snap.TotalRows != int64(n) || snap.TotalQueuedCount != int64(n) {
		t.Errorf("copy: total_rows %d, total_queued_count %d; want %d (retries off)", snap.TotalRows, snap.TotalQueuedCount, n)
	}
	if snap.contacts != int64(n) {
		t.Errorf("copy holds %d contacts, want %d", snap.contacts, n)
	}
	if snap.ProcessedRows != snap.finalContacts || snap.ProcessedRows != snap.doneAttempts {
		t.Errorf("copy: processed_rows %d, final contacts %d, attempts done %d; want equal",
			snap.ProcessedRows, snap.finalContacts, snap.doneAttempts)
	}
	if snap.FailedRows != snap.failedContacts {
		t.Errorf("copy: failed_rows %d, final contacts not answered %d; want equal", snap.FailedRows, snap.failedContacts)
	}
	if snap.ExecutedCount != snap.placedAttempts {
		t.Errorf("copy: executed_count %d, attempts placed %d; want equal", snap.ExecutedCount, snap.placedAttempts)
	}
	if snap.ProcessedRows >= int64(n) {
		t.Errorf("the copy's campaign is already processed (%d of %d): the backup did not run mid-campaign", snap.ProcessedRows, n)
	}

	backupRefusals(t, bin, env, dir, to)

	// Restore: a new data directory with the copy as outdial.db and the
	// same secret.key.
	restored := filepath.Join(t.TempDir(), "restored")
	if err := os.Mkdir(restored, 0o700); err != nil {
		t.Fatal(err)
	}
	copyFile(t, to, filepath.Join(restored, "outdial.db"))
	copyFile(t, filepath.Join(dir, "secret.key"), filepath.Join(restored, "secret.key"))
	addr2 := freeAddr(t)
	second := startService(t, bin, restored, addr2, env, "restored")
	r := &apiClient{t: t, base: "http://" + addr2, key: key}
	got := r.get(campPath)
	if got["total_rows"].(float64) != float64(n) || got["processed_rows"].(float64) < float64(snap.ProcessedRows) {
		t.Errorf("restored campaign: total_rows %v, processed_rows %v; want %d and at least the copy's %d",
			got["total_rows"], got["processed_rows"], n, snap.ProcessedRows)
	}
	if want, have := cfg["credentials"], r.get(cfgPath)["credentials"]; fmt.Sprint(have) != fmt.Sprint(want) {
		t.Errorf("restored configuration's credentials = %v, want %v", have, want)
	}
	if n <= backupRestoreComplete {
		restoredCompletes(t, r, campPath, campID, n, second)
	}
	second.stop(t)

	// The same copy without the secret.key: a new key cannot open the
	// stored credentials, so serve refuses to start (API.md 16) and leaves
	// no key behind, for the right one to be put there.
	keyless := filepath.Join(t.TempDir(), "keyless")
	if err := os.Mkdir(keyless, 0o700); err != nil {
		t.Fatal(err)
	}
	copyFile(t, to, filepath.Join(keyless, "outdial.db"))
	third := exec.Command(bin, "serve", "--data", keyless, "--addr", freeAddr(t), "--metrics-addr", "")
	third.Env = env
	out, err := third.CombinedOutput()
	var exit *exec.ExitError
	if !errors.As(err, &exit) || exit.ExitCode() == 0 || !strings.Contains(string(out), "cannot decrypt what the database holds") {
		t.Errorf("serve on the copy without its secret.key: %v, want a non-zero exit saying the secret cannot decrypt the database:\n%s", err, out)
	}
	if names := dirNames(t, keyless); !slices.Equal(names, []string{"outdial.db"}) {
		t.Errorf("after the refusal the data directory holds %v, want only outdial.db", names)
	}

	first.stop(t)
}

// restoredCompletes waits for the restored service to finish the campaign
// the snapshot left running and checks its report: every contact final.
func restoredCompletes(t *testing.T, r *apiClient, campPath string, campID int64, n int, s *service) {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for {
		got := r.get(campPath)
		if got["state"] == "completed" {
			if got["processed_rows"].(float64) != float64(n) {
				t.Errorf("restored campaign completed with processed_rows %v, want %d", got["processed_rows"], n)
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("restored campaign is %v after 60 s: %v\n%s", got["state"], got, s.log())
		}
		time.Sleep(25 * time.Millisecond)
	}
	report := r.report(campID)
	if len(report) != n {
		t.Fatalf("restored report has %d rows, want %d", len(report), n)
	}
	for _, row := range report {
		if row["outcome"] == "" {
			t.Errorf("restored report row %v: not final", row)
			break
		}
	}
}

// backupRefusals runs backups that must fail: to the existing copy, into a
// missing directory, and with a file-size limit smaller than the copy (as
// a full disk). Each exits non-zero with an error on stderr and leaves no
// file behind.
func backupRefusals(t *testing.T, bin string, env []string, dir, existing string) {
	t.Helper()
	old, err := os.ReadFile(existing)
	if err != nil {
		t.Fatal(err)
	}
	full := t.TempDir()
	tests := []struct {
		name   string
		to     string
		blocks int // RLIMIT_FSIZE in 512-byte blocks, 0 = none
		want   string
		empty  string // a directory that must stay empty
	}{
		{"existing file", existing, 0, "file already exists", ""},
		{"missing directory", filepath.Join(t.TempDir(), "no", "such", "copy.db"), 0, "no such file or directory", ""},
		{"file too large", filepath.Join(full, "copy.db"), 16, "backup: copy database to " + filepath.Join(full, "copy.db"), full},
	}
	for _, tt := range tests {
		res := backupRun(t, bin, env, tt.blocks, "--data", dir, "--to", tt.to)
		if res.code == 0 || !strings.HasPrefix(res.stderr, "error: ") || !strings.Contains(res.stderr, tt.want) {
			t.Errorf("%s: backup exited %d with %q; want non-zero and an error saying %q", tt.name, res.code, res.stderr, tt.want)
		}
		t.Logf("%s: exit %d, %s", tt.name, res.code, strings.TrimSpace(res.stderr))
		if tt.empty != "" {
			if got := dirNames(t, tt.empty); len(got) != 0 {
				t.Errorf("%s: %s holds %v after the failed backup, want nothing", tt.name, tt.empty, got)
			}
		}
	}
	if now, _ := os.ReadFile(existing); string(now) != string(old) {
		t.Error("a refused backup changed the existing copy")
	}
}

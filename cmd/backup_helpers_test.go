package cmd_test

// Helpers of TestBackupDuringCampaign (backup_test.go): running `outdial
// backup`, reading the copy, timing the simulator's creates.

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nyaruka/phonenumbers"

	"github.com/outdial/outdial/store"
)

// backupResult is one run of `outdial backup`.
type backupResult struct {
	stdout, stderr string
	code           int
	start, end     time.Time
	maxRSSKB       int64
}

// backupRun runs `outdial backup args...`, under a file-size limit of
// blocks 512-byte blocks when blocks > 0 (the process then fails to write
// like on a full disk).
func backupRun(t *testing.T, bin string, env []string, blocks int, args ...string) backupResult {
	t.Helper()
	cmd := exec.Command(bin, append([]string{"backup"}, args...)...)
	if blocks > 0 {
		cmd = exec.Command("sh", append([]string{"-c", fmt.Sprintf(`ulimit -f %d && exec "$0" "$@"`, blocks), bin, "backup"}, args...)...)
	}
	cmd.Env = env
	var out, errOut strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &errOut
	res := backupResult{start: time.Now()}
	if err := cmd.Start(); err != nil {
		t.Fatalf("start backup: %v", err)
	}
	// The peak RSS is read from /proc while the process runs: the
	// rusage of a child reports the forking test process's own peak
	// when that is higher (Linux keeps it across exec).
	done := make(chan struct{})
	polled := make(chan int64)
	go func() {
		var peak int64
		for {
			peak = max(peak, vmHWM(cmd.Process.Pid))
			select {
			case <-done:
				polled <- peak
				return
			case <-time.After(5 * time.Millisecond):
			}
		}
	}()
	err := cmd.Wait()
	res.end = time.Now()
	close(done)
	res.maxRSSKB = <-polled
	res.stdout, res.stderr = out.String(), errOut.String()
	var exit *exec.ExitError
	if err != nil && !errors.As(err, &exit) {
		t.Fatalf("run backup: %v", err)
	}
	res.code = cmd.ProcessState.ExitCode()
	return res
}

// vmHWM returns the peak resident set of process pid in KiB (VmHWM in
// /proc/pid/status), 0 when it cannot be read (not Linux, or exited).
func vmHWM(pid int) int64 {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			var kb int64
			fmt.Sscanf(strings.TrimSpace(v), "%d", &kb)
			return kb
		}
	}
	return 0
}

// snapshot is the campaign as the copy holds it, with what its rows say.
type snapshot struct {
	*store.Campaign
	contacts, finalContacts, failedContacts int64
	doneAttempts, placedAttempts            int64
}

// snapshotOf opens a scratch copy of the backup (the backup itself stays
// untouched for the restore) and reads campaign id's counters, contacts
// and attempts.
func snapshotOf(t *testing.T, backup, keyPath string, id int64) snapshot {
	t.Helper()
	scratch := filepath.Join(t.TempDir(), "outdial.db")
	copyFile(t, backup, scratch)
	key, err := store.LoadOrCreateKey("", keyPath)
	if err != nil {
		t.Fatal(err)
	}
	sealer, err := store.NewSealer(key)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	db, err := store.Open(ctx, scratch, sealer)
	if err != nil {
		t.Fatalf("open the copy: %v", err)
	}
	defer db.Close()
	camp, err := db.CampaignByID(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	s := snapshot{Campaign: camp}
	for after := int64(0); ; {
		page, err := db.ListContacts(ctx, id, after, 1000)
		if err != nil {
			t.Fatal(err)
		}
		if len(page) == 0 {
			break
		}
		for _, c := range page {
			s.contacts++
			if c.IsFinal {
				s.finalContacts++
				if c.Outcome == nil || *c.Outcome != "answered" {
					s.failedContacts++
				}
			}
		}
		after = page[len(page)-1].Row
	}
	for after := int64(0); ; {
		page, err := db.ListAttempts(ctx, id, store.AttemptFilter{AfterID: after, Limit: 1000})
		if err != nil {
			t.Fatal(err)
		}
		if len(page) == 0 {
			break
		}
		for _, a := range page {
			if a.State == store.AttemptDone {
				s.doneAttempts++
			}
			if a.ProviderCallID != nil {
				s.placedAttempts++
			}
		}
		after = page[len(page)-1].ID
	}
	return s
}

// createLog records when the simulator accepted each create request.
type createLog struct {
	mu sync.Mutex
	at []time.Time
}

func (l *createLog) add(at time.Time) {
	l.mu.Lock()
	l.at = append(l.at, at)
	l.mu.Unlock()
}

// times returns the creates from from to to, in order.
func (l *createLog) times(from, to time.Time) []time.Time {
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []time.Time
	for _, at := range l.at {
		if !at.Before(from) && !at.After(to) {
			out = append(out, at)
		}
	}
	slices.SortFunc(out, func(a, b time.Time) int { return a.Compare(b) })
	return out
}

func (l *createLog) count(from, to time.Time) int { return len(l.times(from, to)) }

// longestGap returns the longest time from from to to without a create.
func (l *createLog) longestGap(from, to time.Time) time.Duration {
	prev, longest := from, time.Duration(0)
	for _, at := range append(l.times(from, to), to) {
		longest = max(longest, at.Sub(prev))
		prev = at
	}
	return longest
}

// backupCSV returns a contacts file of n rows with distinct valid US
// numbers (20 area codes × 5 exchanges × 10,000 lines: up to 1,000,000).
func backupCSV(t *testing.T, n int) []byte {
	t.Helper()
	areas := []string{"201", "202", "203", "205", "206", "207", "208", "209", "210", "212",
		"213", "214", "215", "216", "217", "218", "219", "224", "225", "228"}
	exchanges := []string{"234", "345", "456", "678", "789"}
	if n > len(areas)*len(exchanges)*10000 {
		t.Fatalf("at most %d contacts", len(areas)*len(exchanges)*10000)
	}
	number := func(i int) string {
		block := i / 10000
		return fmt.Sprintf("+1%s%s%04d", areas[block%len(areas)], exchanges[block/len(areas)], i%10000)
	}
	for block := 0; block*10000 < n; block++ {
		p, err := phonenumbers.Parse(number(block*10000), "US")
		if err != nil || !phonenumbers.IsValidNumber(p) {
			t.Fatalf("generated number %s is not valid: %v", number(block*10000), err)
		}
	}
	var b strings.Builder
	b.Grow(n * 36)
	b.WriteString("phone_number,first_name,city\n")
	for i := range n {
		fmt.Fprintf(&b, "%s,Name%d,City%d\n", number(i), i, i%7)
	}
	return []byte(b.String())
}

func copyFile(t *testing.T, from, to string) {
	t.Helper()
	data, err := os.ReadFile(from)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(to, data, 0o600); err != nil {
		t.Fatal(err)
	}
}

func fileSize(path string) int64 {
	st, err := os.Stat(path)
	if err != nil {
		return 0
	}
	return st.Size()
}

func dirNames(t *testing.T, dir string) []string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	names := make([]string, len(entries))
	for i, e := range entries {
		names[i] = e.Name()
	}
	return names
}

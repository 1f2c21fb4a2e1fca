package web_test

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/outdial/outdial/store"
)

// Issue 15 item 9: a database error in the middle of streaming the report
// aborts the response, so the client sees a failed download, never a short
// 200 it would take for the whole report.
// SQLite-specific: renames the table through a second connection to the SQLite file.
func TestReportAbortsOnStreamError(t *testing.T) {
	t.Parallel()
	ce := newCampEnv(t, campOpts{sqlite: true})
	s := ce.setup(false)
	// A report of tens of megabytes: the handler blocks on the socket long
	// before it has read every page.
	note := strings.Repeat("x", 500)
	c, err := ce.db.CreateCampaign(context.Background(), ce.orgA, store.NewCampaign{
		Settings:   store.Settings{Name: "big", MaxConcurrency: 1, RateLimitPerSecond: 1},
		WorkflowID: s.workflowID, WorkflowName: "w", WorkflowDefinition: []byte(`{}`), TelephonyConfigurationID: s.configID, SourceID: "k"},
		func(add func(store.ContactInput) error) ([]string, error) {
			for i := range 100_000 {
				if err := add(store.ContactInput{Row: i + 2, PhoneNumber: fmt.Sprintf("+1415%07d", i), Context: map[string]string{"note": note}}); err != nil {
					return nil, err
				}
			}
			return []string{"phone_number", "note"}, nil
		})
	if err != nil {
		t.Fatal(err)
	}
	req, _ := http.NewRequest(http.MethodGet, ce.srv.URL+campaignPath(c.ID)+"/report", nil)
	req.Header.Set("X-API-Key", ce.keyA)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	if res.StatusCode != http.StatusOK {
		t.Fatalf("status %d, want 200", res.StatusCode)
	}
	if _, err := io.ReadFull(res.Body, make([]byte, 1<<20)); err != nil {
		t.Fatalf("first megabyte: %v", err)
	}
	// The contacts become unreadable under the running report.
	raw, err := sql.Open("sqlite", "file:"+ce.dbPath+"?_pragma=busy_timeout(5000)")
	if err != nil {
		t.Fatal(err)
	}
	defer raw.Close()
	if _, err := raw.Exec("ALTER TABLE contacts RENAME TO contacts_gone"); err != nil {
		t.Fatal(err)
	}
	n, err := io.Copy(io.Discard, res.Body)
	if err == nil || errors.Is(err, io.EOF) {
		t.Fatalf("the report ended cleanly after %d more bytes: a short 200 the client takes for the whole report", n)
	}
}

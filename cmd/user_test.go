package cmd

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"net/url"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/spf13/pflag"

	"github.com/outdial/outdial/store"
)

var setPasswordLineRe = regexp.MustCompile(`^(https?://[^/]+)/console/set-password\?token=([A-Za-z0-9_-]{43})$`)

// createUser runs `user create` and returns the base URL and token of the
// link on the last line.
func createUser(t *testing.T, args ...string) (base, token string) {
	t.Helper()
	out, _, err := run(t, append([]string{"user", "create"}, args...)...)
	if err != nil {
		t.Fatalf("user create: %v", err)
	}
	lines := strings.Split(strings.TrimRight(out, "\n"), "\n")
	m := setPasswordLineRe.FindStringSubmatch(lines[len(lines)-1])
	if m == nil {
		t.Fatalf("last line is not a set-password link; output:\n%s", out)
	}
	return m[1], m[2]
}

func TestUserCreateCommand(t *testing.T) {
	clearEnv(t)
	dir := filepath.Join(t.TempDir(), "data")
	base, token := createUser(t, "--data", dir, "--org", "acme", "--email", "Ada@Example.com", "--role", "admin")
	if base != defaultCLIPublicURL {
		t.Fatalf("base = %q, want %q", base, defaultCLIPublicURL)
	}
	t.Setenv("OUTDIAL_PUBLIC_URL", "https://dial.example.com/")
	base, token2 := createUser(t, "--data", dir, "--org", "acme", "--email", "bob@example.com", "--role", "viewer")
	if base != "https://dial.example.com" {
		t.Fatalf("base from OUTDIAL_PUBLIC_URL = %q", base)
	}
	base, _ = createUser(t, "--data", dir, "--org", "newco", "--email", "carol@example.com", "--role", "operator",
		"--public-url", "http://10.0.0.5:9000")
	if base != "http://10.0.0.5:9000" {
		t.Fatalf("base from --public-url = %q", base)
	}

	db := openData(t, dir)
	ctx := context.Background()
	for _, tc := range []struct {
		token, email string
		role         store.Role
	}{{token, "Ada@Example.com", store.RoleAdmin}, {token2, "bob@example.com", store.RoleViewer}} {
		tok, _ := url.QueryUnescape(tc.token)
		u, err := db.PasswordLinkUser(ctx, tok)
		if err != nil || u.Email != tc.email || u.Role != tc.role {
			t.Fatalf("link's user = %+v, %v", u, err)
		}
	}

	errCases := []struct {
		args []string
		code int    // exitError's status; 0: a plain error
		want string // in the message
	}{
		{[]string{"--org", "acme", "--email", "dan@example.com", "--role", "owner"}, 2, "admin, operator or viewer"},
		{[]string{"--org", "acme", "--email", "dan@example.com", "--role", "admin", "--public-url", "dial.example.com"}, 2, "--public-url"},
		{[]string{"--org", "other", "--email", "ADA@example.com", "--role", "admin"}, 0, "exists"},
		{[]string{"--org", "acme", "--email", "not-an-address", "--role", "admin"}, 0, "not a valid address"},
		{[]string{"--org", "acme", "--email", "dan@example.com"}, 0, `"role"`},
		{[]string{"--email", "dan@example.com", "--role", "admin"}, 0, `"org"`},
	}
	for _, tc := range errCases {
		_, _, err := run(t, append(append([]string{"user", "create"}, tc.args...), "--data", dir)...)
		var exit *exitError
		if err == nil || !strings.Contains(err.Error(), tc.want) || errors.As(err, &exit) != (tc.code != 0) || (tc.code != 0 && exit.code != tc.code) {
			t.Errorf("%v: err = %v, want one containing %q (exit status %d)", tc.args, err, tc.want, tc.code)
		}
	}
}

func TestAPIKeyRole(t *testing.T) {
	clearEnv(t)
	dir := filepath.Join(t.TempDir(), "data")
	admin := createKey(t, "--data", dir, "--org", "acme")
	viewer := createKey(t, "--data", dir, "--org", "acme", "--role", "viewer")
	_, _, err := run(t, "apikey", "create", "--data", dir, "--org", "acme", "--role", "root")
	var exit *exitError
	if !errors.As(err, &exit) || exit.code != 2 || !strings.Contains(exit.msg, "admin, operator or viewer") {
		t.Fatalf("bad role: %v", err)
	}
	db := openData(t, dir)
	for key, want := range map[string]store.Role{admin: store.RoleAdmin, viewer: store.RoleViewer} {
		if p, err := db.Authenticate(context.Background(), key); err != nil || p.Role != want {
			t.Fatalf("key role = %q, %v; want %q", p.Role, err, want)
		}
	}
	out, _, err := run(t, "apikey", "list", "--data", dir)
	if err != nil || !strings.Contains(out, "ROLE") || !strings.Contains(out, "viewer") {
		t.Fatalf("list output:\n%s", out)
	}
}

func TestAuditRetention(t *testing.T) {
	ctx := context.Background()
	db := openData(t, filepath.Join(t.TempDir(), "data"))
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	now := time.Now()
	k, _, err := db.CreateAPIKey(ctx, "acme", "", store.RoleAdmin)
	if err != nil {
		t.Fatal(err)
	}
	for _, age := range []time.Duration{500 * 24 * time.Hour, 10 * 24 * time.Hour} {
		if err := db.RecordAudit(ctx, store.AuditEntry{OrganizationID: k.OrganizationID, At: now.Add(-age),
			ActorType: store.AuditActorAPIKey, ActorID: k.ID, Action: "campaign.start"}); err != nil {
			t.Fatal(err)
		}
	}
	f := pflag.NewFlagSet("serve", pflag.ContinueOnError)
	addAuditFlags(f)
	if d, _ := f.GetDuration("audit-retention"); d != 9600*time.Hour {
		t.Fatalf("default retention = %s, want 9600h", d)
	}
	if err := f.Set("audit-retention", "-1h"); err != nil {
		t.Fatal(err)
	}
	if err := startAuditRetention(ctx, f, db, log); err == nil {
		t.Fatal("a negative retention was accepted")
	}
	if err := f.Set("audit-retention", "9600h"); err != nil {
		t.Fatal(err)
	}
	sctx, cancel := context.WithCancel(ctx)
	defer cancel()
	if err := startAuditRetention(sctx, f, db, log); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(5 * time.Second)
	for {
		left, err := db.ListAudit(ctx, k.OrganizationID, store.AuditFilter{})
		if err != nil {
			t.Fatal(err)
		}
		if len(left) == 1 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("entries left = %d, want only the 10-day-old one", len(left))
		}
		time.Sleep(5 * time.Millisecond)
	}
}

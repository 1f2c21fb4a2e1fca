package wire

import "encoding/json"

// The bodies of API.md 17: users, API keys, the organization's security
// settings and the audit trail.

// User is a user of an organization. SetPasswordURL is set only in the
// answer that created the user (the one-time link that sets its password).
type User struct {
	ID             int64  `json:"id"`
	Email          string `json:"email"`
	Role           string `json:"role"`
	Disabled       bool   `json:"disabled"`
	TOTPEnabled    bool   `json:"totp_enabled"`
	CreatedAt      string `json:"created_at"`
	SetPasswordURL string `json:"set_password_url,omitempty"`
}

// UserList is GET /api/v1/users's answer.
type UserList struct {
	Users []User `json:"users"`
}

// APIKey is an organization's API key: never the whole key, but in the
// answer that created it (Key). The list always has last_used_at (null:
// never used); the create answer has none.
type APIKey struct {
	ID         int64   `json:"id"`
	Name       string  `json:"name"`
	Role       string  `json:"role"`
	Prefix     string  `json:"prefix"`
	CreatedAt  string  `json:"created_at"`
	LastUsedAt *string `json:"last_used_at,omitempty"`
	Key        string  `json:"key,omitempty"`
}

// APIKeyList is GET /api/v1/api-keys's answer.
type APIKeyList struct {
	APIKeys []APIKey `json:"api_keys"`
}

// Security is the organization's security settings.
type Security struct {
	RequireTOTP bool `json:"require_totp"`
}

// AuditEntry is one entry of the audit trail. Changes maps each changed
// field to its {"from", "to"} (secrets masked); it is {} when nothing is
// recorded.
type AuditEntry struct {
	ID      int64           `json:"id"`
	At      string          `json:"at"`
	Actor   AuditActor      `json:"actor"`
	Action  string          `json:"action"`
	Method  string          `json:"method"`
	Route   string          `json:"route"`
	Target  AuditTarget     `json:"target"`
	Changes json.RawMessage `json:"changes"`
	Status  int             `json:"status"`
	Address string          `json:"address"`
}

// AuditActor is who made a change: a user or an API key.
type AuditActor struct {
	Type string `json:"type"`
	ID   int64  `json:"id"`
	Name string `json:"name"`
}

// AuditTarget is what a change was made to; ID is null for a create that
// was refused (nothing was created) or a target without an id.
type AuditTarget struct {
	Type string `json:"type"`
	ID   *int64 `json:"id"`
}

// AuditList is GET /api/v1/audit's answer, oldest first.
type AuditList struct {
	Entries []AuditEntry `json:"entries"`
}

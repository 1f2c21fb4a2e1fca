package web_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/outdial/outdial/web/roles"
)

// TestOpenAPIRequiredRoles keeps the document's x-required-role and the
// roles table (web/roles) the same: every authenticated operation names
// the role its route's entry needs (a HEAD the role of its GET) and says it
// in its description, documents the 403 a lesser role gets, and no public
// operation has a role; every entry of the table is documented.
func TestOpenAPIRequiredRoles(t *testing.T) {
	documented := map[string]bool{}
	for _, o := range openAPIOperations(t, openAPIDoc(t)) {
		role, has := o.Op["x-required-role"]
		if o.public() {
			if has {
				t.Errorf("%s is public but has x-required-role %v", o.key(), role)
			}
			continue
		}
		method := o.Method
		if method == http.MethodHead {
			method = http.MethodGet
		}
		pattern := openAPIPathParam.ReplaceAllString(o.Path, ":$1")
		documented[method+" "+pattern] = true
		op, ok := roles.Of(method, pattern)
		if !ok {
			t.Errorf("%s: web/roles has no entry for %s %s", o.key(), method, pattern)
			continue
		}
		if role != string(op.Need) {
			t.Errorf("%s: x-required-role = %v, want %s (web/roles)", o.key(), role, op.Need)
		}
		if desc, _ := o.Op["description"].(string); !strings.Contains(desc, "Required role: "+string(op.Need)) {
			t.Errorf("%s: description does not say \"Required role: %s\": %q", o.key(), op.Need, desc)
		}
		if o.responses()["403"] == nil {
			t.Errorf("%s does not document its 403 (a role below %s)", o.key(), op.Need)
		}
	}
	for _, k := range roles.Patterns() {
		if !documented[k] {
			t.Errorf("web/roles has %s, which web/openapi.json does not document as an authenticated operation", k)
		}
	}
}

package cmd

import (
	"os/exec"
	"strings"
	"testing"
)

const module = "github.com/outdial/outdial"

// TestImportGraph asserts STYLE.md's one-way data flow with `go list -deps`:
// store (and its sub-packages) imports none of web, dialer and cmd; dialer
// imports neither web nor cmd; web does not import cmd; web/wire, the API's
// bodies both web and the console use, imports no other package of web
// (the console included) nor store.
func TestImportGraph(t *testing.T) {
	// go test puts its toolchain's bin directory first on PATH.
	cmd := exec.Command("go", "list", "-e", "-f", `{{.ImportPath}}{{range .Deps}} {{.}}{{end}}`, module+"/...")
	cmd.Dir = ".."
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	rules := []struct {
		pkg       string   // the package and its sub-packages
		forbidden []string // may not depend on these or their sub-packages
	}{
		{module + "/store", []string{module + "/web", module + "/dialer", module + "/cmd"}},
		{module + "/dialer", []string{module + "/web", module + "/cmd"}},
		{module + "/web", []string{module + "/cmd"}},
		{module + "/web/wire", []string{module + "/web", module + "/store", module + "/cmd"}},
	}
	under := func(p, root string) bool { return p == root || strings.HasPrefix(p, root+"/") }
	seen := map[string]bool{}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		fields := strings.Fields(line)
		if len(fields) == 0 {
			continue
		}
		pkg, deps := fields[0], fields[1:]
		seen[pkg] = true
		for _, r := range rules {
			if !under(pkg, r.pkg) {
				continue
			}
			for _, d := range deps {
				for _, f := range r.forbidden {
					if under(d, f) {
						t.Errorf("%s depends on %s (forbidden: %s must not import %s)", pkg, d, r.pkg, f)
					}
				}
			}
		}
	}
	for _, p := range []string{"store", "web", "dialer/carrier", "cmd"} {
		if !seen[module+"/"+p] {
			t.Errorf("go list did not report %s/%s; the rules checked nothing", module, p)
		}
	}
}

package cmd

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"

	"github.com/spf13/pflag"
)

// The Debian package's /etc/outdial/outdial.env (packaging/outdial.env) lists
// every OUTDIAL_* variable serve reads, commented out, with its default and
// one line saying what it does (API.md 18). It is generated from serve's
// flags by envFileText; TestPackagedEnvFile fails when the file and the
// flags differ, and rewrites it with
//
//	go test ./cmd -run TestPackagedEnvFile -update-env-file

var updateEnvFile = flag.Bool("update-env-file", false, "rewrite packaging/outdial.env from serve's flags")

const envFilePath = "../packaging/outdial.env"

const envFileHeader = `# /etc/outdial/outdial.env: the settings of outdial.service (its EnvironmentFile).
#
# One VARIABLE=value per line, no quotes; a line starting with # is ignored.
# Every variable outdial serve reads is listed below, commented out, with its
# default and what it does (docs/api.md section 8 has the details). Uncomment
# a line and change its value, then: systemctl restart outdial
# (systemctl reload outdial only reads --tls-cert and --tls-key again).
#
# The unit runs "outdial serve --data /var/lib/outdial": a flag given on the
# command line wins over its variable, so OUTDIAL_DATA has no effect there.
#
# To serve the console and the API on https with a certificate from Let's
# Encrypt, set OUTDIAL_ACME_DOMAIN to this server's DNS name (ports 80 and 443
# reachable from the internet); --addr then defaults to :443 and --public-url
# to https://<that name>.
`

// envFileText renders the env file from serve's flags (the root's
// persistent --data first, then serve's in the order they are registered;
// hidden flags left out) and the variables serve reads beside its flags,
// whose defaults come from docs/api.md's table.
func envFileText(t *testing.T) string {
	t.Helper()
	root := newRoot()
	serve, _, err := root.Find([]string{"serve"})
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	b.WriteString(envFileHeader)
	section := func(title string) { fmt.Fprintf(&b, "\n# ---- %s\n", title) }
	line := func(name, usage, def string) {
		fmt.Fprintf(&b, "\n# %s\n#%s=%s\n", usage, name, def)
	}
	flagLine := func(f *pflag.Flag) {
		if f.Hidden {
			return
		}
		def := f.DefValue
		if f.Value.Type() == "stringSlice" && def == "[]" {
			def = ""
		}
		line("OUTDIAL_"+strings.ToUpper(strings.ReplaceAll(f.Name, "-", "_")), "--"+f.Name+": "+f.Usage, def)
	}
	section("flags of outdial serve")
	root.PersistentFlags().VisitAll(flagLine)
	// serve.Flags() holds serve's own flags until it parses (the root's
	// persistent ones are merged in then); unsorted, in registration order.
	fs := serve.Flags()
	fs.SortFlags = false
	fs.VisitAll(flagLine)

	section("read by serve beside its flags")
	line("OUTDIAL_SECRET_KEY", "server secret, base64 of 32 bytes: seals provider credentials and keys webhook tokens (default: DATA/secret.key, created at first start; keep it with every backup)", "")
	defaults := providerURLDefaults(t)
	envs := make([]string, 0, len(providerURLEnv))
	for _, env := range providerURLEnv {
		envs = append(envs, env)
	}
	sort.Strings(envs)
	for _, env := range envs {
		def, ok := defaults[env]
		if !ok {
			t.Fatalf("docs/api.md's table of provider API URLs has no %s", env)
		}
		provider := strings.TrimSuffix(strings.TrimPrefix(env, "OUTDIAL_"), "_API_URL")
		line(env, fmt.Sprintf("base URL of %s's API (a regional endpoint)", strings.ToLower(provider)), def)
	}
	return b.String()
}

// providerURLDefaults reads the defaults of OUTDIAL_*_API_URL from
// docs/api.md section 8.
func providerURLDefaults(t *testing.T) map[string]string {
	t.Helper()
	doc, err := os.ReadFile("../docs/api.md")
	if err != nil {
		t.Fatal(err)
	}
	re := regexp.MustCompile("\\| `(OUTDIAL_[A-Z]+_API_URL)` \\| `([^`]+)` \\|")
	m := map[string]string{}
	for _, sub := range re.FindAllStringSubmatch(string(doc), -1) {
		m[sub[1]] = sub[2]
	}
	return m
}

// TestPackagedEnvFile: packaging/outdial.env is what envFileText renders
// from today's flags, and it names every OUTDIAL_* variable the binary's
// own source reads by name.
func TestPackagedEnvFile(t *testing.T) {
	want := envFileText(t)
	if *updateEnvFile {
		if err := os.WriteFile(envFilePath, []byte(want), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	got, err := os.ReadFile(envFilePath)
	if err != nil {
		t.Fatal(err)
	}
	if string(got) != want {
		t.Fatalf("packaging/outdial.env differs from serve's flags; regenerate it with\n"+
			"  go test ./cmd -run TestPackagedEnvFile -update-env-file\nwant:\n%s", want)
	}
	// Every variable named in a string literal of cmd's own code (beside
	// the flags, which bindEnv names) is in the file.
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	literal := regexp.MustCompile(`"(OUTDIAL_[A-Z0-9_]+)"`)
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		src, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range literal.FindAllStringSubmatch(string(src), -1) {
			if !strings.Contains(want, "\n#"+m[1]+"=") {
				t.Errorf("%s reads %s, which packaging/outdial.env does not list", f, m[1])
			}
		}
	}
	// And every line is a commented-out assignment under its explanation.
	for i, l := range strings.Split(strings.TrimSpace(want), "\n") {
		if l != "" && !strings.HasPrefix(l, "#") {
			t.Errorf("line %d is not commented out: %q", i+1, l)
		}
	}
}

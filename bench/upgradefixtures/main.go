// Command upgradefixtures makes the upgrade fixtures of cmd/testdata/upgrade:
// one database per released schema version, written by the real binary of
// that version built from the repository's history (API.md 18).
//
// For each commit it checks the commit out into a temporary git worktree,
// builds it (CGO_ENABLED=0), and runs it on a fresh data directory with a
// fixed OUTDIAL_SECRET_KEY and OUTDIAL_TWILIO_API_URL pointing at a Twilio
// simulator (dialer/carrier/twiliosim of this tree, which speaks Twilio's
// wire format, so every version's carrier dials it). Through that
// version's own CLI and HTTP API it creates two organizations with API keys,
// telephony configurations with secrets and phone numbers, workflows, a
// campaign of eight contacts dialled to completion (answered, voicemail,
// busy, no answer, failed) and its redial, and, where the version has them
// (schema 8 on), suppressions and a compliance policy. It then reads every
// resource back through the same API, stops the service with SIGTERM (a
// clean close: no -wal left), and writes
//
//	schema-NN-<commit>.db.gz  the database file, gzipped
//	schema-NN-<commit>.json   the commit, schema version, secret key, API
//	                          keys, the configurations' secrets and every
//	                          GET with its status and answer
//
// cmd's TestUpgradeFixtures opens each with today's binary and compares.
//
// Usage, from the repository root (GOTOOLCHAIN as in .ci/run):
//
//	go run ./bench/upgradefixtures [-out cmd/testdata/upgrade] [-bin-cache DIR] [COMMIT...]
//
// Without commits it makes the default list: 640eb18 and e399618 (the
// released ones until the first tag) and the last commit of each schema
// version between them.
package main

import (
	"context"
	"flag"
	"fmt"
	"log"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// defaultCommits are the last commit of each schema version from 3 (the
// first release, 640eb18) to 11 (e399618). Schema 7's last commit,
// 3e98f33, does not build (its web layer came before its store): c8e989e,
// the commit before it, is used.
var defaultCommits = []string{
	"640eb18", // schema 3, released
	"1328af0", // schema 4
	"6e356aa", // schema 5
	"b1087e6", // schema 6
	"c8e989e", // schema 7
	"02ae618", // schema 8
	"2fea76e", // schema 9
	"f994b18", // schema 10
	"e399618", // schema 11, released
}

// fixtureSecretKey is OUTDIAL_SECRET_KEY of every fixture (base64 of 32
// bytes), so today's binary can open the sealed credentials.
const fixtureSecretKey = "b3V0ZGlhbC11cGdyYWRlLWZpeHR1cmUta2V5LTMyYiE="

func main() {
	out := flag.String("out", "cmd/testdata/upgrade", "directory the fixtures are written to")
	binCache := flag.String("bin-cache", "", "directory of built binaries named by full commit hash (built there when missing; default: a temporary directory)")
	flag.Parse()
	commits := flag.Args()
	if len(commits) == 0 {
		commits = defaultCommits
	}
	log.SetFlags(log.Ltime)
	if err := run(context.Background(), *out, *binCache, commits); err != nil {
		log.Fatal(err)
	}
}

func run(ctx context.Context, out, binCache string, commits []string) error {
	work, err := os.MkdirTemp("", "upgradefixtures-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(work)
	if binCache == "" {
		binCache = filepath.Join(work, "bin")
	}
	if err := os.MkdirAll(binCache, 0o755); err != nil {
		return err
	}
	if err := os.MkdirAll(out, 0o755); err != nil {
		return err
	}
	for _, c := range commits {
		full, err := git("rev-parse", "--verify", c+"^{commit}")
		if err != nil {
			return err
		}
		bin, err := build(ctx, work, binCache, full)
		if err != nil {
			return fmt.Errorf("build %s: %w", c, err)
		}
		log.Printf("%s: built %s", c, bin)
		if err := makeFixture(ctx, work, out, bin, full); err != nil {
			return fmt.Errorf("fixture of %s: %w", c, err)
		}
	}
	return nil
}

// git runs git in the current directory and returns its trimmed output.
func git(args ...string) (string, error) {
	b, err := exec.Command("git", args...).Output()
	if err != nil {
		return "", fmt.Errorf("git %s: %w", strings.Join(args, " "), err)
	}
	return strings.TrimSpace(string(b)), nil
}

// build returns the binary of commit (full hash) in binCache, building it
// from a temporary worktree when it is not there yet.
func build(ctx context.Context, work, binCache, commit string) (string, error) {
	bin := filepath.Join(binCache, commit)
	if _, err := os.Stat(bin); err == nil {
		return bin, nil
	}
	src := filepath.Join(work, "src-"+commit[:12])
	if _, err := git("worktree", "add", "--detach", src, commit); err != nil {
		return "", err
	}
	defer git("worktree", "remove", "--force", src) //nolint:errcheck // best effort
	cmd := exec.CommandContext(ctx, "go", "build", "-trimpath", "-o", bin, ".")
	cmd.Dir = src
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
	if err := cmd.Run(); err != nil {
		return "", err
	}
	return bin, nil
}

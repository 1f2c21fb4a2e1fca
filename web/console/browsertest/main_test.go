package browsertest_test

import (
	"fmt"
	"os"
	"testing"
)

// The package's server and browser, shared by every test (each test has its
// own organization and its own tab).
var (
	srv *stack
	// chrome is nil when the browser could not start; browserErr says why
	// and newTab skips with it (the package fails instead when CI is set).
	chrome     *browser
	browserErr error
)

// TestMain starts the server and the browser once for the package. Without
// a browser the tests that need one skip, except under CI (the variable CI
// set, as .ci/run's environment has it), where the package fails: a CI run
// must never pass by skipping its browser tests.
func TestMain(m *testing.M) { os.Exit(runTests(m)) }

func runTests(m *testing.M) int {
	s, err := startStack()
	if err != nil {
		fmt.Fprintln(os.Stderr, "browsertest: start the server:", err)
		return 1
	}
	srv = s
	defer func() {
		if err := s.close(); err != nil {
			fmt.Fprintln(os.Stderr, "browsertest: stop the server:", err)
		}
	}()
	chrome, browserErr = startBrowser()
	if browserErr != nil {
		if os.Getenv("CI") != "" {
			fmt.Fprintf(os.Stderr, "browsertest: CI is set and the browser did not start: %v\n", browserErr)
			return 1
		}
	} else {
		defer chrome.close()
	}
	code := m.Run()
	if code != 0 {
		fmt.Fprintf(os.Stderr, "browsertest: the server's last log lines:\n%s\n", s.logs.tail(8192))
	}
	return code
}

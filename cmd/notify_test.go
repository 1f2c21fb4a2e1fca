package cmd

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// fakeSystemd is a NOTIFY_SOCKET listener: the messages serve sends, one
// datagram each.
type fakeSystemd struct {
	t    *testing.T
	conn *net.UnixConn
}

// listenNotify listens on a unix datagram socket at a short path (socket
// paths are limited to 108 bytes) or, for a name starting with "@", in the
// abstract namespace, and sets NOTIFY_SOCKET to it for the test.
func listenNotify(t *testing.T, abstract bool) *fakeSystemd {
	t.Helper()
	var name string
	if abstract {
		name = fmt.Sprintf("@outdial-test-%d-%d", os.Getpid(), time.Now().UnixNano())
	} else {
		dir, err := os.MkdirTemp("", "sdn")
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { os.RemoveAll(dir) })
		name = filepath.Join(dir, "notify")
	}
	conn, err := net.ListenUnixgram("unixgram", &net.UnixAddr{Name: name, Net: "unixgram"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	t.Setenv("NOTIFY_SOCKET", name)
	return &fakeSystemd{t: t, conn: conn}
}

// next returns the next message, failing after 20 s without one.
func (f *fakeSystemd) next() string {
	f.t.Helper()
	buf := make([]byte, 4096)
	f.conn.SetReadDeadline(time.Now().Add(20 * time.Second))
	n, err := f.conn.Read(buf)
	if err != nil {
		f.t.Fatalf("no sd_notify message: %v", err)
	}
	return string(buf[:n])
}

// until reads messages until one has want as a line, and returns the
// messages read before it.
func (f *fakeSystemd) until(want string) []string {
	f.t.Helper()
	var before []string
	for {
		msg := f.next()
		for _, line := range strings.Split(msg, "\n") {
			if line == want {
				return before
			}
		}
		before = append(before, msg)
	}
}

// TestServeNotifiesSystemd runs serve under a fake systemd with a watchdog
// of 200 ms: READY=1 (with a STATUS line) once it serves, WATCHDOG=1 every
// half interval, STOPPING=1 when its context (SIGTERM in production) ends;
// nothing else. Both a socket path and an abstract name work.
func TestServeNotifiesSystemd(t *testing.T) {
	for _, abstract := range []bool{false, true} {
		t.Run(fmt.Sprintf("abstract=%v", abstract), func(t *testing.T) {
			clearEnv(t)
			sd := listenNotify(t, abstract)
			t.Setenv("WATCHDOG_USEC", "200000")
			t.Setenv("WATCHDOG_PID", strconv.Itoa(os.Getpid()))
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			base, done, _ := startServe(t, ctx, t.TempDir())

			ready := sd.next()
			if !strings.HasPrefix(ready, "READY=1\nSTATUS=serving on ") || !strings.Contains(ready, base) {
				t.Fatalf("first message %q, want READY=1 and a status naming %s", ready, base)
			}
			for i := 0; i < 3; i++ {
				if msg := sd.next(); msg != "WATCHDOG=1" {
					t.Fatalf("message %q while running, want WATCHDOG=1", msg)
				}
			}
			cancel()
			for _, msg := range sd.until("STOPPING=1") {
				if msg != "WATCHDOG=1" {
					t.Fatalf("message %q before STOPPING=1", msg)
				}
			}
			waitDone(t, done)
		})
	}
}

// TestWatchdogFedOnlyWhileTheDatabaseAnswers: no WATCHDOG=1 follows a
// failed probe; the first one comes after the first probe that succeeds,
// and each failure is logged.
func TestWatchdogFedOnlyWhileTheDatabaseAnswers(t *testing.T) {
	sd := listenNotify(t, false)
	var logs syncBuffer
	n := newNotifier(slog.New(slog.NewTextHandler(&logs, nil)))
	var probes atomic.Int32
	probe := func(context.Context) error {
		if probes.Add(1) <= 3 {
			return errors.New("database is locked")
		}
		return nil
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go n.watchdog(ctx, 20*time.Millisecond, probe)
	if msg := sd.next(); msg != "WATCHDOG=1" {
		t.Fatalf("message %q, want WATCHDOG=1", msg)
	}
	if got := probes.Load(); got < 4 {
		t.Fatalf("WATCHDOG=1 sent after %d probes, the first 3 of which failed", got)
	}
	if c := strings.Count(logs.String(), "watchdog not fed: the database did not answer"); c != 3 {
		t.Fatalf("%d failed probes logged, want 3:\n%s", c, logs.String())
	}
}

// TestWatchdogInterval: WATCHDOG_USEC for this process only.
func TestWatchdogInterval(t *testing.T) {
	cases := []struct {
		usec, pid string
		want      time.Duration
	}{
		{"", "", 0},
		{"30000000", "", 30 * time.Second},
		{"30000000", strconv.Itoa(os.Getpid()), 30 * time.Second},
		{"30000000", "1", 0},
		{"0", "", 0},
		{"-5", "", 0},
		{"thirty", "", 0},
	}
	for _, tc := range cases {
		t.Setenv("WATCHDOG_USEC", tc.usec)
		t.Setenv("WATCHDOG_PID", tc.pid)
		if got := watchdogInterval(); got != tc.want {
			t.Errorf("WATCHDOG_USEC=%q WATCHDOG_PID=%q: %v, want %v", tc.usec, tc.pid, got, tc.want)
		}
	}
}

// TestNoNotifySocket: without NOTIFY_SOCKET nothing is sent and nothing
// fails; a socket of another kind is ignored with a warning.
func TestNoNotifySocket(t *testing.T) {
	t.Setenv("NOTIFY_SOCKET", "")
	log := slog.New(slog.DiscardHandler)
	if n := newNotifier(log); n != nil || n.send("READY=1") != nil {
		t.Fatal("a notifier without NOTIFY_SOCKET")
	}
	t.Setenv("NOTIFY_SOCKET", "vsock:2:1234")
	if n := newNotifier(log); n != nil {
		t.Fatal("a notifier for a vsock address")
	}
}

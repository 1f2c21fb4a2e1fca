package cmd

import (
	"context"
	"fmt"
	"log/slog"
	"net"
	"os"
	"strconv"
	"time"
)

// systemd's service notification protocol (sd_notify(3)), for the packaged
// unit's Type=notify and WatchdogSec: serve tells systemd READY=1 once it
// serves, STOPPING=1 when it begins to shut down, and WATCHDOG=1 every half
// watchdog interval while its database answers.
//
// Written here rather than taken from github.com/coreos/go-systemd/v22's
// daemon package: the protocol is one datagram of "KEY=value" lines to the
// unix socket named by $NOTIFY_SOCKET (a path, or "@" for the abstract
// namespace, which Go's net package maps), documented as a stable interface
// by systemd; the two functions we need are a dozen lines, and the binary
// gains no module for them.

// notifier sends sd_notify messages to $NOTIFY_SOCKET. A nil *notifier (no
// socket: not started by systemd, or by a unit of another Type) sends
// nothing.
type notifier struct {
	addr *net.UnixAddr
	log  *slog.Logger
}

// newNotifier returns the notifier of $NOTIFY_SOCKET, nil when it is unset
// or not a unix socket (systemd's vsock: addresses are not supported).
func newNotifier(log *slog.Logger) *notifier {
	path := os.Getenv("NOTIFY_SOCKET")
	if path == "" {
		return nil
	}
	if path[0] != '/' && path[0] != '@' {
		log.Warn("NOTIFY_SOCKET is not a unix socket path: systemd is not notified", slog.String("notify_socket", path))
		return nil
	}
	return &notifier{addr: &net.UnixAddr{Name: path, Net: "unixgram"}, log: log}
}

// send sends one message (newline-separated assignments, e.g. "READY=1").
// A failure is logged at Warn and returned.
func (n *notifier) send(state string) error {
	if n == nil {
		return nil
	}
	conn, err := net.DialUnix("unixgram", nil, n.addr)
	if err == nil {
		_, err = conn.Write([]byte(state))
		conn.Close()
	}
	if err != nil {
		err = fmt.Errorf("sd_notify: %w", err)
		n.log.Warn("systemd not notified", slog.String("state", state), slog.String("error", err.Error()))
	}
	return err
}

// watchdogInterval returns systemd's watchdog interval for this process
// ($WATCHDOG_USEC), 0 when there is none: the variable unset or not a
// positive number, or $WATCHDOG_PID naming another process.
func watchdogInterval() time.Duration {
	usec, err := strconv.ParseInt(os.Getenv("WATCHDOG_USEC"), 10, 64)
	if err != nil || usec <= 0 {
		return 0
	}
	if pid := os.Getenv("WATCHDOG_PID"); pid != "" && pid != strconv.Itoa(os.Getpid()) {
		return 0
	}
	return time.Duration(usec) * time.Microsecond
}

// watchdog sends WATCHDOG=1 every half interval until ctx ends, each time
// only after probe (a read of the database) returned nil within that half:
// a service whose database hangs stops feeding the watchdog, and systemd
// restarts it after the interval. A failed probe is logged.
func (n *notifier) watchdog(ctx context.Context, interval time.Duration, probe func(context.Context) error) {
	if n == nil || interval <= 0 {
		return
	}
	every := interval / 2
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		pctx, cancel := context.WithTimeout(ctx, every)
		err := probe(pctx)
		cancel()
		switch {
		case ctx.Err() != nil:
			return
		case err != nil:
			n.log.Warn("watchdog not fed: the database did not answer", slog.String("error", err.Error()),
				slog.Duration("watchdog_interval", interval))
		default:
			_ = n.send("WATCHDOG=1")
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

package cmd

import (
	"errors"
	"fmt"
	"net"
	"os"
	"strings"
	"time"
	"unicode"

	"github.com/spf13/pflag"

	"github.com/outdial/outdial/dialer"
)

// Bounds of serve's node flags (API.md 16).
const (
	// minLeaseTTL is --lease-ttl's least value: a lease is renewed every
	// third of it and stops covering provider requests a quarter before
	// its expiry, so below 3 s a database answering in a few hundred
	// milliseconds would make campaigns change hands.
	minLeaseTTL = 3 * time.Second
	// maxNodeNameLen bounds --node-name (it is in every lease row, every
	// notification between nodes and a metric's label).
	maxNodeNameLen = 128
)

// errBundledStoreShared: serve --database-url without a remote S3 store.
var errBundledStoreShared = errors.New("--database-url needs a remote S3 store that every node shares (--s3-endpoint, --s3-bucket, --s3-access-key, --s3-secret-key, API.md 3.2): the bundled store keeps uploads on this node's disk, where the other nodes cannot read them")

// addClusterFlags registers serve's flags of API.md 16: the database URL,
// the node's name and the campaign lease's TTL.
func addClusterFlags(f *pflag.FlagSet) {
	addDatabaseURLFlag(f)
	f.String("node-name", "", "this node's name in logs, metrics, health and a campaign's dialed_by (default hostname:port of the listen address)")
	f.Duration("lease-ttl", dialer.DefaultLeaseTTL, "how long a campaign's lease lasts without renewal (renewed every third of it): another node takes the campaign over this long after its node died; at least 3s")
}

// clusterOptions are serve's node settings, read and checked by
// readClusterFlags.
type clusterOptions struct {
	// DatabaseURL is --database-url ("": DATA/outdial.db).
	DatabaseURL string
	// Node is --node-name ("": hostname:port of the listener, nodeName).
	Node string
	// LeaseTTL is --lease-ttl.
	LeaseTTL time.Duration
}

// readClusterFlags reads and checks the flags of addClusterFlags before
// serve opens anything: a --database-url that is not a PostgreSQL URL, a
// --lease-ttl under 3 s, a --node-name that is too long or holds control
// characters, and the bundled object store beside --database-url are
// refused.
func readClusterFlags(f *pflag.FlagSet) (clusterOptions, error) {
	u, err := databaseURL(f)
	if err != nil {
		return clusterOptions{}, err
	}
	ttl, _ := f.GetDuration("lease-ttl")
	if ttl < minLeaseTTL {
		return clusterOptions{}, fmt.Errorf("--lease-ttl must be at least %s, got %s", minLeaseTTL, ttl)
	}
	node, _ := f.GetString("node-name")
	if f.Changed("node-name") {
		if err := checkNodeName(node); err != nil {
			return clusterOptions{}, err
		}
	}
	if endpoint, _ := f.GetString("s3-endpoint"); u != "" && endpoint == "" {
		return clusterOptions{}, errBundledStoreShared
	}
	return clusterOptions{DatabaseURL: u, Node: node, LeaseTTL: ttl}, nil
}

// checkNodeName refuses an empty --node-name, one over maxNodeNameLen
// bytes, and one holding control characters.
func checkNodeName(name string) error {
	switch {
	case strings.TrimSpace(name) == "":
		return errors.New("--node-name must not be empty")
	case len(name) > maxNodeNameLen:
		return fmt.Errorf("--node-name must be at most %d bytes, got %d", maxNodeNameLen, len(name))
	case strings.IndexFunc(name, unicode.IsControl) >= 0:
		return fmt.Errorf("--node-name must not hold control characters, got %q", name)
	}
	return nil
}

// nodeName is the node's name: name when set, else this host's name and
// the port of listenAddr, the address the listener took ("app-1:8080").
func nodeName(name, listenAddr string) string {
	if name != "" {
		return name
	}
	host, err := os.Hostname()
	if err != nil || host == "" {
		host = "localhost"
	}
	_, port, err := net.SplitHostPort(listenAddr)
	if err != nil {
		return host
	}
	return net.JoinHostPort(host, port)
}

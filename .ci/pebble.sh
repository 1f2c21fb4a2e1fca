#!/usr/bin/env bash
# Installs Debian's pebble, the RFC 8555 ACME test server the ACME test
# (cmd/acme_test.go) runs on loopback, unless /usr/bin/pebble is already
# there (.ci/apt-install.sh). The test finds pebble at /usr/bin/pebble, or
# wherever $PEBBLE points.
set -euo pipefail

"$(dirname "${BASH_SOURCE[0]}")/apt-install.sh" pebble /usr/bin/pebble pebble
dpkg-query -W pebble

#!/usr/bin/env bash
# Installs Debian's chromium, the headless browser the console's real-browser
# tests (web/console/browsertest) drive through chromedp, unless
# /usr/bin/chromium is already there (.ci/apt-install.sh). The tests find
# the browser at /usr/bin/chromium, or wherever $CHROMIUM points.
set -euo pipefail

# Fonts with the package, so pages (and screenshots) render text on a
# machine without any.
"$(dirname "${BASH_SOURCE[0]}")/apt-install.sh" chromium /usr/bin/chromium chromium fonts-dejavu-core
# The binary itself: Debian's launcher script complains on stderr about
# things headless runs do not need.
/usr/lib/chromium/chromium --version

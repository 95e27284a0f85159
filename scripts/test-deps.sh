#!/usr/bin/env bash
# Installs the Debian packages the test suite drives for real (idempotent; fast when present).
# Run by `npm test` (pretest). Needs root or passwordless sudo on a machine without the packages.
set -euo pipefail
need=()
# (package list grows with the parts that need it)
if [ ${#need[@]} -eq 0 ]; then exit 0; fi
SUDO=""; [ "$(id -u)" -ne 0 ] && SUDO="sudo -n"
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq --no-install-recommends "${need[@]}"

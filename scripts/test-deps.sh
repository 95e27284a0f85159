#!/usr/bin/env bash
# Installs the Debian packages the test suite drives for real (idempotent; fast when present).
# Run by `npm test` (pretest). Needs root or passwordless sudo on a machine without the packages.
set -euo pipefail
need=()
# Attestation agent: swtpm behind the agent, tpm2-tools to cross-check quotes, Go + grpc-go for
# the Go client (built offline from Debian's packaged sources), openssl for test certificate chains,
# curl and python3 for the plain-HTTP examples in docs/attestation-agent.md (run as tests).
# REST API: Debian's Chromium drives the Swagger UI page in a real browser (playwright-core).
# Git engine: the git CLI is the client and the oracle of the git tests and of bench:git.
for p in swtpm swtpm-tools tpm2-tools golang-go golang-google-grpc-dev openssl curl python3 chromium git; do
  dpkg -s "$p" >/dev/null 2>&1 || need+=("$p")
done
if [ ${#need[@]} -eq 0 ]; then exit 0; fi
SUDO=""; [ "$(id -u)" -ne 0 ] && SUDO="sudo -n"
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq --no-install-recommends "${need[@]}" >/dev/null

#!/usr/bin/env bash
# Builds the Go test client (test/agent/go/client) offline against Debian's golang-google-grpc-dev:
# GOPATH mode (GO111MODULE=off) with /usr/share/gocode as the dependency tree, no module proxy.
# Usage: scripts/agent-go-client.sh OUT_BINARY
set -euo pipefail
out="${1:?usage: $0 OUT_BINARY}"
here="$(cd "$(dirname "$0")/.." && pwd)"
scratch="$(mktemp -d)"
trap 'rm -rf "$scratch"' EXIT
export GO111MODULE=off GOPATH="$scratch:/usr/share/gocode" GOFLAGS= GOPROXY=off
export GOCACHE="${GOCACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/go-build}"
cd "$here/test/agent/go/client"
go build -o "$out" .

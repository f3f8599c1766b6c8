#!/usr/bin/env bash
# serve-subcommand-test.sh BADGEFLOW BADGEFLOW_SERVE -- `badgeflow serve` runs the real
# badgeflow-serve: found on PATH, and beside badgeflow (an install puts both in one folder;
# that one is looked at first);
# it answers /healthz and an account read of a state a filter wrote, and stops with exit 0 on
# SIGTERM. Without badgeflow-serve anywhere, `badgeflow serve` is exit 4 naming what to install.
set -euo pipefail
BIN=$(realpath "$1")
SERVE=$(realpath "$2")
W=$(mktemp -d)
pid=
trap '[ -z "$pid" ] || kill "$pid" 2>/dev/null || true; rm -rf "$W"' EXIT
fail() { echo "serve-subcommand-test: $*" >&2; exit 1; }

printf '%s\n' '{"op":"login","device":"d1","account":"a1"}' '{"device":"d1","aps":{"alert":"hi","thread-id":"mail"}}' |
  "$BIN" filter --state "$W/s.sqlite" > /dev/null

# Nowhere: a copy of badgeflow alone in a folder, PATH without the server.
mkdir "$W/alone" && cp "$BIN" "$W/alone/badgeflow"
set +e
PATH=/usr/bin:/bin "$W/alone/badgeflow" serve --state "$W/s.sqlite" 2> "$W/err"
code=$?
set -e
[ "$code" = 4 ] || fail "without badgeflow-serve: exit $code, want 4"
grep -q "badgeflow-serve was not found" "$W/err" || fail "without badgeflow-serve: $(cat "$W/err")"

# run ROOT-OF-PATH-OR-BIN-FOLDER…: starts `badgeflow serve`, reads, stops it.
serve_once() {
  local how=$1 port=$2
  shift 2
  "$@" serve --state "$W/s.sqlite" --listen "127.0.0.1:$port" 2> "$W/serve.err" &
  pid=$!
  for _ in $(seq 1 200); do curl -sf "http://127.0.0.1:$port/healthz" > /dev/null 2>&1 && break; sleep 0.05; done
  got=$(curl -s "http://127.0.0.1:$port/v1/accounts/a1") || fail "$how: no answer ($(cat "$W/serve.err"))"
  want=$("$BIN" state get --json "$W/s.sqlite" a1)
  [ "$got" = "$want" ] || fail "$how: GET /v1/accounts/a1 gave $got, state get gave $want"
  kill -TERM "$pid"
  wait "$pid" || fail "$how: exit $? after SIGTERM"
  pid=
  echo "serve-subcommand-test: $how: /v1/accounts/a1 = state get --json, exit 0 on SIGTERM"
}
mkdir "$W/path" && ln -s "$SERVE" "$W/path/badgeflow-serve"
PATH="$W/path:/usr/bin:/bin" serve_once "badgeflow-serve on PATH" 18571 "$W/alone/badgeflow"
mkdir "$W/installed" && cp "$BIN" "$W/installed/badgeflow" && ln -s "$SERVE" "$W/installed/badgeflow-serve"
PATH=/usr/bin:/bin serve_once "badgeflow-serve beside badgeflow" 18572 "$W/installed/badgeflow"

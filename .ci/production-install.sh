#!/usr/bin/env bash
# CI: `npm start` in a fresh checkout builds dist/ first; a production install works without the
# dev tools. Copies the repository's files and node_modules/ into a temporary folder, runs
# `npm start -- --help` there (it must build dist/, once), removes the dev dependencies (npm prune
# --omit=dev: the same tree as `npm ci --omit=dev`, without compiling better-sqlite3 again), then
# runs every script a user runs: npm start -- --help, npm run check, slack:manifest, discord:*,
# web:invite, demo, pair, mcp.
# Expects: node_modules/ installed, Docker running and the sandbox image built.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

log() { printf '[production-install] %s\n' "$*"; }
fail() { log "FAILED: $*"; exit 1; }
work="$(mktemp -d "${TMPDIR:-/tmp}/roundtable-production.XXXXXX")"
fake_pid=""
cleanup() {
  [[ -n "$fake_pid" ]] && kill "$fake_pid" 2>/dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT

app="$work/app"
mkdir -p "$app"
git ls-files -z --cached --others --exclude-standard | tar --null -T - -c | tar -x -C "$app"
cp -a node_modules "$app/"

# A fresh development checkout: `npm start` builds dist/ first, and only when it is missing or stale.
built="$(cd "$app" && npm start --silent -- --help 2>&1)" || fail "npm start -- --help in a checkout without dist/"
grep -qF 'Building dist/' <<<"$built" && [[ -f "$app/dist/src/main.js" ]] || fail "npm start did not build dist/ first"
again="$(cd "$app" && npm start --silent -- --help 2>&1)" || fail "npm start -- --help with dist/ built"
! grep -qF 'Building dist/' <<<"$again" || fail "npm start rebuilt an up-to-date dist/"
log "ok: npm start builds a missing dist/ first, and not again when it is up to date"

(cd "$app" && npm prune --omit=dev --no-audit --no-fund >/dev/null)
for dev in tsx typescript vitest @biomejs/biome; do
  [[ ! -e "$app/node_modules/$dev" ]] || fail "$dev is still installed"
done
log "production install in $app ($(ls "$app/node_modules" | wc -l) top-level packages, no dev tools)"

node .ci/fake-model.mjs "$work/port" &
fake_pid=$!
for _ in $(seq 1 100); do [[ -s "$work/port" ]] && break; sleep 0.1; done
export OPENAI_BASE_URL="http://127.0.0.1:$(cat "$work/port")/v1"
cd "$app"

# Runs a script quietly; checks its exit code and that its output contains a text.
expect() {
  local code="$1" text="$2"
  shift 2
  local out status=0
  out="$("$@" 2>&1)" || status=$?
  if [[ "$status" != "$code" ]] || ! grep -qF -- "$text" <<<"$out"; then
    printf '%s\n' "$out" | tail -n 20 >&2
    fail "$* exited $status (expected $code) or did not print: $text"
  fi
  log "ok: $* (exit $status)"
}

expect 0 'Usage: npm start' npm start --silent -- --help
expect 2 'unknown option --bogus' npm start --silent -- --bogus
# CI has no terminal: the terminal room alone would be nothing to serve, so the check is given the web room.
expect 0 'checks passed' env WEB_PORT=0 npm run --silent check
expect 0 'display_information:' npm run --silent slack:manifest -- data
expect 2 'unknown option --yaml' npm run --silent slack:manifest -- data --yaml
expect 1 'no agent has a Discord bot token' npm run --silent discord:invite
expect 1 'no agent has a Discord bot token' npm run --silent discord:commands
expect 0 'Nobody is invited yet' npm run --silent web:invite -- --list
expect 1 'WEB_PORT: is not set' npm run --silent web:invite -- ana
expect 0 'DEMO: end of the example session' npm run --silent demo
expect 0 'No pairing codes are waiting' npm run --silent pair -- --list
expect 2 'ROUNDTABLE_MCP_TOKEN is not set' npm run --silent mcp

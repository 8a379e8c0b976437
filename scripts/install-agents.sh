#!/usr/bin/env bash
# Install the real agent programs the end-to-end tests drive, pinned, into $AGENTS_DIR
# (cached: an install already present is kept). Each install runs under a timeout; a failed
# install is reported and its agent's tests skip with that reason, or fail where
# FUNES_REQUIRE_AGENTS=1 (as .ci/run sets it; see tests/e2e_agents/).
set -u
AGENTS_DIR=${AGENTS_DIR:-/var/cache/agent-e2e}
mkdir -p "$AGENTS_DIR" 2>/dev/null || { AGENTS_DIR="$HOME/.cache/agent-e2e"; mkdir -p "$AGENTS_DIR"; }
echo "$AGENTS_DIR"
install_npm() {  # name package@version binary
  local dir="$AGENTS_DIR/$1"
  [ -x "$dir/node_modules/.bin/$3" ] && return 0
  timeout 900 npm install --no-audit --no-fund --prefix "$dir" "$2" >"$AGENTS_DIR/$1.log" 2>&1 \
    || echo "install of $2 failed (see $AGENTS_DIR/$1.log)" >&2
}
install_hermes() {
  local dir="$AGENTS_DIR/hermes"
  [ -x "$dir/bin/hermes" ] && return 0
  { python3 -m venv "$dir" && timeout 1800 "$dir/bin/pip" install -q 'hermes-agent[mcp]==0.19.0'; } \
    >"$AGENTS_DIR/hermes.log" 2>&1 || echo "install of hermes-agent failed (see $AGENTS_DIR/hermes.log)" >&2
}
if command -v npm >/dev/null 2>&1; then
  install_npm claude @anthropic-ai/claude-code@2.1.332 claude &
  install_npm codex @openai/codex@0.171.0 codex &
  install_npm pi @mariozechner/pi-coding-agent@0.73.1 pi &
else
  echo "npm not found: Claude Code, Codex and pi end-to-end tests will skip (fail with FUNES_REQUIRE_AGENTS=1)" >&2
fi
install_hermes &
wait

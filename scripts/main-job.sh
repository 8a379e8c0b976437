#!/bin/sh
# The main job on a fresh machine: index the agent sessions found here (Claude Code, Codex, pi,
# Hermes) or, when there are none, the sample sessions in fixtures/, then answer a recall query.
set -eu
FUNES=${FUNES_BIN:-funes}
PYTHON=${PYTHON:-python3}
QUERY=${QUERY:-"why did the database connection fail and how was it fixed"}
found=$("$FUNES" status --format agent | grep -c '^source ' || true)
if [ "$found" -gt 0 ]; then
  echo "== indexing the agent sessions found on this machine" >&2
  "$FUNES" index --yes
else
  echo "== no agent sessions on this machine: indexing the samples in fixtures/" >&2
  export FUNES_HOME="${FUNES_HOME:-$PWD/.funes-demo}"
  demo=1
  umask 077  # the demo memory and the sample state.db are private, as funes' own files are
  mkdir -p "$FUNES_HOME"
  "$FUNES" index fixtures --yes
  echo "== (expected: some samples are broken on purpose — corrupt, unknown and cut-off lines are" >&2
  echo "   skipped and counted, non-UTF-8 bytes kept as U+FFFD — and nothing else is lost)" >&2
  # Hermes keeps its sessions in SQLite; the sample is SQL text, built into a state.db here.
  "$PYTHON" -c "import sqlite3,sys; c=sqlite3.connect(sys.argv[2]); c.executescript(open(sys.argv[1]).read()); c.commit()" \
    fixtures/hermes/state.sql "$FUNES_HOME/sample-hermes-state.db" 2>/dev/null || true
  "$FUNES" index "$FUNES_HOME/sample-hermes-state.db" --yes
fi
echo "== funes recall \"$QUERY\"" >&2
"$FUNES" recall "$QUERY" -k 3
if [ -n "${demo:-}" ]; then
  # The demo memory is not the default one: say how to reach it, or a copied `→ get` line
  # answers "no memory yet".
  echo "== the memory above is in $FUNES_HOME; to run a → get line (or any funes command) on it:" >&2
  echo "   export FUNES_HOME=$FUNES_HOME FUNES_EMBEDDER=${FUNES_EMBEDDER:-} FUNES_RERANKER=${FUNES_RERANKER:-}" >&2
  echo "   $FUNES get <session_id> <turn_uuid>" >&2
fi

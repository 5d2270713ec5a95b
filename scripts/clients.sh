#!/usr/bin/env bash
# Install the pinned real clients (Claude Code, Codex) and the MCP Inspector CLI into .e2e/.
set -euo pipefail
cd "$(dirname "$0")/.."
CLAUDE=2.1.332 CODEX=0.171.0 INSPECTOR=2.12.0
mkdir -p .e2e
want="@anthropic-ai/claude-code@$CLAUDE @openai/codex@$CODEX @modelcontextprotocol/inspector@$INSPECTOR"
if [ -f .e2e/.installed ] && [ "$(cat .e2e/.installed)" = "$want" ]; then exit 0; fi
command -v npm >/dev/null || { echo "clients.sh: npm not found" >&2; exit 1; }
( cd .e2e && [ -f package.json ] || echo '{"private": true}' > package.json
  npm install --no-audit --no-fund --loglevel=error $want >/dev/null )
echo "$want" > .e2e/.installed

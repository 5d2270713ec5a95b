#!/usr/bin/env bash
# Install nexus for everyday use the way Python command-line tools are installed: in an isolated
# environment of its own, with `nexus` on PATH (~/.local/bin), through uv or pipx (pipx
# installs itself into ~/.local first when neither is there). Then wire your clients:
# `nexus install claude`, `nexus install codex --trust`, and check with `nexus doctor`.
set -euo pipefail
cd "$(dirname "$0")/.."
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
quiet() {  # run a step, showing its output only when it fails (the tools' own hints mislead here)
  "$@" >"$work/log" 2>&1 || { cat "$work/log" >&2; return 1; }
}
if command -v uv >/dev/null; then
  quiet uv tool install --force --reinstall --compile-bytecode .
  uv tool update-shell >/dev/null 2>&1 || true
else
  if command -v pipx >/dev/null; then
    pipx=(pipx)
  elif python3 -m pipx --version >/dev/null 2>&1; then
    pipx=(python3 -m pipx)
  elif [ -x "${PIPX_BIN_DIR:-$HOME/.local/bin}/pipx" ]; then  # a previous run installed it
    pipx=("${PIPX_BIN_DIR:-$HOME/.local/bin}/pipx")
  else
    # neither: pipx installs itself into ~/.local from a throwaway venv (a distribution's Python
    # refuses `pip install --user`, PEP 668), so that `pipx uninstall nexus-cli` works later too
    echo "install.sh: neither uv nor pipx found: installing pipx into ~/.local first"
    { quiet python3 -m venv "$work/boot" \
        && quiet "$work/boot/bin/python" -m pip install --disable-pip-version-check pipx \
        && quiet "$work/boot/bin/pipx" install --python python3 pipx; } \
      || { echo "install.sh: could not install pipx (python3 -m venv needs python3-venv on Debian); install uv or pipx (e.g. apt install pipx) and rerun" >&2; exit 1; }
    pipx=("${PIPX_BIN_DIR:-$HOME/.local/bin}/pipx")
  fi
  quiet "${pipx[@]}" install --force .
  "${pipx[@]}" ensurepath >/dev/null 2>&1 || true
fi
bin="${XDG_BIN_HOME:-$HOME/.local/bin}"
# its manual pages where man(1) looks (pipx would copy them, uv would not): `man nexus` works
if [ -x "$bin/nexus" ]; then quiet "$bin/nexus" man --install || true; fi
login=$(bash -lc 'command -v nexus' 2>/dev/null || true)
if [ -n "$login" ] && [ "$(command -v nexus || true)" = "$login" ]; then
  echo "nexus is installed: $login"
elif [ -n "$login" ]; then
  echo "nexus is installed: $login"
  echo "this shell does not have it on PATH yet: run \`export PATH=\"$(dirname "$login"):\$PATH\"\` (or open a new shell) first"
else
  # the file a login bash reads: the first of these that exists (else ~/.profile)
  profile="~/.profile"
  for f in .bash_profile .bash_login; do
    if [ -e "$HOME/$f" ]; then profile="~/$f"; break; fi
  done
  echo "nexus is installed in $bin, which login shells do not have on PATH yet: run"
  echo "  echo 'export PATH=\"$bin:\$PATH\"' >> $profile"
  echo "then open a new shell. \`$bin/nexus doctor\` checks it."
fi
echo "next: nexus install claude; nexus install codex --trust; nexus doctor"

#!/usr/bin/env bash
# The real LSP components the editor tests drive, from the package registries:
# Neovim, Emacs with eglot, Kakoune, clangd, tmux and patch (Debian), kak-lsp
# (crates.io), pyright, and the agents' CLIs: Claude Code's `claude`, Gemini
# CLI's `gemini`, GitHub Copilot CLI's `copilot` and `opencode` (npm, pinned;
# cli/tests/claude_*.rs, gemini_cli.rs, copilot_cli.rs and opencode_cli.rs
# run them in tmux).
#
#   bash tests/lsp/install.sh
#
# Installs only what is missing (so a machine that has them needs no network),
# with sudo when not root. Prints the versions found.
#
# Exit codes: 0 everything is installed; 3 something could not be installed
# (a registry is unreachable, or no permission): the caller skips the tests
# that need it and says so; 1 an unexpected error.
set -euo pipefail

need_apt=()
command -v nvim >/dev/null 2>&1 || need_apt+=(neovim)
command -v clangd >/dev/null 2>&1 || need_apt+=(clangd)
command -v emacs >/dev/null 2>&1 || need_apt+=(emacs-nox)
command -v tmux >/dev/null 2>&1 || need_apt+=(tmux)
# The live LSP tools' diffs are checked by applying them with `patch`.
command -v patch >/dev/null 2>&1 || need_apt+=(patch)
command -v kak >/dev/null 2>&1 || need_apt+=(kakoune)
# eglot is built into Emacs 29; Debian 12's Emacs 28 takes it from ELPA.
dpkg-query -W -f='${Status}' elpa-eglot 2>/dev/null | grep -q 'ok installed' || need_apt+=(elpa-eglot)
if ! command -v npm >/dev/null 2>&1; then
    if ! command -v pyright-langserver >/dev/null 2>&1 || ! command -v claude >/dev/null 2>&1 \
        || ! command -v gemini >/dev/null 2>&1 || ! command -v copilot >/dev/null 2>&1 \
        || ! command -v opencode >/dev/null 2>&1; then
        need_apt+=(npm)
    fi
fi
# The version the review test was written against (its dialogs, its API
# calls, its `openDiff`); a `claude` already installed is kept as it is.
claude_version=2.1.332
# The version the Gemini face was written against (PROTOCOL.md); a `gemini`
# already installed is kept as it is.
gemini_version=0.61.0
# The versions the Copilot face (PROTOCOL.md) and the opencode test were
# written against; one already installed is kept as it is.
copilot_version=1.0.102
opencode_version=1.18.33
# kak-lsp (kakoune-lsp) from crates.io: the release cli/tests/lsp_kakoune.rs
# was written against, which still supports Debian 12's Kakoune 2022.10.31
# (kakoune-lsp's oldest supported release) and the README's `kak-lsp.toml`.
kak_lsp_version=22.0.0

sudo=()
if [[ $(id -u) -ne 0 ]]; then
    if command -v sudo >/dev/null 2>&1 && sudo -n true 2>/dev/null; then
        sudo=(sudo -n)
    elif [[ ${#need_apt[@]} -gt 0 ]]; then
        echo "lsp install: ${need_apt[*]} missing and no root or password-less sudo to install them" >&2
        exit 3
    fi
fi

if [[ ${#need_apt[@]} -gt 0 ]]; then
    echo "lsp install: apt-get install ${need_apt[*]}"
    if ! "${sudo[@]}" apt-get update -qq \
        || ! DEBIAN_FRONTEND=noninteractive "${sudo[@]}" apt-get install -y -qq --no-install-recommends "${need_apt[@]}"; then
        echo "lsp install: apt-get could not install ${need_apt[*]} (is the Debian mirror reachable?)" >&2
        exit 3
    fi
fi

if ! command -v pyright-langserver >/dev/null 2>&1; then
    echo "lsp install: npm install -g pyright"
    if ! "${sudo[@]}" npm install -g --no-audit --no-fund pyright; then
        echo "lsp install: npm could not install pyright (is the npm registry reachable?)" >&2
        exit 3
    fi
fi

if ! command -v claude >/dev/null 2>&1; then
    echo "lsp install: npm install -g @anthropic-ai/claude-code@$claude_version"
    # The package's install script puts the native binary in place (newer
    # npm runs it only when allowed; older npm ignores the flag).
    if ! "${sudo[@]}" npm install -g --no-audit --no-fund \
        --allow-scripts=@anthropic-ai/claude-code "@anthropic-ai/claude-code@$claude_version"; then
        echo "lsp install: npm could not install @anthropic-ai/claude-code (is the npm registry reachable?)" >&2
        exit 3
    fi
fi

if ! command -v gemini >/dev/null 2>&1; then
    echo "lsp install: npm install -g @google/gemini-cli@$gemini_version"
    if ! "${sudo[@]}" npm install -g --no-audit --no-fund "@google/gemini-cli@$gemini_version"; then
        echo "lsp install: npm could not install @google/gemini-cli (is the npm registry reachable?)" >&2
        exit 3
    fi
fi

if ! command -v copilot >/dev/null 2>&1; then
    echo "lsp install: npm install -g @github/copilot@$copilot_version"
    if ! "${sudo[@]}" npm install -g --no-audit --no-fund "@github/copilot@$copilot_version"; then
        echo "lsp install: npm could not install @github/copilot (is the npm registry reachable?)" >&2
        exit 3
    fi
fi

if ! command -v opencode >/dev/null 2>&1; then
    echo "lsp install: npm install -g opencode-ai@$opencode_version"
    # Its install script puts the platform's binary in place.
    if ! "${sudo[@]}" npm install -g --no-audit --no-fund \
        --allow-scripts=opencode-ai "opencode-ai@$opencode_version"; then
        echo "lsp install: npm could not install opencode-ai (is the npm registry reachable?)" >&2
        exit 3
    fi
fi

if [[ $(kak-lsp --version 2>/dev/null) != "$kak_lsp_version" ]]; then
    echo "lsp install: cargo install --locked kak-lsp --version $kak_lsp_version"
    # Without its release profile's link-time optimisation, which would
    # take minutes more on two cores.
    if ! CARGO_PROFILE_RELEASE_LTO=false cargo install --locked --quiet kak-lsp --version "$kak_lsp_version"; then
        if ! cargo info "kak-lsp@$kak_lsp_version" >/dev/null 2>&1; then
            echo "lsp install: cargo could not install kak-lsp (is crates.io reachable?)" >&2
            exit 3
        fi
        echo "lsp install: kak-lsp $kak_lsp_version did not build" >&2
        exit 1
    fi
    if [[ $(kak-lsp --version 2>/dev/null) != "$kak_lsp_version" ]]; then
        echo "lsp install: kak-lsp is installed in ${CARGO_HOME:-$HOME/.cargo}/bin, which is not first on the PATH" >&2
        exit 1
    fi
fi

echo "lsp install: $(nvim --version | head -n 1) | $(emacs --version | head -n 1) | eglot $(dpkg-query -W -f='${Version}' elpa-eglot) | kakoune $(dpkg-query -W -f='${Version}' kakoune) | kak-lsp $(kak-lsp --version) | $(clangd --version | head -n 1) | pyright $(pyright-langserver --version 2>/dev/null || npm ls -g pyright 2>/dev/null | grep -o 'pyright@[0-9.]*' || echo '?') | $(claude --version) | gemini $(gemini --version 2>/dev/null || echo '?') | copilot $(copilot --version 2>/dev/null | head -n 1 || echo '?') | opencode $(opencode --version 2>/dev/null || echo '?') | $(tmux -V) | $(patch --version | head -n 1)"

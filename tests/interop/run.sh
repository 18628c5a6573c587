#!/usr/bin/env bash
# Interop: the official MCP Python SDK's client against a built `ide-mcp`.
#
#   bash tests/interop/run.sh [BINARY] [-- sdk_client.py options]
#
# BINARY defaults to target/debug/ide-mcp; this script builds nothing. It
# keeps a virtualenv in target/interop-venv (nothing installed globally;
# reinstalled only when requirements.txt changes), then runs sdk_client.py,
# whose default modes are `stdio`, `ws`, `bridge` and `fixture`; `--mode repo` checks
# this repository's real cargo diagnostics (see RELIABILITY.md). Then, when
# `fixture-server` (cargo build -p ide-mcp-tests --bin fixture-server) sits
# beside BINARY, eras.py drives it over Streamable HTTP and stdio in both
# protocol eras. When node and npm are installed, the official TypeScript
# SDK (ts/, installed with `npm ci` into target/interop-node) runs over the
# IDE WebSocket of an `ide-mcp serve` it starts (ts/client.mjs ws BINARY) and
# over HTTP against fixture-server, and the official conformance suite's
# server scenarios run against fixture-server (conformance/, into
# target/interop-conformance; expected failures listed with their reasons in
# conformance/expected-failures.yml).
#
# Exit codes: 0 all checks passed; 1 a check failed; 3 the requirements could
# not be installed (e.g. the package registry is unreachable), nothing checked.
set -euo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
here="$root/tests/interop"

binary="target/debug/ide-mcp"
if [[ $# -gt 0 && "$1" != "--" ]]; then
    binary="$1"
    shift
fi
[[ "${1:-}" == "--" ]] && shift
[[ "$binary" == /* ]] || binary="$root/$binary"
if [[ ! -x "$binary" ]]; then
    echo "interop: no ide-mcp binary at $binary (build it first: cargo build -p ide-mcp)" >&2
    exit 1
fi

python="${PYTHON:-python3}"
venv="$root/target/interop-venv"
stamp="$venv/.requirements"
if [[ ! -x "$venv/bin/python" ]] || ! cmp -s "$here/requirements.txt" "$stamp"; then
    echo "interop: installing $(grep -v '^#' "$here/requirements.txt" | xargs) into target/interop-venv"
    rm -rf "$venv"
    if ! "$python" -m venv "$venv" \
        || ! "$venv/bin/python" -m pip install --quiet --disable-pip-version-check \
            --timeout 30 --retries 2 -r "$here/requirements.txt"; then
        rm -rf "$venv"
        echo "interop: could not install the requirements (is the package registry reachable?)" >&2
        exit 3
    fi
    cp "$here/requirements.txt" "$stamp"
fi
"$venv/bin/python" -c 'import importlib.metadata as m; print("interop: python", __import__("sys").version.split()[0], "| mcp", m.version("mcp"), "| websockets", m.version("websockets"))'

# npm ci of one of the directories under tests/interop into target/NAME;
# prints the install directory, or nothing when it could not be installed.
npm_install() {
    local from="$here/$1" to="$root/target/$2"
    if [[ ! -d "$to/node_modules" ]] || ! cmp -s "$from/package-lock.json" "$to/package-lock.json"; then
        echo "interop: installing $1/ into target/$2" >&2
        rm -rf "$to" && mkdir -p "$to"
        cp "$from/package.json" "$from/package-lock.json" "$to/"
        (cd "$to" && npm ci --no-audit --no-fund --loglevel=error >&2) || rm -rf "$to/node_modules"
    fi
    [[ -d "$to/node_modules" ]] && echo "$to"
}

status=0
"$venv/bin/python" "$here/sdk_client.py" "$binary" "$root" "$@" || status=$?
node_dir=""
if ! command -v node >/dev/null || ! command -v npm >/dev/null; then
    echo "interop: no node/npm: the TypeScript SDK checks SKIPPED" >&2
elif node_dir="$(npm_install ts interop-node)"; then
    cp "$here/ts/client.mjs" "$node_dir/"
    echo "interop: the TypeScript SDK over the IDE WebSocket of ide-mcp serve (ts/client.mjs ws)"
    node "$node_dir/client.mjs" ws "$binary" || status=1
else
    node_dir=""
    echo "interop: the TypeScript SDK could not be installed (package registry?): its checks SKIPPED" >&2
fi
fixture_server="$(dirname "$binary")/fixture-server"
if [[ -x "$fixture_server" ]]; then
    ts_args=()
    [[ -n "$node_dir" ]] && ts_args=(--ts-client "$node_dir")
    echo "interop: both eras over Streamable HTTP and stdio (eras.py, fixture-server)"
    "$venv/bin/python" "$here/eras.py" "$fixture_server" "${ts_args[@]}" || status=1
else
    echo "interop: no fixture-server beside $binary: eras.py FAILED (build it: cargo build -p ide-mcp-tests --bin fixture-server)" >&2
    status=1
fi

if [[ -x "$fixture_server" ]] && command -v npm >/dev/null; then
    if conformance_dir="$(npm_install conformance interop-conformance)"; then
        echo "interop: the official conformance suite's server scenarios (conformance/)"
        workspace="$(mktemp -d)"
        "$fixture_server" http "$workspace" >"$workspace/.address" &
        server_pid=$!
        for _ in $(seq 100); do [[ -s "$workspace/.address" ]] && break; sleep 0.1; done
        read -r url token <"$workspace/.address" || true
        IDE_MCP_TOKEN="$token" NODE_OPTIONS="--import $here/conformance/inject-auth.mjs" \
            "$conformance_dir/node_modules/.bin/conformance" server --url "$url" \
            --expected-failures "$here/conformance/expected-failures.yml" \
            -o "$conformance_dir/results" >"$conformance_dir/run.log" 2>&1 || {
            echo "interop: the conformance suite FAILED (log: target/interop-conformance/run.log)" >&2
            sed -n '/=== SUMMARY ===/,$p' "$conformance_dir/run.log" >&2
            status=1
        }
        grep -E "^Total|Baseline" "$conformance_dir/run.log" || true
        kill "$server_pid" 2>/dev/null || true
        wait "$server_pid" 2>/dev/null || true
        rm -rf "$workspace"
    else
        echo "interop: the conformance suite could not be installed (package registry?): SKIPPED" >&2
    fi
fi
exit "$status"

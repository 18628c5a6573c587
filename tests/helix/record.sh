#!/usr/bin/env bash
# Records a Helix session through `ide-mcp lsp-proxy`, with clangd and
# pyright, as the fixture that cli/tests/helix_replay.rs replays
# (tests/fixtures/helix/session.jsonl). CI does not run it: Helix is in no
# package registry. README "Development" says when and how to run it.
#
#   bash tests/helix/record.sh [--writes] HX HELIX_RUNTIME [IDE_MCP]
#
# With --writes, the long session instead (tests/fixtures/helix/writes.jsonl,
# which cli/tests/helix_writes.rs replays): `main.c` and `util.c` (from
# tests/fixtures/helix/writes/00-*), ten writes of Claude's as the CLI's
# auto mode makes them (the file NN-NAME of that folder written beside and
# renamed over), each kept, reverted or left, the user typing and saving
# between them; markers `write-N` once the write is shown and marked, and
# one after each of the user's actions.
#
# HX is a built `hx`, HELIX_RUNTIME its checkout's `runtime/`, IDE_MCP the
# `ide-mcp` binary to record with (default: target/debug/ide-mcp). Needs
# tmux, clangd and pyright-langserver. The session runs in a scratch
# directory of its own, with Helix's configuration as the README gives it;
# `ide-mcp lsp-record` sits on both wires of each proxy (the editor's and
# the server's), and this script adds a step marker after each action,
# once its effects have settled. Helix's screen after `space a` is kept in
# tests/fixtures/helix/code-action-menu.txt.
set -euo pipefail

session=selection
if [[ ${1:-} == --writes ]]; then
    session=writes
    shift
fi
[[ $# -ge 2 ]] || { sed -n '2,25p' "$0"; exit 2; }
repo=$(cd "$(dirname "$0")/../.." && pwd)
hx=$(realpath "$1")
runtime=$(realpath "$2")
ide_mcp=$(realpath "${3:-$repo/target/debug/ide-mcp}")
clangd=$(command -v clangd)
pyright=$(command -v pyright-langserver)
fixtures=$repo/tests/fixtures/helix

# Not under a hidden directory: pyright would exclude the workspace.
scratch=$(mktemp -d "${TMPDIR:-/tmp}/helix-record.XXXXXX")
ws=$scratch/ws
log=$scratch/session.jsonl
sock=helix-record-$$
mkdir -p "$ws" "$scratch/bin" "$scratch/config/helix" "$scratch/run" "$scratch/claude"
chmod 700 "$scratch/run"
if [[ $session == writes ]]; then
    cp "$fixtures/writes/00-main.c" "$ws/main.c"
    cp "$fixtures/writes/00-util.c" "$ws/util.c"
else
    printf 'int main(void) {\n  int value = 1;\n  return value;\n}\n' >"$ws/main.c"
    printf 'count: int = 1\n' >"$ws/app.py"
fi
: >"$log"

# The README's Helix configuration, word for word.
cat >"$scratch/config/helix/languages.toml" <<'TOML'
[language-server.clangd]
command = "ide-mcp"
args = ["lsp-proxy", "--", "clangd"]

[language-server.pyright]
command = "ide-mcp"
args = ["lsp-proxy", "--", "pyright-langserver", "--stdio"]

[[language]]
name = "python"
language-servers = ["pyright"]
TOML

# What Helix runs as `ide-mcp`: the editor's wire recorded, then the proxy
# (the stream is named after the server); what the proxy runs as `clangd`
# and `pyright-langserver`: the server's wire recorded, then the server.
cat >"$scratch/bin/ide-mcp" <<SH
#!/bin/sh
stream=
next=
for arg; do
    if [ -n "\$next" ]; then stream=\$(basename "\$arg"); break; fi
    [ "\$arg" = -- ] && next=1
done
exec "$ide_mcp" lsp-record --log "$log" --stream "\$stream" --wire editor -- "$ide_mcp" "\$@"
SH
for server in "$clangd" "$pyright"; do
    name=$(basename "$server")
    printf '#!/bin/sh\nexec "%s" lsp-record --log "%s" --stream %s --wire server -- "%s" "$@"\n' \
        "$ide_mcp" "$log" "$name" "$server" >"$scratch/bin/$name"
done
chmod +x "$scratch/bin/"*

tmux_() { tmux -L "$sock" "$@"; }
keys() { tmux_ send-keys -t rec "$@"; }
text() { tmux_ send-keys -t rec -l "$1"; }
screen() { tmux_ capture-pane -p -t rec; }
step() { printf '{"step":"%s"}\n' "$1" >>"$log"; echo "step $1"; }
fail() { echo "record.sh: $1" >&2; screen >&2 || true; tmux_ kill-server || true; exit 1; }
# Whatever happens, no tmux server nor lingering host of ours is left.
cleanup() {
    tmux_ kill-server 2>/dev/null || true
    for lockfile in "$scratch/claude/ide/"*.lock; do
        [[ -e $lockfile ]] && kill -TERM "$(jq -r .pid "$lockfile")" 2>/dev/null || true
    done
}
trap cleanup EXIT
# Waits until `grep -E PATTERN` matches the log at least N times (default 1).
wait_log() {
    local pattern=$1 times=${2:-1}
    for _ in $(seq 1200); do
        [[ $(grep -cE -- "$pattern" "$log" || true) -ge $times ]] && return
        sleep 0.1
    done
    fail "timed out waiting for $pattern"
}
# Lets the servers finish what the action started (progress, late
# publishes) before the step is marked.
settle() { sleep "${1:-3}"; }
count() { grep -cE -- "$1" "$log" || true; }
# A typist's pause before leaving insert mode: Helix's completion, which
# waits for the typing to stop, asks the server then, every time.
pause() { sleep 1; }

tmux_ new-session -d -s rec -x 200 -y 50 -c "$ws" \
    env PATH="$scratch/bin:$PATH" XDG_CONFIG_HOME="$scratch/config" \
    XDG_CACHE_HOME="$scratch/cache" XDG_DATA_HOME="$scratch/data" \
    XDG_STATE_HOME="$scratch/state" XDG_RUNTIME_DIR="$scratch/run" \
    CLAUDE_CONFIG_DIR="$scratch/claude" HELIX_RUNTIME="$runtime" \
    "$hx" main.c

# Machine paths become placeholders, which the replay substitutes.
pyright_root=$(dirname "$(realpath "$pyright")")
scrub() { sed -e "s|$ws|\${WORKSPACE}|g" -e "s|$pyright_root|\${PYRIGHT}|g" "$1"; }
# Fails if machine paths are left in fixture $1.
check_scrubbed() {
    if grep -nE '(^|["( ]|file://)/(usr|tmp|root|home|work|opt|var|etc|nix|private|Users)\b' "$1"; then
        fail "machine paths are left in $1 (above): add them to scrub"
    fi
}
# `$1` (`:qa`, or `:qa!` when Helix flags buffers modified): Helix ends,
# the proxies and servers with it; the recorders (whose arguments name the
# log) are the last to go. Then the host, which lingers (10 minutes by
# default, as the README says), is ended.
quit() {
    keys "$1" Enter
    for _ in $(seq 300); do
        tmux_ has-session -t rec 2>/dev/null || pgrep -f -- "lsp-record --log $log" >/dev/null || break
        sleep 0.1
    done
    pgrep -f -- "lsp-record --log $log" >/dev/null && fail "the proxies or servers are still running"
    step quit
    for lockfile in "$scratch/claude/ide/"*.lock; do
        [[ -e $lockfile ]] || continue
        echo "after :qa, the IDE lingers: $(basename "$lockfile")"
        kill -TERM "$(jq -r .pid "$lockfile")"
    done
    for _ in $(seq 100); do
        [[ -z $(ls -A "$scratch/claude/ide" 2>/dev/null) ]] && break
        sleep 0.1
    done
    [[ -z $(ls -A "$scratch/claude/ide" 2>/dev/null) ]] || fail "the IDE directory is not empty"
}

if [[ $session == writes ]]; then
    editor_out() { printf '"wire":"editor","from":"proxy".*%s' "$1"; }
    editor_in() { printf '"wire":"editor","from":"editor".*%s' "$1"; }
    # Claude writes file $2 as step $1 has it, as the CLI does (a new file
    # beside, renamed over); once Helix has answered the IDE's edit and
    # the proxy has marked the write, step write-$1.
    write() {
        local edits marks
        edits=$(count "$(editor_in '"applied":true')")
        marks=$(count "$(editor_out 'publishDiagnostics.*claude-written')")
        cp "$fixtures/writes/$1-$2" "$ws/$2.new"
        mv "$ws/$2.new" "$ws/$2"
        wait_log "$(editor_in '"applied":true')" $((edits + 1))
        wait_log "$(editor_out 'publishDiagnostics.*claude-written')" $((marks + 1))
        settle 2
        step "write-$1"
    }
    # At line $1 (1-based) of the file shown, `space a`, then the action
    # titled $2 picked from the menu (its first entry selected: Down moves
    # to the next); once the proxy has published the file's diagnostics
    # again after the command, step $3.
    act() {
        local publishes commands index
        local answers
        answers=$(count "$(editor_out 'Claude: keep all')")
        keys ":$1" Enter
        keys Space a
        wait_log "$(editor_out 'Claude: keep all')" $((answers + 1))
        settle 1
        screen >"$scratch/menu.txt"
        index=$(grep -oE 'Claude: (keep|revert) (this change|all)' "$scratch/menu.txt" | grep -nxF "$2" | cut -d: -f1)
        [[ -n $index ]] || fail "$2 is not in the menu"
        publishes=$(count "$(editor_out publishDiagnostics)")
        commands=$(count "$(editor_in workspace/executeCommand)")
        for _ in $(seq 2 "$index"); do keys Down; done
        keys Enter
        wait_log "$(editor_in workspace/executeCommand)" $((commands + 1))
        wait_log "$(editor_out publishDiagnostics)" $((publishes + 1))
        settle 2
        step "$3"
    }
    # `:w!` of the file shown; step $1 once Helix's didSave passed. (A
    # file Claude wrote is newer than Helix last read or wrote it: Helix
    # refuses a plain `:w` of it, "file modified by an external process".)
    save() {
        local saves
        saves=$(count "$(editor_in textDocument/didSave)")
        keys ':w!' Enter
        wait_log "$(editor_in textDocument/didSave)" $((saves + 1))
        settle 2
        step "$1"
    }
    # Text typed by the user: the keys `$1` (words) to open a line, then
    # `$2`; step $3 once Helix sent the change.
    type_line() {
        local changes
        changes=$(count "$(editor_in textDocument/didChange)")
        # shellcheck disable=SC2086 # one key a word
        keys $1
        text "$2"
        pause
        keys Escape
        wait_log "$(editor_in textDocument/didChange)" $((changes + 1))
        settle 2
        step "$3"
    }

    wait_log "$(editor_out publishDiagnostics.*main\.c)"
    keys ':open util.c' Enter
    wait_log "$(editor_in 'didOpen.*util\.c')"
    keys ':open main.c' Enter
    settle
    step open
    write 01 main.c
    act 4 'Claude: keep all' keep-all-01
    write 02 main.c
    act 8 'Claude: keep this change' keep-02
    # util.c is not shown: Helix takes the edit all the same.
    write 03 util.c
    # A later write's markers replace the earlier ones.
    write 04 util.c
    keys ':open util.c' Enter
    act 6 'Claude: revert this change' revert-04
    save save-04
    keys ':open main.c' Enter
    write 05 main.c
    act 4 'Claude: revert this change' revert-05
    act 8 'Claude: keep this change' keep-05
    save save-05
    write 06 main.c
    act 9 'Claude: keep all' keep-all-06
    keys ':open util.c' Enter
    type_line 'g g O' '// a note of the user' type-util
    keys ':open main.c' Enter
    write 07 main.c
    # Typing in the file dismisses the write's markers.
    type_line 'g e o' '// mine' type-main
    save save-main
    keys ':open util.c' Enter
    save save-util
    write 08 util.c
    act 2 'Claude: keep all' keep-all-08
    keys ':open main.c' Enter
    write 09 main.c
    act 3 'Claude: revert all' revert-all-09
    save save-09
    write 10 main.c
    act 8 'Claude: keep all' keep-all-10
    # The IDE's edits leave Helix's buffers flagged modified (README).
    quit ':qa!'
    scrub "$log" >"$fixtures/writes.jsonl"
    check_scrubbed "$fixtures/writes.jsonl"
    echo "recorded $(wc -l <"$fixtures/writes.jsonl") lines into $fixtures; scratch: $scratch"
    exit 0
fi

# 1. main.c: clangd, through its proxy, which starts the IDE.
wait_log '"stream":"clangd","wire":"editor","from":"proxy".*publishDiagnostics'
settle
step open-c

# 2. app.py: pyright, a second proxy of the same IDE.
keys ':open app.py' Enter
wait_log '"stream":"pyright-langserver","wire":"editor","from":"proxy".*publishDiagnostics.*app\.py'
settle 5
step open-py

# 3. An unsaved error in main.c.
keys ':open main.c' Enter
# (A `;` ending a tmux argument ends a tmux command: `\;` is one.)
text '/value\;'
keys Enter c
text 'missing_name\;'
pause
keys Escape
wait_log '"from":"proxy".*publishDiagnostics.*missing_name'
settle
step edit-c

# 4. An unsaved type error in app.py.
keys ':open app.py' Enter
keys '/1' Enter c
text '"one"'
pause
keys Escape
wait_log '"from":"proxy".*publishDiagnostics.*declared type'
settle
step edit-py

# 5. `:w` of each.
saves=$(count '"wire":"editor","from":"editor".*textDocument/didSave')
keys ':w' Enter
wait_log '"wire":"editor","from":"editor".*textDocument/didSave' $((saves + 1))
settle
step save-py
keys ':open main.c' Enter ':w' Enter
wait_log '"wire":"editor","from":"editor".*textDocument/didSave' $((saves + 2))
settle
step save-c

# 6. `int` on line 2 selected, `space a`: the code action menu.
keys g g j g s e
keys Space a
wait_log '"from":"proxy".*Send selection to Claude Code'
settle 1
screen >"$scratch/menu.txt"
step code-action


# 7. Our action picked: the menu starts with nothing selected, and ours
# is the last entry, which Up selects.
keys Up Enter
wait_log '"wire":"editor","from":"editor".*workspace/executeCommand.*ide-mcp\.sendSelection'
settle 1
step send

# 8. `:qa`.
quit ':qa'

mkdir -p "$fixtures"
scrub "$log" >"$fixtures/session.jsonl"
scrub "$scratch/menu.txt" | sed -e 's/ *$//' >"$fixtures/code-action-menu.txt"
check_scrubbed "$fixtures/session.jsonl"
echo "recorded $(wc -l <"$fixtures/session.jsonl") lines into $fixtures; scratch: $scratch"

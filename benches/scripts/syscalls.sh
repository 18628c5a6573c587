#!/usr/bin/env bash
# Syscalls per request of a server, counted by `strace -c -f` while `loadgen`
# drives it: the repeatable figure beside the noisy rates (BENCHMARKS.md).
#
#   benches/scripts/syscalls.sh SERVER TRANSPORT CONCURRENCY [SERVER ARGS...]
#   benches/scripts/syscalls.sh target/release/floor-server stdio 1
#   benches/scripts/syscalls.sh target/release/bench-server ws 16 --runtime current-thread
#
# Prints one line: the server, transport, C, requests, syscalls per request
# in all, and per request for each syscall that makes at least 0.01 of them.
# Start-up is included; with 20 000 requests it adds well under 0.05.
set -euo pipefail
server="$1" transport="$2" concurrency="$3"
shift 3
bin_dir="$(dirname "$server")"
requests="${REQUESTS:-20000}"
warmup=500
out="$(mktemp)"
trap 'rm -f "$out"' EXIT
sizes=(--editors 1000 --diagnostics 10000)
load=(--tool checkDocumentDirty --args '{"filePath":"/ws/src/file3.rs"}'
      --concurrency "$concurrency" --requests "$requests" --warmup "$warmup")
if [[ "$transport" == stdio ]]; then
    "$bin_dir/loadgen" "${load[@]}" --stdio -- \
        strace -f -c -o "$out" "$server" --stdio "${sizes[@]}" "$@" >/dev/null
else
    token=syscalls-benchmark-token-0123456789abcdef
    port="$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')"
    strace -f -c -o "$out" "$server" --ws "$port" --token "$token" "${sizes[@]}" "$@" &
    traced=$!
    for _ in $(seq 200); do
        (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null && break
        sleep 0.05
    done
    "$bin_dir/loadgen" "${load[@]}" --ws "$port" --token "$token" >/dev/null
    # Stop the traced server (strace's child) so that strace reports.
    kill -TERM "$(pgrep -P "$traced")"
    wait "$traced" || true
fi
total=$((requests + warmup))
awk -v n="$total" -v what="$(basename "$server") $transport C=$concurrency $* requests=$total" '
    $1 ~ /^[0-9.]+$/ && NF >= 5 {
        calls = $4; name = $NF
        if (name == "total") { all = calls; next }
        per[name] = calls / n
    }
    END {
        line = sprintf("%s: %.2f syscalls/request", what, all / n)
        for (s in per) if (per[s] >= 0.01) line = line sprintf(", %s %.2f", s, per[s])
        print line
    }' "$out"

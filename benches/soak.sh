#!/usr/bin/env bash
# Soak of the fixed-rate loop: `softgen run` (by default the snake on the simulated plant,
# hardware in the loop, 1 kHz) for a long time with every core kept busy by other work,
# reporting deadline misses, lateness percentiles and the process's resident memory, sampled
# from outside as it runs. Verdict: the watchdog never trips at the run configuration's
# tolerance and the memory stays flat (the last sample within SLACK kB of the one a tenth into
# the run, or a second after the run printed its header if start-up took longer).
#
#   bash benches/soak.sh                         # one hour, the figures in the README
#   bash benches/soak.sh --duration 20           # the short version CI runs
#   bash benches/soak.sh --realtime -- --rate 500
#
# Options: --duration S (default 3600), --load N busy processes (default: one per core),
# --realtime (SCHED_FIFO and mlockall, as on the robot), --out DIR (default out/soak), and
# after `--` any further `softgen run` options. SOFTGEN names the binary (default
# target/release/softgen, built when missing); SLACK the memory slack in kB (default 512).
set -euo pipefail
cd "$(dirname "$0")/.."

duration=3600
load="$(nproc)"
realtime=()
out=out/soak
extra=()
while [ $# -gt 0 ]; do
    case "$1" in
        --duration) duration="${2:?--duration needs seconds}"; shift 2 ;;
        --load) load="${2:?--load needs a number of processes}"; shift 2 ;;
        --realtime) realtime=(--realtime); shift ;;
        --out) out="${2:?--out needs a folder}"; shift 2 ;;
        --) shift; extra=("$@"); break ;;
        *) echo "soak: unknown option \`$1\` (--duration S, --load N, --realtime, --out DIR, -- RUN OPTIONS)" >&2; exit 2 ;;
    esac
done
case "$duration" in
    '' | *[!0-9]*) echo "soak: --duration must be whole seconds, got \`$duration\`" >&2; exit 2 ;;
esac
case "$load" in
    '' | *[!0-9]*) echo "soak: --load must be a whole number of processes, got \`$load\`" >&2; exit 2 ;;
esac
if [ "$duration" -lt 5 ]; then
    echo "soak: --duration must be at least 5 s, got $duration" >&2
    exit 2
fi
softgen="${SOFTGEN:-target/release/softgen}"
slack="${SLACK:-512}"
if [ ! -x "$softgen" ]; then
    cargo build --release --quiet --bin softgen
fi
mkdir -p "$out"

pids=()
cleanup() {
    for pid in "${pids[@]}"; do
        kill "$pid" 2>/dev/null || true
    done
    wait 2>/dev/null || true
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# The load: busy shells, one per core unless told otherwise, at the loop's own priority.
for _ in $(seq 1 "$load"); do
    bash -c 'while :; do :; done' &
    pids+=("$!")
done

"$softgen" run --duration "$duration" "${realtime[@]}" \
    --record "$out/commands.csv" --trajectory "$out/plant.csv" "${extra[@]}" >"$out/run.txt" 2>&1 &
run=$!
pids+=("$run")

# Resident memory sampled about 60 times over the run (at least once a second).
interval=$(( duration / 60 ))
[ "$interval" -ge 1 ] || interval=1
echo "t_s,resident_kb" >"$out/memory.csv"
started=$SECONDS
# When the run has printed its header (the loop starts right after): on a loaded machine
# start-up can take more than a tenth of the run, and its allocations are not growth.
header_at=""
while kill -0 "$run" 2>/dev/null; do
    resident="$(awk '/^VmRSS:/ { print $2 }' "/proc/$run/status" 2>/dev/null || true)"
    [ -n "$resident" ] && echo "$(( SECONDS - started )),$resident" >>"$out/memory.csv"
    if [ -z "$header_at" ] && grep -q '^controller' "$out/run.txt" 2>/dev/null; then
        header_at=$(( SECONDS - started ))
    fi
    sleep "$interval"
done
# Settled: a tenth into the run, and at least a second after the header.
from=$(( duration / 10 ))
[ -n "$header_at" ] && [ $(( header_at + 1 )) -gt "$from" ] && from=$(( header_at + 1 ))
status=0
wait "$run" || status=$?

echo "soak: $duration s of \`softgen run${realtime[*]:+ ${realtime[*]}}${extra[*]:+ ${extra[*]}}\` with $load busy processes on $(nproc) cores"
grep -E '^(robot|rate|loop|resident|safe state)' "$out/run.txt" || true
# Memory: the settled sample (after the start-up allocations) against the last.
read -r settled last peak samples < <(awk -F, -v from="$from" '
    NR > 1 { n++; if (!s && $1 >= from) s = $2; l = $2; if ($2 > p) p = $2 }
    END { if (!s) s = l; print s + 0, l + 0, p + 0, n + 0 }' "$out/memory.csv")
echo "memory      $samples samples: ${settled} kB at ${from} s, ${last} kB at the end, peak ${peak} kB (resident; $out/memory.csv)"
verdict=0
if [ "$status" -ne 0 ]; then
    echo "soak: FAILED: the run ended with status $status:"
    grep -E '^(fault|error|watchdog)|FAULT|stale' "$out/run.txt" || tail -n 5 "$out/run.txt"
    verdict=1
fi
if [ "$samples" -lt 2 ] || [ $(( last - settled )) -gt "$slack" ]; then
    echo "soak: FAILED: resident memory grew by $(( last - settled )) kB (slack $slack kB)"
    verdict=1
fi
[ "$verdict" -eq 0 ] && echo "soak: passed (watchdog never tripped; memory flat within $slack kB)"
exit "$verdict"

#!/usr/bin/env bash
# softgen's generated derivatives of the dynamics against Pinocchio's analytical ones
# (computeABADerivatives), on the scaling fixtures (planar snakes of 8, 14, 22 and 62
# coordinates with the link data of model-specs/snake_pedal_wave.toml), printed from one run.
#
# Installs Pinocchio's Python wheel (pin, with its C++ headers) and Eigen's (cmeel-eigen) into
# a virtual environment under target/peers/, builds benches/peers/pinocchio_derivatives.cpp
# header-only with -O3 -march=native (so its templates are compiled for this machine, as
# softgen's code is with target-cpu=native, .cargo/config.toml), then times one size at a
# time, Pinocchio's half and softgen's criterion bench (`cargo bench --bench derivatives --
# "snake_links_N \(.*/forward dynamics"`) back to back, so each ratio compares two figures
# taken seconds apart (this machine's speed drifts by half over minutes; with every
# Pinocchio size first and every softgen size a minute later, a ratio near its target landed
# on either side of it from run to run). Prints one table per round and, for more than one,
# each size's derivative ratios with their median.
#
# Usage: bash benches/peers/pinocchio.sh [ROUNDS]   (default 1; needs python3 with venv, g++,
# network for pip)
set -euo pipefail
cd "$(dirname "$0")/../.."
rounds=${1:-1}
if ! [[ "$rounds" =~ ^[1-9][0-9]*$ ]]; then
    echo "$(basename "$0"): ROUNDS must be a whole number of at least 1, got \`$rounds\`" >&2
    exit 2
fi

source benches/peers/pinocchio_env.sh
binary="$root/pinocchio_derivatives"
if [ ! -x "$binary" ] || [ benches/peers/pinocchio_derivatives.cpp -nt "$binary" ] || [ benches/peers/timing.hpp -nt "$binary" ]; then
    echo "building the Pinocchio timing (g++ -O3 -march=native, a few minutes)" >&2
    g++ "${pinocchio_flags[@]}" \
        benches/peers/pinocchio_derivatives.cpp -o "$binary" \
        -L"$prefix/lib" -lpinocchio_default -Wl,-rpath,"$prefix/lib"
fi

declare -A ratios
# bencher lines: "test derivatives snake_links_20 (22 coordinates)/<name> ... bench: 1234 ns/iter (+/- 5)"
nanoseconds() {
    local softgen=$1 name=$2
    echo "$softgen" | grep -F ")/$name" | sed -E 's/.*bench: +([0-9,]+) ns.*/\1/' | tr -d ','
}
for round in $(seq 1 "$rounds"); do
    echo
    if [ "$rounds" -gt 1 ]; then
        printf 'Round %d of %d:\n\n' "$round" "$rounds"
    fi
    # Forward dynamics as Pinocchio's aba computes it, from the state alone; the cached pair
    # (the cache, then forward dynamics: what a simulation step with contact calls) beside it.
    echo "| coordinates | softgen forward dynamics from the state | softgen cache, then forward dynamics | Pinocchio aba | aba / softgen | softgen derivatives (dq, dqd, dtau) | Pinocchio computeABADerivatives | Pinocchio / softgen |"
    echo "| --- | --- | --- | --- | --- | --- | --- | --- |"
    for links in 6 12 20 60; do
        echo "timing $links links: Pinocchio, then softgen" >&2
        read -r _ coordinates forward derivatives <<< "$("$binary" "$links")"
        softgen=$(cargo bench --quiet --bench derivatives -- "snake_links_$links \(.*/forward dynamics" --output-format bencher 2>/dev/null)
        ours_alone=$(nanoseconds "$softgen" "forward dynamics (from the state alone)")
        ours_forward=$(nanoseconds "$softgen" "forward dynamics (cache included)")
        # Criterion shortens long names ("... (cache includ..."): match the start.
        ours=$(nanoseconds "$softgen" "forward dynamics derivatives dq, dqd, dtau")
        if [ -z "$ours_alone" ] || [ -z "$ours_forward" ] || [ -z "$ours" ]; then
            echo "$(basename "$0"): softgen's bench printed no figure for the snake of $links links" >&2
            exit 1
        fi
        ratio=$(awk -v od="$ours" -v pd="$derivatives" 'BEGIN { printf "%.2f", pd * 1e9 / od }')
        ratios[$coordinates]+=" $ratio"
        awk -v n="$coordinates" -v oa="$ours_alone" -v of="$ours_forward" -v od="$ours" -v pf="$forward" -v pd="$derivatives" -v ratio="$ratio" 'BEGIN {
            printf "| %d | %.2f us | %.2f us | %.2f us | %.2f | %.2f us | %.2f us | %s |\n", n, oa / 1000, of / 1000, pf * 1e6, pf * 1e9 / oa, od / 1000, pd * 1e6, ratio
        }'
    done
done

# Over several rounds, each size's derivative ratios side by side and their median.
if [ "$rounds" -gt 1 ]; then
    echo
    echo "Pinocchio / softgen for the derivatives, each round and the median:"
    echo
    header="| coordinates |"
    rule="| --- |"
    for round in $(seq 1 "$rounds"); do
        header+=" round $round |"
        rule+=" --- |"
    done
    echo "$header median |"
    echo "$rule --- |"
    for coordinates in $(printf '%s\n' "${!ratios[@]}" | sort -n); do
        # shellcheck disable=SC2086
        printf '%s\n' ${ratios[$coordinates]} | sort -g | awk -v n="$coordinates" -v row="${ratios[$coordinates]}" '
            { value[NR] = $1 }
            END {
                median = NR % 2 ? value[(NR + 1) / 2] : (value[NR / 2] + value[NR / 2 + 1]) / 2
                gsub(/^ /, "", row); gsub(/ /, " | ", row)
                printf "| %d | %s | %.2f |\n", n, row, median
            }'
    done
fi

#!/usr/bin/env bash
# softgen's generated derivatives of the dynamics against Pinocchio's analytical ones
# (computeABADerivatives), on the scaling fixtures (planar snakes of 8, 14, 22 and 62
# coordinates with the link data of model-specs/snake_pedal_wave.toml), printed from one run.
#
# Installs Pinocchio's Python wheel (pin, with its C++ headers) and Eigen's (cmeel-eigen) into
# a virtual environment under target/peers/, builds benches/peers/pinocchio_derivatives.cpp
# header-only with -O3 -march=native (so its templates are compiled for this machine, as
# softgen's code is with target-cpu=native, .cargo/config.toml), then runs it and softgen's criterion bench
# (`cargo bench --bench derivatives -- snake_links`) one after the other and prints one table.
#
# Usage: bash benches/peers/pinocchio.sh        (needs python3 with venv, g++, network for pip)
set -euo pipefail
cd "$(dirname "$0")/../.."
source benches/peers/pinocchio_env.sh
binary="$root/pinocchio_derivatives"
if [ ! -x "$binary" ] || [ benches/peers/pinocchio_derivatives.cpp -nt "$binary" ] || [ benches/peers/timing.hpp -nt "$binary" ]; then
    echo "building the Pinocchio timing (g++ -O3 -march=native, a few minutes)" >&2
    g++ "${pinocchio_flags[@]}" \
        benches/peers/pinocchio_derivatives.cpp -o "$binary" \
        -L"$prefix/lib" -lpinocchio_default -Wl,-rpath,"$prefix/lib"
fi

echo "timing Pinocchio" >&2
pinocchio=$("$binary")
echo "timing softgen (cargo bench --bench derivatives -- snake_links)" >&2
softgen=$(cargo bench --quiet --bench derivatives -- snake_links --output-format bencher 2>/dev/null)

# bencher lines: "test derivatives snake_links_20 (22 coordinates)/<name> ... bench: 1234 ns/iter (+/- 5)"
nanoseconds() {
    local coordinates=$1 name=$2
    echo "$softgen" | grep -F "($coordinates coordinates)/$name" | sed -E 's/.*bench: +([0-9,]+) ns.*/\1/' | tr -d ','
}
echo
# Forward dynamics as Pinocchio's aba computes it, from the state alone; the cached pair (the
# cache, then forward dynamics: what a simulation step with contact calls) beside it.
echo "| coordinates | softgen forward dynamics from the state | softgen cache, then forward dynamics | Pinocchio aba | aba / softgen | softgen derivatives (dq, dqd, dtau) | Pinocchio computeABADerivatives | Pinocchio / softgen |"
echo "| --- | --- | --- | --- | --- | --- | --- | --- |"
while read -r _ coordinates forward derivatives; do
    ours_alone=$(nanoseconds "$coordinates" "forward dynamics (from the state alone)")
    ours_forward=$(nanoseconds "$coordinates" "forward dynamics (cache included)")
    # Criterion shortens long names ("... (cache includ..."): match the start.
    ours=$(nanoseconds "$coordinates" "forward dynamics derivatives dq, dqd, dtau")
    awk -v n="$coordinates" -v oa="$ours_alone" -v of="$ours_forward" -v od="$ours" -v pf="$forward" -v pd="$derivatives" 'BEGIN {
        printf "| %d | %.2f us | %.2f us | %.2f us | %.2f | %.2f us | %.2f us | %.2f |\n", n, oa / 1000, of / 1000, pf * 1e6, pf * 1e9 / oa, od / 1000, pd * 1e6, pd * 1e9 / od
    }'
done <<< "$pinocchio"

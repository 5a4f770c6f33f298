#!/usr/bin/env bash
# softgen's generated forward dynamics against Pinocchio's aba on the robots imported from
# URDF (every model-specs/*.toml with an [import] and no bodies of its own), printed from one
# run.
#
# Installs Pinocchio's Python wheel (pin, with its C++ headers) into the virtual environment
# benches/peers/pinocchio.sh uses, has Pinocchio's parser read each robot's URDF (the spec's
# `exclude`d links removed) and writes out the parsed model's joints, builds
# benches/peers/pinocchio_urdf.cpp with -O3 -march=native (softgen builds with
# target-cpu=native, .cargo/config.toml), then runs it and softgen's criterion bench
# (`cargo bench --bench derivatives`, each robot's "forward dynamics (from the state alone)",
# which like aba computes everything from q, qd and tau, and "forward dynamics (cache
# included)", the cache and forward dynamics as a simulation's right-hand side calls them)
# one after the other and prints one table.
#
# Usage: bash benches/peers/pinocchio_urdf.sh    (needs python3 with venv, g++, network for pip)
set -euo pipefail
cd "$(dirname "$0")/../.."
source benches/peers/pinocchio_env.sh
mkdir -p "$root/urdf"

# "NAME MODEL" for each imported robot: its URDF read by Pinocchio's parser with the base
# Pinocchio's authors recommend, its joints written to $root/urdf/NAME.txt for the timing to
# rebuild (format: benches/peers/pinocchio_urdf.cpp).
robots=$("$python" - "$root/urdf" <<'PYTHON'
import pathlib, sys

import pinocchio

sys.path.insert(0, "python/tests")
from urdf_for_pinocchio import imported_robots, urdf_for_pinocchio

out = pathlib.Path(sys.argv[1])
for name in imported_robots("model-specs"):
    xml, _, base = urdf_for_pinocchio(f"model-specs/{name}.toml")
    if base == "fixed":
        model = pinocchio.buildModelFromXML(xml)
    else:
        model = pinocchio.buildModelFromXML(xml, pinocchio.JointModelFreeFlyer())
    path = out / f"{name}.txt"
    with open(path, "w") as handle:
        for j in range(1, model.njoints):
            joint = model.joints[j]
            axis = getattr(joint, "axis", [0.0, 0.0, 0.0])
            placement, inertia = model.jointPlacements[j], model.inertias[j]
            fields = [model.parents[j], joint.shortname(), *axis, *placement.rotation.flatten(), *placement.translation,
                      inertia.mass, *inertia.lever, *inertia.inertia[0], *inertia.inertia[1, 1:], inertia.inertia[2, 2]]
            # Shortest round-trip decimals, so the C++ side reads the same doubles.
            handle.write(" ".join(x if isinstance(x, str) else repr(float(x)) if not isinstance(x, int) else str(x)
                                  for x in fields) + "\n")
    print(name, path)
PYTHON
)
if [ -z "$robots" ]; then
    echo "pinocchio_urdf.sh: no imported robots in model-specs/" >&2
    exit 1
fi

binary="$root/pinocchio_urdf"
if [ ! -x "$binary" ] || [ benches/peers/pinocchio_urdf.cpp -nt "$binary" ] || [ benches/peers/timing.hpp -nt "$binary" ]; then
    echo "building the Pinocchio timing (g++ -O3 -march=native, a few minutes)" >&2
    g++ "${pinocchio_flags[@]}" \
        benches/peers/pinocchio_urdf.cpp -o "$binary" \
        -L"$prefix/lib" -lpinocchio_default \
        -Wl,-rpath,"$prefix/lib"
fi

echo "timing Pinocchio" >&2
# shellcheck disable=SC2086
pinocchio=$("$binary" $robots)
names=$(echo "$robots" | cut -d' ' -f1 | paste -sd'|')
echo "timing softgen (cargo bench --bench derivatives -- '($names) .*forward dynamics \((from|cache)')" >&2
softgen=$(cargo bench --quiet --bench derivatives -- "derivatives ($names) \(.*forward dynamics \((from|cache)" --output-format bencher 2>/dev/null)

# bencher lines: "test derivatives NAME (N coordinates)/forward dynamics (from the state alone) ... bench: 1234 ns/iter (+/- 5)"
figure() {
    echo "$softgen" | grep -F "derivatives $1 (" | grep -F "/forward dynamics ($2" \
        | sed -E 's/.*bench: +([0-9,]+) ns.*/\1/' | tr -d ','
}
echo
echo "| robot | coordinates | softgen forward dynamics from the state | softgen cache, then forward dynamics | Pinocchio aba | Pinocchio / softgen (from the state) |"
echo "| --- | --- | --- | --- | --- | --- |"
while read -r _ name coordinates forward; do
    alone=$(figure "$name" "from the state")
    cached=$(figure "$name" "cache")
    awk -v n="$name" -v c="$coordinates" -v a="$alone" -v k="$cached" -v p="$forward" 'BEGIN {
        printf "| %s | %d | %.2f us | %.2f us | %.2f us | %.2f |\n", n, c, a / 1000, k / 1000, p * 1e6, p * 1e9 / a
    }'
done <<< "$pinocchio"

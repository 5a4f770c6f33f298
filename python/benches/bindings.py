"""Measures what the README reports for the bindings (not a test: timings are noisy):

1. the cost a call from Python adds to the Rust kernel, for the 6-link snake's mass matrix
   (snake_pedal_wave, 8 coordinates): the call timed with timeit against the same kernel
   timed in a Rust loop, in one run, alternately;
2. sweep throughput on the WPI snake's 500 s runs (sweeps/wpi_500s.toml): the CLI on every
   local core, and the same sweep as Ray tasks on a local cluster of that many CPUs.

    python python/benches/bindings.py [--cli target/release/softgen] [--skip-sweeps]
"""

import argparse
import os
import subprocess
import tempfile
import time
import timeit
from pathlib import Path

import numpy as np

import softgen

REPOSITORY = Path(__file__).resolve().parents[2]


def overhead(rounds: int = 5) -> None:
    robot = softgen.Robot("snake_pedal_wave")
    q = robot.initial_position + 0.1
    calls = 200_000
    for _ in range(rounds):
        call = min(timeit.repeat(lambda: robot.mass_matrix(q), number=calls, repeat=3)) / calls
        kernel = robot.time_mass_matrix(q, 1_000_000)
        print(f"mass_matrix from Python {call * 1e9:7.0f} ns, kernel in Rust {kernel * 1e9:5.0f} ns, added {(call - kernel) * 1e9:5.0f} ns")


def sweeps(cli: str) -> None:
    file = REPOSITORY / "sweeps" / "wpi_500s.toml"
    cores = os.cpu_count() or 1
    with tempfile.TemporaryDirectory() as folder:
        output = Path(folder) / "cli.parquet"
        start = time.perf_counter()
        subprocess.run([cli, "sweep", str(file), "--output", str(output)], check=True, capture_output=True)
        wall = time.perf_counter() - start
        runs = len(softgen.read_table(output.read_bytes()))
        print(f"CLI: {runs} runs of 500 s in {wall:.1f} s on {cores} cores: {runs / wall / cores:.3f} runs/s per core")
        import ray
        import softgen.ray as softgen_ray

        ray.init(num_cpus=cores, include_dashboard=False, log_to_driver=False)
        try:
            start = time.perf_counter()
            table = softgen_ray.sweep_parquet(file)
            wall = time.perf_counter() - start
        finally:
            ray.shutdown()
        same = table == output.read_bytes()
        print(f"Ray ({cores} CPUs, local): {runs} runs in {wall:.1f} s: {runs / wall / cores:.3f} runs/s per core; table equal to the CLI's: {same}")


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--cli", default=str(REPOSITORY / "target" / "release" / "softgen"))
    parser.add_argument("--skip-sweeps", action="store_true")
    args = parser.parse_args()
    overhead()
    if not args.skip_sweeps:
        sweeps(args.cli)

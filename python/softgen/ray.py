"""Sweeps on a Ray cluster: each shard of the sweep is one Ray task running the Rust sweep
on one core, and the shards' tables are merged into the table one machine would give, bit
for bit.

Start a cluster (one head, any number of workers), then run from any machine of it::

    ray start --head --port=6379                  # on the head
    ray start --address=HEAD_IP:6379              # on each worker
    python -m softgen.ray sweeps/wpi_speed_map.toml --address auto --output results.parquet

Every machine needs the same ``softgen`` installed (``pip install ./python``).
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path
from typing import Optional, Union

import pandas as pd

from . import _softgen, _sweep_source, read_table


def _run_shard(text: str, origin: str, index: int, count: int) -> bytes:
    from softgen import _softgen as native

    return native.run_sweep(text, origin, (index, count), 1)


def sweep_parquet(
    sweep: Union[str, os.PathLike],
    shards: Optional[int] = None,
    address: Optional[str] = None,
) -> bytes:
    """Runs a sweep (a path or TOML text) as ``shards`` Ray tasks (default: one per CPU of
    the cluster) and returns the merged table as Parquet bytes. Connects to ``address``
    (``"auto"`` for a running cluster) unless Ray is already initialised; with neither, Ray
    starts a local cluster."""
    import ray

    text, origin = _sweep_source(sweep)
    _, runs = _softgen.sweep_info(text, origin)
    if not ray.is_initialized():
        ray.init(address=address, include_dashboard=False, log_to_driver=False)
    count = shards or int(ray.cluster_resources().get("CPU", 1))
    count = max(1, min(count, runs))
    task = ray.remote(num_cpus=1, max_retries=2)(_run_shard)
    parts = ray.get([task.remote(text, origin, k, count) for k in range(count)])
    return _softgen.merge_tables(parts)


def sweep(
    sweep: Union[str, os.PathLike],
    shards: Optional[int] = None,
    address: Optional[str] = None,
) -> pd.DataFrame:
    """:func:`sweep_parquet` as a data frame."""
    return read_table(sweep_parquet(sweep, shards, address)).to_pandas()


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m softgen.ray", description="Run a softgen sweep on a Ray cluster.")
    parser.add_argument("file", help="the sweep file (TOML)")
    parser.add_argument("--address", default=None, help="the cluster (auto: the running one; default: start a local one)")
    parser.add_argument("--shards", type=int, default=None, help="Ray tasks (default: one per CPU of the cluster)")
    parser.add_argument("--output", required=True, help="the merged results table (.parquet or .csv)")
    args = parser.parse_args(argv)
    try:
        table = sweep_parquet(args.file, args.shards, args.address)
    except _softgen.SoftgenError as e:
        print(f"error: {e}", file=sys.stderr)
        return 1
    output = Path(args.output)
    output.parent.mkdir(parents=True, exist_ok=True)
    if output.suffix.lower() == ".csv":
        read_table(table).to_pandas().to_csv(output, index=False)
    else:
        output.write_bytes(table)
    print(f"{output}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

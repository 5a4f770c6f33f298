#!/usr/bin/env bash
# Joins the shards written by sweep_array.sh into one table (see there for how to submit).
#SBATCH --job-name=softgen-merge
#SBATCH --cpus-per-task=1
#SBATCH --time=00:10:00
set -euo pipefail
file="${1:?usage: sbatch --dependency=afterok:JOB merge.sh SWEEP_FILE [OUTPUT]}"
softgen="${SOFTGEN:-target/release/softgen}"
results="${RESULTS:-out/sweeps}"
name="$(basename "$file" .toml)"
exec "$softgen" sweep merge --output "${2:-$results/$name.parquet}" "$results/$name".shard-*-of-*.parquet

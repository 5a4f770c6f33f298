#!/usr/bin/env bash
# A softgen sweep as a Slurm array job: task K of N runs shard K/N, and a merge job that
# waits for the whole array joins the shards into the table one machine would give.
#
#   sbatch --array=0-15 sweeps/slurm/sweep_array.sh sweeps/wpi_speed_map.toml
#   sbatch --dependency=afterok:<array job id> sweeps/slurm/merge.sh sweeps/wpi_speed_map.toml
#
# Every node needs the `softgen` binary (cargo build --release, or set SOFTGEN) and a shared
# folder for the shards (RESULTS, default out/sweeps). A task that is killed and requeued
# resumes its shard from the journal next to its table.
#SBATCH --job-name=softgen-sweep
#SBATCH --cpus-per-task=4
#SBATCH --time=02:00:00
#SBATCH --output=slurm-%A_%a.out
#SBATCH --requeue
set -euo pipefail
file="${1:?usage: sbatch --array=0-(N-1) sweep_array.sh SWEEP_FILE}"
softgen="${SOFTGEN:-target/release/softgen}"
results="${RESULTS:-out/sweeps}"
index="${SLURM_ARRAY_TASK_ID:?run as an array job (sbatch --array=0-N)}"
count="${SLURM_ARRAY_TASK_COUNT:?run as an array job (sbatch --array=0-N)}"
name="$(basename "$file" .toml)"
exec "$softgen" sweep "$file" \
    --shard "$index/$count" \
    --workers "${SLURM_CPUS_PER_TASK:-1}" \
    --output "$results/$name.shard-$index-of-$count.parquet"

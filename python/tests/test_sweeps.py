"""Sweeps from Python equal the command line's tables bit for bit; through a local
two-worker Ray cluster too."""

import subprocess
from pathlib import Path

import pytest

import softgen

# The example sweep: the pedal wave over amplitude x frequency, 3 x 3 runs of 4 s.
GRID = (Path(__file__).resolve().parents[2] / "sweeps" / "pedal_wave_gait.toml").read_text()


@pytest.fixture(scope="module")
def cli_table(cli, tmp_path_factory):
    folder = tmp_path_factory.mktemp("sweep")
    path = folder / "grid.toml"
    path.write_text(GRID)
    output = folder / "grid.parquet"
    subprocess.run([cli, "sweep", str(path), "--output", str(output)], check=True, capture_output=True)
    return path, output.read_bytes()


def test_python_sweep_equals_the_cli(cli_table):
    path, reference = cli_table
    assert softgen.sweep_text(path) == reference
    # Shards run from Python and merged there give the same bytes.
    shards = [softgen.sweep_text(path, shard=(k, 3), workers=1) for k in range(3)]
    assert softgen._softgen.merge_tables(shards) == reference
    frame = softgen.sweep(path)
    assert list(frame.columns) == ["run", "amplitude", "temporal_frequency", "mean_velocity_x", "displacement_x", "max_depth", "status", "error"]
    assert len(frame) == 9 and (frame["status"] == "ok").all()
    table = softgen.read_table(reference)
    assert b"softgen.sweep" in table.schema.metadata


def test_failed_runs_are_rows():
    frame = softgen.sweep('robot = "double_pendulum"\n[base]\nduration = 0.1\n[grid]\ndt = [0.002, 0.0]\n')
    assert list(frame["status"]) == ["ok", "failed"]
    assert "control period" in frame["error"][1]


def test_ray_two_workers_equal_the_cli(cli_table):
    ray = pytest.importorskip("ray")
    import softgen.ray as softgen_ray

    path, reference = cli_table
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
    try:
        assert ray.cluster_resources().get("CPU") == 2
        merged = softgen_ray.sweep_parquet(path, shards=3)
        assert merged == reference
        frame = softgen_ray.sweep(path)
        assert len(frame) == 9
    finally:
        ray.shutdown()


def test_the_slurm_scripts_shard_and_merge_to_the_same_table(cli, cli_table, repository, tmp_path):
    path, reference = cli_table
    environment = {"SOFTGEN": cli, "RESULTS": str(tmp_path), "PATH": "/usr/bin:/bin"}
    for index in range(3):
        task = dict(environment, SLURM_ARRAY_TASK_ID=str(index), SLURM_ARRAY_TASK_COUNT="3", SLURM_CPUS_PER_TASK="1")
        subprocess.run(["bash", str(repository / "sweeps/slurm/sweep_array.sh"), str(path)], env=task, check=True, capture_output=True)
    subprocess.run(["bash", str(repository / "sweeps/slurm/merge.sh"), str(path)], env=environment, check=True, capture_output=True)
    assert (tmp_path / "grid.parquet").read_bytes() == reference

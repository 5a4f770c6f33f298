"""Sweeps from Python equal the command line's tables bit for bit; through a local
two-worker Ray cluster too, also when a worker is killed mid-task or a Slurm task fails and
is requeued."""

import os
import signal
import subprocess
import threading
import time
from pathlib import Path

import pytest

import softgen

# The example sweep: the pedal wave over amplitude x frequency, 3 x 3 runs of 4 s.
GRID = (Path(__file__).resolve().parents[2] / "sweeps" / "pedal_wave_gait.toml").read_text()


def _cli_sweep(cli, folder, text):
    path = folder / "grid.toml"
    path.write_text(text)
    output = folder / "grid.parquet"
    subprocess.run([cli, "sweep", str(path), "--output", str(output)], check=True, capture_output=True)
    return path, output.read_bytes()


@pytest.fixture(scope="module")
def cli_table(cli, tmp_path_factory):
    return _cli_sweep(cli, tmp_path_factory.mktemp("sweep"), GRID)


@pytest.fixture(scope="module")
def long_table(cli, tmp_path_factory):
    """The example sweep with runs of 40 s (about 0.1 s of work each), long enough for a
    fault to land while a shard runs."""
    assert "duration = 4.0" in GRID
    return _cli_sweep(cli, tmp_path_factory.mktemp("long_sweep"), GRID.replace("duration = 4.0", "duration = 40.0"))


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


def _kill_a_worker_running(title: bytes, within: float) -> int:
    """SIGKILLs the first process whose title (Ray renames a worker `ray::<task>` while it
    runs one) is `title`, within `within` seconds; returns its pid, or 0 if none ran."""
    end = time.monotonic() + within
    while time.monotonic() < end:
        for entry in os.listdir("/proc"):
            if not entry.isdigit():
                continue
            try:
                with open(f"/proc/{entry}/cmdline", "rb") as f:
                    command = f.read()
            except OSError:
                continue
            if command.startswith(title):
                try:
                    os.kill(int(entry), signal.SIGKILL)
                except ProcessLookupError:
                    continue
                return int(entry)
        time.sleep(0.002)
    return 0


def test_a_ray_worker_killed_mid_task_is_retried_and_the_table_is_unchanged(long_table):
    ray = pytest.importorskip("ray")
    import softgen.ray as softgen_ray

    path, reference = long_table
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
    try:
        result = {}

        def sweep():
            try:
                result["table"] = softgen_ray.sweep_parquet(path, shards=2)
            except Exception as e:  # reported below, with the kill
                result["error"] = e

        driver = threading.Thread(target=sweep)
        driver.start()
        # A shard runs for about half a second: its worker is killed while the task runs (the
        # process dies as on a lost node, with no chance to clean up).
        killed = _kill_a_worker_running(b"ray::_run_shard", within=120)
        driver.join(timeout=600)
        assert killed, "no worker was seen running a shard"
        assert not driver.is_alive(), "the sweep did not finish after the kill"
        assert "error" not in result, f"worker {killed} killed: {result.get('error')!r}"
        assert result["table"] == reference
    finally:
        ray.shutdown()


def test_a_slurm_task_that_fails_once_and_is_requeued_gives_the_same_table(cli, long_table, repository, tmp_path):
    """Slurm requeues a task by running its batch script again with the same array index
    (SLURM_RESTART_COUNT counts the restarts): the first attempt of task 1 is killed midway,
    as a node failure or preemption does; the rerun resumes its shard from the journal."""
    path, reference = long_table
    environment = {"SOFTGEN": cli, "RESULTS": str(tmp_path), "PATH": "/usr/bin:/bin"}

    def task(index, **extra):
        return dict(environment, SLURM_ARRAY_TASK_ID=str(index), SLURM_ARRAY_TASK_COUNT="2", SLURM_CPUS_PER_TASK="1", **extra)

    script = str(repository / "sweeps/slurm/sweep_array.sh")
    subprocess.run(["bash", script, str(path)], env=task(0), check=True, capture_output=True)
    journal = tmp_path / "grid.shard-1-of-2.parquet.journal"
    first = subprocess.Popen(["bash", script, str(path)], env=task(1), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    # Killed once a run is in the journal, before the shard ends.
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline and first.poll() is None:
        if journal.exists() and journal.read_bytes().count(b"\n") >= 2:
            break
        time.sleep(0.005)
    assert first.poll() is None, "the first attempt ended before it could be killed"
    first.send_signal(signal.SIGKILL)
    first.wait()
    assert not (tmp_path / "grid.shard-1-of-2.parquet").exists()
    requeued = subprocess.run(["bash", script, str(path)], env=task(1, SLURM_RESTART_COUNT="1"), check=True, capture_output=True, text=True)
    assert "from the journal" in requeued.stdout + requeued.stderr
    subprocess.run(["bash", str(repository / "sweeps/slurm/merge.sh"), str(path)], env=environment, check=True, capture_output=True)
    assert (tmp_path / "grid.parquet").read_bytes() == reference


def test_the_slurm_scripts_shard_and_merge_to_the_same_table(cli, cli_table, repository, tmp_path):
    path, reference = cli_table
    environment = {"SOFTGEN": cli, "RESULTS": str(tmp_path), "PATH": "/usr/bin:/bin"}
    for index in range(3):
        task = dict(environment, SLURM_ARRAY_TASK_ID=str(index), SLURM_ARRAY_TASK_COUNT="3", SLURM_CPUS_PER_TASK="1")
        subprocess.run(["bash", str(repository / "sweeps/slurm/sweep_array.sh"), str(path)], env=task, check=True, capture_output=True)
    subprocess.run(["bash", str(repository / "sweeps/slurm/merge.sh"), str(path)], env=environment, check=True, capture_output=True)
    assert (tmp_path / "grid.parquet").read_bytes() == reference

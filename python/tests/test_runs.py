"""Simulations and experiments from Python: the same numbers as the command line."""

import subprocess

import numpy as np
import pandas as pd

import softgen


def test_simulate_matches_the_cli_csv(cli, tmp_path):
    frame = softgen.simulate("snake_pedal_wave", duration=0.5, every=5)
    subprocess.run([cli, "simulate", "--duration", "0.5", "--output", str(tmp_path), "--no-plot"], check=True, capture_output=True)
    csv = pd.read_csv(tmp_path / "snake_pedal_wave.csv")
    assert list(frame.columns) == list(csv.columns)
    assert len(frame) == len(csv)
    # The CSV holds positions to 1e-9 and forces to 1e-6.
    assert np.max(np.abs(frame["com_x"].to_numpy() - csv["com_x"].to_numpy())) <= 5e-10
    forces = [c for c in csv.columns if c.endswith("_fz")]
    assert np.max(np.abs(frame[forces].to_numpy() - csv[forces].to_numpy())) <= 5e-7
    summary = frame.attrs["summary"]
    assert summary["robot"] == "snake_pedal_wave" and summary["error"] is None
    assert summary["simulated"] == 0.5


def test_simulate_changes_parameters_and_settings():
    light = softgen.simulate("double_pendulum", duration=0.2)
    heavy = softgen.simulate("double_pendulum", duration=0.2, params={"lower_mass": 3.0}, integrator="dopri5")
    assert len(light) > 10
    assert not np.allclose(light["com_z"].to_numpy()[-1], heavy["com_z"].to_numpy()[-1])


def test_an_experiment_returns_its_verdict_and_tables(tmp_path):
    names = [name for name, _ in softgen.experiments()]
    assert "002-kinematics" in names and "001-speed-map" in names
    result = softgen.run_experiment("002-kinematics", tmp_path)
    assert result.reproduced, result.verdict
    assert result.lines
    assert result.tables, "the experiment's CSV files as data frames"
    assert all(isinstance(t, pd.DataFrame) and len(t) > 0 for t in result.tables.values())


def test_an_experiment_writes_a_page_beside_each_trajectory_with_view(tmp_path):
    result = softgen.run_experiment("000-drop", tmp_path, view=True)
    assert result.qualitative and result.verdict_class == "reproduced (qualitative)", result.verdict
    page = tmp_path / "000-drop" / "soft_snake_drop_rolling.view.html"
    assert page.is_file(), result.lines
    assert any(line.startswith("view: soft_snake_drop_rolling.view.html") for line in result.lines)
    assert len(_page_poses(page)) > 0


def _page_poses(path):
    import base64
    import json
    import re

    text = path.read_text()
    data = re.search(r'<script id="run-data" type="application/json">(.*?)</script>', text, re.S).group(1)
    return np.frombuffer(base64.b64decode(json.loads(data)["poses"]), dtype="<f4")


def test_view_writes_the_page_the_cli_writes(cli, tmp_path):
    frame = softgen.simulate("snake_pedal_wave", duration=1.0, every=5)
    assert softgen.view(frame, tmp_path / "from_python.html") == 61
    subprocess.run([cli, "simulate", "--duration", "1", "--view", "--output", str(tmp_path), "--no-plot"], check=True, capture_output=True)
    # The same frames (the CLI's CSV holds positions to 1e-9 m; the page float32).
    ours, theirs = _page_poses(tmp_path / "from_python.html"), _page_poses(tmp_path / "snake_pedal_wave.view.html")
    assert ours.shape == theirs.shape and np.max(np.abs(ours - theirs)) < 1e-5
    csv = tmp_path / "snake_pedal_wave.csv"
    assert softgen.view(csv, tmp_path / "from_csv.html", robot="snake_pedal_wave", terrain="stair") == 61
    assert '"kind":"stair"' in (tmp_path / "from_csv.html").read_text()


def test_view_refuses_what_it_cannot_draw(tmp_path):
    import pytest

    frame = softgen.simulate("double_pendulum", duration=0.1)
    csv = tmp_path / "run.csv"
    frame.to_csv(csv, index=False)
    with pytest.raises(softgen.SoftgenError, match="name the run's robot"):
        softgen.view(csv, tmp_path / "page.html")
    with pytest.raises(softgen.SoftgenError, match="no column `base_x`"):
        softgen.view(csv, tmp_path / "page.html", robot="snake_pedal_wave")
    with pytest.raises(softgen.SoftgenError, match="No such file"):
        softgen.view(tmp_path / "missing.csv", tmp_path / "page.html", robot="double_pendulum")
    assert not (tmp_path / "page.html").exists()

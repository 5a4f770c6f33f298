"""softgen from Python: the generated robots on numpy arrays, simulations and experiments as
data frames, and sweeps on one machine or, through :mod:`softgen.ray`, a Ray cluster.

>>> import softgen
>>> snake = softgen.Robot("snake_pedal_wave")
>>> snake.mass_matrix(snake.initial_position).shape
(8, 8)
"""

from __future__ import annotations

import io
import os
import warnings
from pathlib import Path
from typing import Any, Dict, List, Optional, Tuple, Union

import numpy as np
import pandas as pd

from . import _softgen
from ._softgen import Robot, SoftgenError, __version__, experiments, robots

__all__ = [
    "Robot",
    "SoftgenError",
    "ExperimentResult",
    "experiments",
    "read_table",
    "robots",
    "run_experiment",
    "simulate",
    "sweep",
    "sweep_text",
    "view",
]


def simulate(robot: str = "snake_pedal_wave", every: int = 1, **settings: Any) -> pd.DataFrame:
    """Runs ``robot`` as ``softgen simulate`` does and returns its samples, one row each:
    ``t``, the coordinates, ``com_x/y/z``, ``active_contacts``, ``max_depth`` and every
    contact point's force. ``settings`` are the sweep file's keys (``duration``, ``dt``,
    ``integrator``, ``terrain``, ``amplitude``, ..., ``params={"name": value}``);
    ``every`` keeps every k-th sample. The run's summary is in ``frame.attrs["summary"]``.
    A run the integrator stopped early returns what it did, with a warning.
    """
    columns, data, summary = _softgen.simulate(robot, settings, every)
    frame = pd.DataFrame(data, columns=columns)
    frame.attrs["summary"] = summary
    frame.attrs["settings"] = dict(settings)
    if summary["error"]:
        warnings.warn(f"{robot}: the run stopped at t = {summary['simulated']:.6f} s: {summary['error']}", RuntimeWarning, stacklevel=2)
    return frame


def view(
    run: Union[pd.DataFrame, str, os.PathLike],
    path: Union[str, os.PathLike],
    robot: Optional[str] = None,
    title: Optional[str] = None,
    **settings: Any,
) -> int:
    """Writes ``path``, a run as a 3D animation page that opens from disk in any browser, as
    ``softgen view`` does, and returns its number of frames. ``run`` is a data frame of
    :func:`simulate` (its robot, terrain and parameters come with it) or the path of a run's
    CSV (then name its ``robot``). ``settings`` override the run's: ``terrain``,
    ``stair_position``, ``params={"name": value}``, ... (the keys of :func:`simulate`)."""
    if isinstance(run, pd.DataFrame):
        summary = run.attrs.get("summary", {})
        robot = robot or summary.get("robot")
        if robot is None:
            raise SoftgenError("softgen.view: this data frame does not say its robot: pass robot=")
        settings = {**run.attrs.get("settings", {}), **settings}
        text, origin = run.to_csv(index=False), f"data frame of {robot}"
    else:
        if robot is None:
            raise SoftgenError(f"softgen.view: {os.fspath(run)}: name the run's robot with robot=")
        try:
            text = Path(run).read_text()
        except OSError as e:
            raise SoftgenError(f"softgen.view: {os.fspath(run)}: {e.strerror}") from None
        origin = os.fspath(run)
    return _softgen.view(text, origin, robot, os.fspath(path), settings, title)


class ExperimentResult:
    """What an experiment printed, its verdict, and the CSV tables it wrote, as data frames
    by file stem (``result.tables["speed_map"]``)."""

    def __init__(self, name: str, lines: List[str], verdict: str, folder: Path):
        self.name = name
        self.lines = lines
        self.verdict = verdict
        self.folder = folder
        self.tables: Dict[str, pd.DataFrame] = {
            path.stem: pd.read_csv(path) for path in sorted(folder.glob("*.csv"))
        }

    @property
    def verdict_class(self) -> str:
        """The verdict's class: ``reproduced``, ``reproduced (qualitative)``, ``reached``,
        ``differs``, ``paper inconsistent`` or ``unverifiable``."""
        return self.verdict.removeprefix("verdict: ").split(": ", 1)[0]

    @property
    def reproduced(self) -> bool:
        """Reproduced in the numbers the paper prints."""
        return self.verdict_class == "reproduced"

    @property
    def qualitative(self) -> bool:
        """Reproduced in what the paper says in words, where it prints no number."""
        return self.verdict_class == "reproduced (qualitative)"

    def __repr__(self) -> str:
        return f"ExperimentResult({self.name!r}, {self.verdict!r}, tables={list(self.tables)})"


def run_experiment(name: str, output: Union[str, os.PathLike] = "out", view: bool = False) -> ExperimentResult:
    """Runs a seed paper's experiment (see :func:`experiments`) with its outputs under
    ``output/name/``, as ``softgen experiment run NAME`` does; with ``view``, a 3D page
    (``<trajectory>.view.html``) beside each trajectory it writes, as ``--view`` does."""
    lines, verdict = _softgen.run_experiment(name, os.fspath(output), view)
    return ExperimentResult(name, lines, verdict, Path(output) / name)


def read_table(parquet: bytes):
    """A sweep's results table (Parquet bytes) as a ``pyarrow.Table``, metadata included."""
    import pyarrow.parquet as pq

    return pq.read_table(io.BytesIO(parquet))


def _sweep_source(sweep: Union[str, os.PathLike]) -> Tuple[str, str]:
    """(text, origin) of a sweep given as a path or as TOML text."""
    if isinstance(sweep, os.PathLike) or (isinstance(sweep, str) and "\n" not in sweep and sweep.endswith(".toml")):
        path = Path(sweep)
        return path.read_text(), str(path)
    return str(sweep), "<sweep>"


def sweep_text(sweep: Union[str, os.PathLike], shard: Optional[Tuple[int, int]] = None, workers: int = 0) -> bytes:
    """Runs a sweep (a file's path or its TOML text) on ``workers`` threads (0: every core),
    shard ``(k, n)`` of it or all, and returns the results table as Parquet bytes."""
    text, origin = _sweep_source(sweep)
    return _softgen.run_sweep(text, origin, shard, workers)


def sweep(sweep: Union[str, os.PathLike], shard: Optional[Tuple[int, int]] = None, workers: int = 0) -> pd.DataFrame:
    """Runs a sweep and returns its results as a data frame: ``run``, the varied inputs,
    the figures, ``status`` and ``error`` (failed runs are rows with their error)."""
    return read_table(sweep_text(sweep, shard, workers)).to_pandas()

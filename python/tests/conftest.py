"""Shared fixtures: the `softgen` command-line binary the bindings are checked against."""

import json
import os
import subprocess
from pathlib import Path

import pytest

REPOSITORY = Path(__file__).resolve().parents[2]


def _cli() -> str:
    if os.environ.get("SOFTGEN_CLI"):
        return os.environ["SOFTGEN_CLI"]
    metadata = json.loads(
        subprocess.run(
            ["cargo", "metadata", "--format-version", "1", "--no-deps"],
            cwd=REPOSITORY, check=True, capture_output=True, text=True,
        ).stdout
    )
    target = Path(metadata["target_directory"])
    built = [target / profile / "softgen" for profile in ("release", "debug")]
    built = [path for path in built if path.exists()]
    if built:
        return str(max(built, key=lambda path: path.stat().st_mtime))
    subprocess.run(["cargo", "build", "--release", "--bin", "softgen"], cwd=REPOSITORY, check=True)
    return str(target / "release" / "softgen")


@pytest.fixture(scope="session")
def cli() -> str:
    """Path of the `softgen` binary (SOFTGEN_CLI, else the newest build in the target dir)."""
    return _cli()


@pytest.fixture(scope="session")
def repository() -> Path:
    return REPOSITORY

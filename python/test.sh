#!/usr/bin/env bash
# Builds the Python bindings into a virtual environment under the cargo target folder,
# installs what their tests need (maturin, numpy, pandas, pyarrow, pytest, ray, pin) and runs
# them. Called by .ci/run; run it by hand the same way: `bash python/test.sh`.
set -euo pipefail
cd "$(dirname "$0")/.."
target="${CARGO_TARGET_DIR:-$PWD/target}"
venv="$target/python-venv"
python="${PYTHON:-python3}"
if [ ! -x "$venv/bin/python" ]; then
    "$python" -m venv "$venv"
fi
"$venv/bin/pip" install --quiet --disable-pip-version-check --upgrade pip
"$venv/bin/pip" install --quiet --disable-pip-version-check "maturin>=1.9,<2" "pytest>=7" "ray>=2.9"
# Pinocchio, the independent rigid-body library the URDF-imported robots are checked against
# (tests/test_urdf_import.py); installed here, its tests must run, not skip.
"$venv/bin/pip" install --quiet --disable-pip-version-check "pin==4.1.0"
export SOFTGEN_PINOCCHIO_TESTS=required
# The bindings as a user installs them (`pip install ./python`), with the kernels optimised.
"$venv/bin/pip" install --quiet --disable-pip-version-check ./python
# The binary the tests compare against: SOFTGEN_CLI, else the newest `softgen` in the target
# folder (`cargo test` has built one), else a release build (python/tests/conftest.py).
# Run from outside the source folder, so `import softgen` is the installed package.
cd python/tests
"$venv/bin/python" -m pytest -q -p no:cacheprovider .

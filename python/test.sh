#!/usr/bin/env bash
# Builds the Python bindings into a virtual environment under the cargo target folder,
# installs what their tests need (maturin, numpy, pandas, pyarrow, pytest, ray, pin) and runs
# them. Called by .ci/run; run it by hand the same way: `bash python/test.sh`. With
# SOFTGEN_PYTHON_EXTENSION set to an extension module cargo built, it installs that one
# instead of building the wheel (below).
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
if [ -z "${SOFTGEN_PYTHON_EXTENSION:-}" ]; then
    # The bindings as a user installs them (`pip install ./python`), with the kernels optimised.
    "$venv/bin/pip" install --quiet --disable-pip-version-check ./python
else
    # An extension module cargo has built (.ci/run: the workspace's dev build, where the
    # tests compiled everything it needs, with PYO3_BUILD_EXTENSION_MODULE=1 as maturin sets
    # it), laid out as maturin installs the package: python/softgen with the module as
    # softgen._softgen, and the dependencies pyproject.toml lists. A release build of the
    # wheel compiled the generated crate a second time, most of the 15 minutes this phase took
    # in CI.
    "$venv/bin/pip" uninstall --quiet --disable-pip-version-check --yes softgen >/dev/null 2>&1 || true
    "$venv/bin/python" - "$SOFTGEN_PYTHON_EXTENSION" <<'PYTHON'
import pathlib, shutil, subprocess, sys, sysconfig, tomllib

extension = pathlib.Path(sys.argv[1])
if not extension.is_file():
    sys.exit(f"SOFTGEN_PYTHON_EXTENSION: {extension} is not a file")
project = tomllib.loads(pathlib.Path("python/pyproject.toml").read_text())["project"]
subprocess.run(
    [sys.executable, "-m", "pip", "install", "--quiet", "--disable-pip-version-check", *project["dependencies"]],
    check=True,
)
package = pathlib.Path(sysconfig.get_paths()["purelib"]) / "softgen"
shutil.rmtree(package, ignore_errors=True)
shutil.copytree("python/softgen", package, ignore=shutil.ignore_patterns("__pycache__", "*.so"))
shutil.copy2(extension, package / ("_softgen" + sysconfig.get_config_var("EXT_SUFFIX")))
PYTHON
fi
# The binary the tests compare against: SOFTGEN_CLI, else the newest `softgen` in the target
# folder (`cargo test` has built one), else a release build (python/tests/conftest.py).
# Run from outside the source folder, so `import softgen` is the installed package.
cd python/tests
"$venv/bin/python" -m pytest -q -p no:cacheprovider .

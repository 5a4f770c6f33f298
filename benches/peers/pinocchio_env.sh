# Sourced by the Pinocchio comparisons (pinocchio.sh, pinocchio_urdf.sh) from the workspace
# root: Pinocchio's Python wheel (pin, with its C++ headers and libraries) and Eigen's
# (cmeel-eigen) in a virtual environment under target/peers/pinocchio/. Sets `root` (that
# folder), `python` (the environment's interpreter) and `prefix` (the wheels' install prefix,
# include/ and lib/).
root=target/peers/pinocchio
mkdir -p "$root"
if [ ! -x "$root/venv/bin/python" ]; then
    python3 -m venv "$root/venv"
fi
python="$root/venv/bin/python"
"$root/venv/bin/pip" install --quiet "pin==4.1.0" cmeel-eigen
prefix=$("$python" -c 'import cmeel, sys; print(cmeel.__path__[0] + ".prefix")' 2>/dev/null \
    || "$python" -c 'import site; print(site.getsitepackages()[0] + "/cmeel.prefix")')
if [ ! -d "$prefix/include/pinocchio" ]; then
    echo "$(basename "$0"): no Pinocchio headers under $prefix" >&2
    exit 1
fi
# The definitions of Pinocchio's CMake target (its joint variant needs the longer Boost.MPL
# lists); without PINOCCHIO_ENABLE_TEMPLATE_INSTANTIATION every algorithm is instantiated in
# the timing program, for this machine.
pinocchio_flags=(-std=c++17 -O3 -march=native -DNDEBUG
    -DBOOST_MPL_LIMIT_LIST_SIZE=30 -DBOOST_MPL_LIMIT_VECTOR_SIZE=30
    -DBOOST_MPL_CFG_NO_PREPROCESSED_HEADERS -DBOOST_FUSION_INVOKE_MAX_ARITY=12
    -I"$prefix/include" -I"$prefix/include/eigen3")

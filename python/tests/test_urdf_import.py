"""Robots imported from URDF against Pinocchio reading the same file: M, C qd and G at random
states agree to 1e-12 relative (to each quantity's largest entry).

Pinocchio is an independent rigid-body library with its own URDF parser; like softgen's
importer it merges links on fixed joints into their parent. The spec's `exclude` (links left
out with their subtrees) is applied to the XML before Pinocchio reads it, and a floating base
is Pinocchio's composite joint of x, y, z translations then z, y, x rotations, which is
softgen's spatial base (x, y, z, yaw, pitch, roll with R = Rz Ry Rx) coordinate for
coordinate. Coordinates are matched by name: softgen names a joint's coordinate after its
child link (`<link>_joint`), Pinocchio after the URDF joint.

The tolerance: both sides evaluate the same products of transforms and inertias in double
precision in a different order; 1e-12 leaves three orders of magnitude for rounding and would
catch any wrong axis, offset, inertia rotation or merged mass (each at least 1e-6 here)."""

import json
import os
import pathlib
import subprocess

import numpy as np
import pytest

if os.environ.get("SOFTGEN_PINOCCHIO_TESTS") == "required":
    import pinocchio
else:
    pinocchio = pytest.importorskip("pinocchio", reason="Pinocchio is installed by python/test.sh")

from urdf_for_pinocchio import imported_robots, urdf_for_pinocchio

IMPORTED = imported_robots(pathlib.Path(__file__).resolve().parents[2] / "model-specs")


def pinocchio_model(repository, robot):
    xml, root, base = urdf_for_pinocchio(repository / "model-specs" / f"{robot}.toml")
    if base == "spatial":
        composite = pinocchio.JointModelComposite(pinocchio.JointModelPX())
        for joint in (pinocchio.JointModelPY(), pinocchio.JointModelPZ(), pinocchio.JointModelRZ(),
                      pinocchio.JointModelRY(), pinocchio.JointModelRX()):
            composite.addJoint(joint)
        model = pinocchio.buildModelFromXML(xml, composite)
    else:
        assert base == "fixed", base
        model = pinocchio.buildModelFromXML(xml)
    child_of = {joint.get("name"): joint.find("child").get("link") for joint in root.findall("joint")}
    return model, child_of, base


def softgen_eval(cli, robot, q, qd):
    document = {"q": list(map(float, q)), "qd": list(map(float, qd))}
    result = subprocess.run([cli, "eval", robot, "--stdin"], input=json.dumps(document),
                            capture_output=True, text=True, check=True)
    return json.loads(result.stdout)


def agree(ours, theirs, what):
    ours = np.asarray(ours, dtype=float)
    theirs = np.asarray(theirs, dtype=float)
    scale = float(np.max(np.abs(theirs)))
    error = float(np.max(np.abs(ours - theirs)))
    assert error <= 1e-12 * scale, f"{what}: differs by {error:.3e} (largest entry {scale:.3e})"


def test_the_imported_robots_are_found():
    assert {"panda_arm", "anymal_c"} <= set(IMPORTED)


@pytest.mark.parametrize("robot", IMPORTED)
def test_imported_robot_equals_pinocchio(cli, repository, robot):
    model, child_of, base = pinocchio_model(repository, robot)
    data = model.createData()
    # Pinocchio's coordinate index of each of softgen's coordinates.
    names = [c["name"] for c in softgen_eval(cli, robot, np.zeros(model.nq), np.zeros(model.nv))["coordinates"]]
    assert len(names) == model.nv
    index = {}
    for j in range(1, model.njoints):
        joint_name = model.names[j]
        start, width = model.joints[j].idx_v, model.joints[j].nv
        if width == 6:
            for k, axis in enumerate(["x", "y", "z", "yaw", "pitch", "roll"]):
                index[f"base_{axis}"] = start + k
        else:
            index[f"{child_of[joint_name]}_joint"] = start
    order = np.array([index[name] for name in names])
    rng = np.random.default_rng(20261127)
    for trial in range(5):
        q = rng.uniform(-1.0, 1.0, model.nq)
        qd = rng.uniform(-2.0, 2.0, model.nv)
        ours = softgen_eval(cli, robot, q[order], qd[order])
        mass_matrix = pinocchio.crba(model, data, q)
        mass_matrix = np.triu(mass_matrix) + np.triu(mass_matrix, 1).T
        gravity = pinocchio.computeGeneralizedGravity(model, data, q)
        coriolis_times_qd = pinocchio.rnea(model, data, q, qd, np.zeros(model.nv)) - gravity
        agree(ours["mass_matrix"], mass_matrix[np.ix_(order, order)], f"{robot} trial {trial}: M")
        agree(ours["gravity"], gravity[order], f"{robot} trial {trial}: G")
        agree(ours["coriolis_times_qd"], coriolis_times_qd[order], f"{robot} trial {trial}: C qd")
        # The merged links' masses are all there.
        assert abs(ours["total_mass"] - sum(inertia.mass for inertia in model.inertias)) <= 1e-12 * ours["total_mass"]

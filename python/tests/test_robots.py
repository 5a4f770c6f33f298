"""The bindings against `softgen eval`: every robot's M, C qd, C, G, energies and contact
kinematics agree with the command line's JSON to 1e-15 (relative to each quantity's
scale) at random states and changed parameters."""

import json
import subprocess

import numpy as np
import pytest

import softgen

ROBOTS = softgen.robots()


def cli_eval(cli, robot, q, qd, params):
    document = {"q": list(map(float, q)), "qd": list(map(float, qd)), "params": params}
    result = subprocess.run([cli, "eval", robot, "--stdin"], input=json.dumps(document), capture_output=True, text=True, check=True)
    return json.loads(result.stdout)


def close(binding, reference, what):
    binding = np.asarray(binding, dtype=float)
    reference = np.asarray(reference, dtype=float)
    assert binding.shape == reference.shape, what
    scale = max(1.0, float(np.max(np.abs(reference))) if reference.size else 1.0)
    error = float(np.max(np.abs(binding - reference))) if reference.size else 0.0
    assert error <= 1e-15 * scale, f"{what}: differs by {error:.3e} (scale {scale:.3e})"


@pytest.mark.parametrize("name", ROBOTS)
def test_binding_agrees_with_cli_eval(cli, name):
    robot = softgen.Robot(name)
    rng = np.random.default_rng(abs(hash(name)) % 2**32)
    q0 = robot.initial_position
    q = q0 + 0.1 * rng.standard_normal(robot.dof)
    qd = 0.3 * rng.standard_normal(robot.dof)
    # One parameter changed by 10 %, through the bindings and through the CLI.
    first = next(iter(robot.params))
    changed = {first: robot.params[first] * 1.1}
    robot.set_params(**changed)
    reference = cli_eval(cli, name, q, qd, changed)
    assert reference["parameters"][first] == robot.params[first]
    close(robot.mass_matrix(q), reference["mass_matrix"], "M")
    close(robot.coriolis(q, qd), reference["coriolis_times_qd"], "C qd")
    close(robot.coriolis_matrix(q, qd), reference["coriolis_matrix"], "C")
    close(robot.gravity(q), reference["gravity"], "G")
    close(robot.potential_energy(q), reference["potential_energy"], "V")
    close(robot.kinetic_energy(q, qd), reference["kinetic_energy"], "T")
    close(robot.center_of_mass(q), reference["center_of_mass"], "centre of mass")
    close(robot.total_mass, reference["total_mass"], "total mass")
    contacts = reference["contact_points"]
    assert robot.contact_points == [c["name"] for c in contacts]
    if contacts:
        close(robot.contact_positions(q), [c["position"] for c in contacts], "contact positions")
        close(robot.contact_velocities(q, qd), [c["velocity"] for c in contacts], "contact velocities")
        close(robot.contact_jacobians(q), [c["jacobian"] for c in contacts], "contact Jacobians")
    markers = reference["markers"]
    assert robot.markers == [m["name"] for m in markers]
    if markers:
        close(robot.marker_positions(q), [m["position"] for m in markers], "marker positions")
        close(robot.marker_jacobians(q), [m["jacobian"] for m in markers], "marker Jacobians")
    assert [c["name"] for c in robot.coordinates] == [c["name"] for c in reference["coordinates"]]
    # The binding's own eval document is the CLI's.
    assert robot.eval(q, qd)["mass_matrix"] == reference["mass_matrix"]


@pytest.mark.parametrize("name", ["snake_pedal_wave", "double_pendulum", "soft_snake"])
def test_forward_dynamics_solves_the_equations(name):
    robot = softgen.Robot(name)
    rng = np.random.default_rng(7)
    q = robot.initial_position + 0.05 * rng.standard_normal(robot.dof)
    qd = 0.2 * rng.standard_normal(robot.dof)
    tau = rng.standard_normal(robot.dof)
    qdd = robot.forward_dynamics(q, qd, tau)
    residual = robot.mass_matrix(q) @ qdd + robot.coriolis(q, qd) + robot.gravity(q) - tau
    assert np.max(np.abs(residual)) < 1e-9 * max(1.0, np.max(np.abs(tau)))


def test_mass_matrix_is_symmetric_positive_definite_and_mdot_minus_2c_is_skew():
    robot = softgen.Robot("snake_pedal_wave")
    rng = np.random.default_rng(3)
    q = robot.initial_position + 0.2 * rng.standard_normal(robot.dof)
    qd = rng.standard_normal(robot.dof)
    m = robot.mass_matrix(q)
    assert np.allclose(m, m.T, atol=1e-14)
    assert np.all(np.linalg.eigvalsh(m) > 0)
    h = 1e-6
    mdot = (robot.mass_matrix(q + h * qd) - robot.mass_matrix(q - h * qd)) / (2 * h)
    n = mdot - 2 * robot.coriolis_matrix(q, qd)
    assert np.max(np.abs(n + n.T)) < 1e-7


def test_lists_and_other_dtypes_are_read_as_float64():
    robot = softgen.Robot("double_pendulum")
    q = [0.3, -0.2]
    single = np.array(q, dtype=np.float32)
    assert np.array_equal(robot.mass_matrix(single), robot.mass_matrix(single.astype(np.float64)))
    assert np.array_equal(robot.mass_matrix(q), robot.mass_matrix(np.array(q)))
    assert np.array_equal(robot.gravity(np.array([0, 0], dtype=np.int64)), robot.gravity([0.0, 0.0]))
    strided = np.array([0.3, 99.0, -0.2])[::2]
    assert np.array_equal(robot.mass_matrix(strided), robot.mass_matrix(q))


# Rigid robots: differences of a soft robot's forward dynamics carry its stiff M's rounding
# over h (generated/tests/derivatives.rs checks every robot against the inverse dynamics).
# With h = 1e-4 the central differences' rounding is about 1e-12 |qdd| / h = 1e-8 |qdd| and
# their truncation h^2 / 6 of the third derivative; a base translation's column is zero, so
# the absolute tolerance is set by |qdd|.
@pytest.mark.parametrize("name", ["snake_pedal_wave", "spatial_tree"])
def test_forward_dynamics_derivatives_match_differences(name):
    robot = softgen.Robot(name)
    rng = np.random.default_rng(11)
    q = robot.initial_position + 0.1 * rng.standard_normal(robot.dof)
    qd = 0.2 * rng.standard_normal(robot.dof)
    tau = rng.standard_normal(robot.dof)
    dq, dqd, dtau = robot.forward_dynamics_derivatives(q, qd, tau)
    assert np.allclose(dtau, np.linalg.inv(robot.mass_matrix(q)), rtol=1e-9, atol=1e-12)
    scale = 1.0 + np.max(np.abs(robot.forward_dynamics(q, qd, tau)))
    h = 1e-4
    for j in range(robot.dof):
        step = np.zeros(robot.dof)
        step[j] = h
        numeric = (robot.forward_dynamics(q + step, qd, tau) - robot.forward_dynamics(q - step, qd, tau)) / (2 * h)
        assert np.allclose(dq[:, j], numeric, rtol=1e-6, atol=1e-6 * scale)
        numeric = (robot.forward_dynamics(q, qd + step, tau) - robot.forward_dynamics(q, qd - step, tau)) / (2 * h)
        assert np.allclose(dqd[:, j], numeric, rtol=1e-6, atol=1e-6 * scale)

"""Bad input raises softgen.SoftgenError (a ValueError) with a message naming what was
wrong; it never crashes the interpreter or changes what was set before."""

import numpy as np
import pytest

import softgen


@pytest.fixture
def robot():
    return softgen.Robot("snake_pedal_wave")


@pytest.mark.parametrize(
    "call, message",
    [
        (lambda r: r.mass_matrix(np.zeros(3)), "q must have shape (8,), got (3,)"),
        (lambda r: r.mass_matrix(np.zeros((2, 8))), "q must have shape (8,), got (2, 8)"),
        (lambda r: r.mass_matrix(np.zeros(0)), "q must have shape (8,), got (0,)"),
        (lambda r: r.mass_matrix([0.0] * 7 + [np.nan]), "q[7] is NaN"),
        (lambda r: r.gravity([0.0, np.inf] + [0.0] * 6), "q[1] is inf"),
        (lambda r: r.coriolis(np.zeros(8), np.zeros(9)), "qd must have shape (8,), got (9,)"),
        (lambda r: r.forward_dynamics(np.zeros(8), np.zeros(8), [1.0] * 8 + [2.0]), "tau must have shape (8,)"),
        (lambda r: r.mass_matrix("straight"), "q must be an array of 8 numbers"),
        (lambda r: r.mass_matrix(None), "q must"),
        (lambda r: r.mass_matrix([[1, 2], [3]]), "q must"),
        (lambda r: r.set_params(link_mas=1.0), "unknown parameter `link_mas`"),
        (lambda r: r.set_params(link_mass=float("nan")), "parameter `link_mass` must be finite"),
        (lambda r: r.set_params(link_mass="heavy"), "parameter `link_mass` must be a number"),
        (lambda r: r.set_params(link_mass=-1.0), "link_mass"),
        (lambda r: r.set_params(link_mass=1e308), "= 1e308 kg is outside the physical range of a mass"),
    ],
)
def test_bad_arrays_and_parameters_raise_with_the_message(robot, call, message):
    before = robot.params
    with pytest.raises(softgen.SoftgenError) as raised:
        call(robot)
    assert message in str(raised.value)
    assert robot.params == before, "a refused change leaves the parameters as they were"
    assert isinstance(raised.value, ValueError)


def test_unknown_robot_names_the_known_ones():
    with pytest.raises(softgen.SoftgenError, match="unknown robot `octopus`; known robots: ") as raised:
        softgen.Robot("octopus")
    # Every robot of the registry, in order (robots added to model-specs/ included).
    assert str(raised.value).endswith("known robots: " + ", ".join(softgen.robots()))


def test_unknown_parameter_at_construction():
    with pytest.raises(softgen.SoftgenError, match="unknown parameter `wingspan`"):
        softgen.Robot("double_pendulum", {"wingspan": 2.0})


@pytest.mark.parametrize(
    "settings, message",
    [
        ({"durration": 1.0}, "unknown field `durration`"),
        ({"duration": "long"}, "invalid type: string \"long\""),
        ({"integrator": "rk5"}, "unknown variant `rk5`"),
        ({"dt": 0.0}, "control period must be a finite number > 0"),
        ({"duration": float("nan")}, "duration must be a finite number"),
        ({"params": {"wingspan": 1.0}}, "unknown parameter `wingspan`"),
        ({"duration": [1.0]}, "expected a number, string, bool or dict"),
        ({"friction": 1e300}, "friction along = 1e300 is outside the physical range of a friction coefficient"),
        ({"contact_stiffness": 1e300}, "outside the physical range of a contact stiffness"),
        ({"params": {"upper_mass": 1e308}}, "= 1e308 kg is outside the physical range of a mass"),
    ],
)
def test_bad_simulation_settings_raise(settings, message):
    with pytest.raises(softgen.SoftgenError) as raised:
        softgen.simulate("double_pendulum", **settings)
    assert message in str(raised.value)


def test_bad_sweeps_raise():
    with pytest.raises(softgen.SoftgenError, match="missing `robot"):
        softgen.sweep("[grid]\nramp = [0.0]\n")
    with pytest.raises(softgen.SoftgenError, match="0 <= K < N"):
        softgen.sweep('robot = "double_pendulum"\n[grid]\nramp = [0.0]\n', shard=(2, 2))
    with pytest.raises(softgen.SoftgenError, match="nothing to merge"):
        softgen._softgen.merge_tables([])
    with pytest.raises(softgen.SoftgenError, match="not a softgen sweep table|Parquet"):
        softgen._softgen.merge_tables([b"not parquet"])


def test_unknown_experiment():
    with pytest.raises(softgen.SoftgenError, match="no experiment named `000-flight`"):
        softgen.run_experiment("000-flight")

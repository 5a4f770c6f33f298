"""A robot softgen imports from URDF, as Pinocchio should read it: the spec's `[import]`
applied to the XML (the `exclude`d links removed with their subtrees and the joints into
them). Shared by test_urdf_import.py and benches/peers/pinocchio_urdf.sh."""

import pathlib
import tomllib
import xml.etree.ElementTree as ElementTree


def imported_robots(model_specs):
    """The robots of `model_specs` made of an imported URDF alone (no bodies of their own)."""
    robots = []
    for path in sorted(pathlib.Path(model_specs).glob("*.toml")):
        if path.name.endswith(".run.toml"):
            continue
        spec = tomllib.loads(path.read_text())
        if "import" in spec and not spec.get("bodies"):
            robots.append(path.stem)
    return robots


def urdf_for_pinocchio(spec_path):
    """(the URDF's XML text, its <robot> element, the base kind) for the spec at `spec_path`."""
    spec_path = pathlib.Path(spec_path)
    imported = tomllib.loads(spec_path.read_text())["import"]
    tree = ElementTree.parse(spec_path.parent / imported["urdf"])
    robot = tree.getroot()
    joints = robot.findall("joint")
    children = {}
    for joint in joints:
        children.setdefault(joint.find("parent").get("link"), []).append(joint.find("child").get("link"))
    removed = set()
    stack = list(imported.get("exclude", []))
    while stack:
        link = stack.pop()
        removed.add(link)
        stack.extend(children.get(link, []))
    for link in robot.findall("link"):
        if link.get("name") in removed:
            robot.remove(link)
    for joint in joints:
        if joint.find("child").get("link") in removed:
            robot.remove(joint)
    return ElementTree.tostring(robot, encoding="unicode"), robot, imported.get("base", "fixed")

// Pinocchio's forward dynamics (aba) on the robots softgen imports from URDF, each read by
// Pinocchio's own URDF parser (in Python, by benches/peers/pinocchio_urdf.sh) with the base
// its authors recommend (a free-flyer joint for a floating base, nothing for a fixed one).
// The parsed model (joint types, placements and the inertias with the fixed links merged)
// is written out and rebuilt here, joint for joint, in code compiled for this machine: a
// Model built by the wheel's parser library (compiled for generic x86-64) and used by code
// compiled with -march=native disagrees on Eigen's alignment and crashes, and the wheel has
// no headers to load a saved Model.
//
// Usage: pinocchio_urdf NAME MODEL.txt [NAME MODEL.txt ...]
// MODEL.txt: one line per joint, "PARENT TYPE ax ay az  R (9, row-major) p (3)  mass
// c (3) Ixx Ixy Ixz Iyy Iyz Izz". Prints, per robot, "pinocchio NAME nv seconds": the
// time of a call of aba at one random state, estimated as criterion estimates softgen's
// (timing.hpp). Built by
// benches/peers/pinocchio_urdf.sh with -O3 -march=native.

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <string>

#include <pinocchio/algorithm/aba.hpp>
#include <pinocchio/algorithm/joint-configuration.hpp>
#include <pinocchio/multibody.hpp>

#include "timing.hpp"

using namespace pinocchio;

static JointModel joint_model(const std::string& type, const Eigen::Vector3d& axis) {
  if (type == "JointModelRX") return JointModelRX();
  if (type == "JointModelRY") return JointModelRY();
  if (type == "JointModelRZ") return JointModelRZ();
  if (type == "JointModelRevoluteUnaligned") return JointModelRevoluteUnaligned(axis);
  if (type == "JointModelRUBX") return JointModelRUBX();
  if (type == "JointModelRUBY") return JointModelRUBY();
  if (type == "JointModelRUBZ") return JointModelRUBZ();
  if (type == "JointModelRevoluteUnboundedUnaligned") return JointModelRevoluteUnboundedUnaligned(axis);
  if (type == "JointModelPX") return JointModelPX();
  if (type == "JointModelPY") return JointModelPY();
  if (type == "JointModelPZ") return JointModelPZ();
  if (type == "JointModelPrismaticUnaligned") return JointModelPrismaticUnaligned(axis);
  if (type == "JointModelFreeFlyer") return JointModelFreeFlyer();
  throw std::runtime_error("joint type " + type + " is not rebuilt here");
}

static Model read_model(const std::string& file) {
  std::ifstream in(file);
  if (!in) throw std::runtime_error("cannot read " + file);
  Model model;
  model.gravity.linear(Eigen::Vector3d(0.0, 0.0, -9.81));
  std::string line;
  while (std::getline(in, line)) {
    std::istringstream fields(line);
    long parent;
    std::string type;
    Eigen::Vector3d axis, translation, lever;
    Eigen::Matrix3d rotation;
    double mass, xx, xy, xz, yy, yz, zz;
    fields >> parent >> type >> axis[0] >> axis[1] >> axis[2];
    for (int r = 0; r < 3; ++r)
      for (int c = 0; c < 3; ++c) fields >> rotation(r, c);
    fields >> translation[0] >> translation[1] >> translation[2] >> mass >> lever[0] >> lever[1] >> lever[2] >> xx >> xy >>
        xz >> yy >> yz >> zz;
    if (!fields) throw std::runtime_error("malformed line in " + file + ": " + line);
    Eigen::Matrix3d inertia;
    inertia << xx, xy, xz, xy, yy, yz, xz, yz, zz;
    const JointIndex joint = model.addJoint(parent, joint_model(type, axis), SE3(rotation, translation),
                                            "joint" + std::to_string(model.njoints));
    model.appendBodyToJoint(joint, Inertia(mass, lever, inertia), SE3::Identity());
  }
  return model;
}

int main(int argc, char** argv) {
  if (argc < 3 || (argc - 1) % 2 != 0) {
    std::fprintf(stderr, "usage: %s NAME MODEL.txt [NAME MODEL.txt ...]\n", argv[0]);
    return 2;
  }
  std::srand(5);
  for (int i = 1; i < argc; i += 2) {
    const std::string name = argv[i], file = argv[i + 1];
    const Model model = read_model(file);
    Data data(model);
    // The neutral pose (a unit quaternion for a free flyer) moved by a random velocity.
    const Eigen::VectorXd q = integrate(model, neutral(model), 0.5 * Eigen::VectorXd::Random(model.nv));
    const Eigen::VectorXd v = 0.5 * Eigen::VectorXd::Random(model.nv);
    const Eigen::VectorXd tau = Eigen::VectorXd::Random(model.nv);
    const double forward = criterion_slope_seconds([&] { aba(model, data, q, v, tau); });
    std::printf("pinocchio %s %d %.4e\n", name.c_str(), model.nv, forward);
  }
  return 0;
}

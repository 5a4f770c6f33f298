// Pinocchio's timing on softgen's scaling fixtures: planar snakes of N links (N + 2
// coordinates) with the link data of model-specs/snake_pedal_wave.toml (0.1 kg, 0.1 m, centre
// of mass mid-link, 8.333e-5 kg m^2), in the vertical x-z plane under gravity. A planar base
// (x, z translation, rotation about y), then revolute joints about y 0.1 m apart.
//
// Prints, per size, the time of a call of aba (forward dynamics) and computeABADerivatives
// (its partial derivatives dq, dv, dtau = M^-1) at one random state, estimated as criterion
// estimates softgen's (timing.hpp).
// Built by benches/peers/pinocchio.sh with -O3 -march=native against the pin wheel's headers.

#include <cstdio>
#include <cstdlib>
#include <vector>

#include <pinocchio/multibody.hpp>
#include <pinocchio/algorithm/aba-derivatives.hpp>
#include <pinocchio/algorithm/aba.hpp>

#include "timing.hpp"

using namespace pinocchio;

static Model planar_snake(int links) {
  Model model;
  model.gravity.linear(Eigen::Vector3d(0.0, 0.0, -9.81));
  const double length = 0.1, mass = 0.1, inertia = 8.333333333333333e-5;
  const Inertia link(mass, Eigen::Vector3d(length / 2.0, 0.0, 0.0), Eigen::Matrix3d::Identity() * inertia);
  JointIndex parent = model.addJoint(0, JointModelPX(), SE3::Identity(), "base_x");
  parent = model.addJoint(parent, JointModelPZ(), SE3::Identity(), "base_z");
  parent = model.addJoint(parent, JointModelRY(), SE3::Identity(), "base_angle");
  model.appendBodyToJoint(parent, link, SE3::Identity());
  for (int k = 2; k <= links; ++k) {
    const SE3 origin(Eigen::Matrix3d::Identity(), Eigen::Vector3d(length, 0.0, 0.0));
    parent = model.addJoint(parent, JointModelRY(), origin, "joint" + std::to_string(k));
    model.appendBodyToJoint(parent, link, SE3::Identity());
  }
  return model;
}

// With arguments, only the snakes of those link counts (pinocchio.sh times one size at a
// time, each beside softgen's); without, 6, 12, 20 and 60 links.
int main(int argc, char** argv) {
  std::vector<int> sizes;
  for (int a = 1; a < argc; ++a) {
    char* end = nullptr;
    const long links = std::strtol(argv[a], &end, 10);
    if (end == argv[a] || *end != '\0' || links < 1 || links > 1000) {
      std::fprintf(stderr, "pinocchio_derivatives: `%s` is not a link count (1 to 1000)\n", argv[a]);
      return 2;
    }
    sizes.push_back(static_cast<int>(links));
  }
  if (sizes.empty()) sizes = {6, 12, 20, 60};
  for (int links : sizes) {
    // The same state for a size whether it runs alone or after others.
    std::srand(5 + links);
    const Model model = planar_snake(links);
    Data data(model);
    const Eigen::VectorXd q = 0.5 * Eigen::VectorXd::Random(model.nq);
    const Eigen::VectorXd v = 0.5 * Eigen::VectorXd::Random(model.nv);
    const Eigen::VectorXd tau = Eigen::VectorXd::Random(model.nv);
    const double forward = criterion_slope_seconds([&] { aba(model, data, q, v, tau); });
    const double derivatives = criterion_slope_seconds([&] { computeABADerivatives(model, data, q, v, tau); });
    std::printf("pinocchio %d %.4e %.4e\n", model.nv, forward, derivatives);
  }
  return 0;
}

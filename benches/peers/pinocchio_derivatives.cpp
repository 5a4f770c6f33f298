// Pinocchio's timing on softgen's scaling fixtures: planar snakes of N links (N + 2
// coordinates) with the link data of model-specs/snake_pedal_wave.toml (0.1 kg, 0.1 m, centre
// of mass mid-link, 8.333e-5 kg m^2), in the vertical x-z plane under gravity. A planar base
// (x, z translation, rotation about y), then revolute joints about y 0.1 m apart.
//
// Prints, per size, the mean time of aba (forward dynamics) and computeABADerivatives (its
// partial derivatives dq, dv, dtau = M^-1) at one random state, best of five repeats.
// Built by benches/peers/pinocchio.sh with -O3 -march=native against the pin wheel's headers.

#include <cstdio>
#include <cstdlib>

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

int main() {
  std::srand(5);
  for (int links : {6, 12, 20, 60}) {
    const Model model = planar_snake(links);
    Data data(model);
    const Eigen::VectorXd q = 0.5 * Eigen::VectorXd::Random(model.nq);
    const Eigen::VectorXd v = 0.5 * Eigen::VectorXd::Random(model.nv);
    const Eigen::VectorXd tau = Eigen::VectorXd::Random(model.nv);
    const double forward = best_mean_seconds([&] { aba(model, data, q, v, tau); });
    const double derivatives = best_mean_seconds([&] { computeABADerivatives(model, data, q, v, tau); });
    std::printf("pinocchio %d %.4e %.4e\n", model.nv, forward, derivatives);
  }
  return 0;
}

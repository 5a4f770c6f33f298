// The timing both Pinocchio programs use: the best of five repeats of the mean time of a
// call, each repeat calibrated to about 50 ms.
#pragma once

#include <chrono>

template <typename F>
static double best_mean_seconds(F&& call) {
  using clock = std::chrono::steady_clock;
  long iterations = 1;
  for (;;) {
    const auto start = clock::now();
    for (long i = 0; i < iterations; ++i) call();
    const double seconds = std::chrono::duration<double>(clock::now() - start).count();
    if (seconds > 0.05) break;
    iterations *= 2;
  }
  double best = 1e300;
  for (int repeat = 0; repeat < 5; ++repeat) {
    const auto start = clock::now();
    for (long i = 0; i < iterations; ++i) call();
    const double mean = std::chrono::duration<double>(clock::now() - start).count() / iterations;
    if (mean < best) best = mean;
  }
  return best;
}

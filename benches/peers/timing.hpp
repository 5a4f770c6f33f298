// The timing both Pinocchio programs use: criterion's, as softgen's derivatives bench runs
// it (benches/derivatives.rs: 0.3 s of warm-up, 20 samples in 1 s), so both halves of a
// comparison are the same estimate of the same sampling. The warm-up doubles the calls
// until 0.3 s have passed and gives the time per call; sample k of 20 then makes k d calls,
// d set so that the samples take about a second in all; the figure is the slope of the
// samples' times against their calls (least squares through the origin), the estimate
// criterion's bencher output prints. (Until 2026-12-03 this was the best of five repeats'
// means against criterion's slope: in a busy spell the best of five picks the repeat with
// the fewest interruptions while the slope averages over all of them.)
#pragma once

#include <algorithm>
#include <chrono>
#include <cmath>

template <typename F>
static double criterion_slope_seconds(F&& call) {
  using clock = std::chrono::steady_clock;
  const auto seconds_since = [](clock::time_point start) {
    return std::chrono::duration<double>(clock::now() - start).count();
  };
  const double warm_up = 0.3, measurement = 1.0;
  const long samples = 20;
  long calls = 1, total_calls = 0;
  double elapsed = 0.0;
  const auto warm_start = clock::now();
  for (;;) {
    for (long i = 0; i < calls; ++i) call();
    total_calls += calls;
    elapsed = seconds_since(warm_start);
    if (elapsed > warm_up) break;
    calls *= 2;
  }
  const double per_call = elapsed / static_cast<double>(total_calls);
  const double total_runs = static_cast<double>(samples * (samples + 1) / 2);
  const long step = std::max(1L, static_cast<long>(std::ceil(measurement / per_call / total_runs)));
  double sum_calls_times = 0.0, sum_calls_squared = 0.0;
  for (long k = 1; k <= samples; ++k) {
    const long sample_calls = k * step;
    const auto start = clock::now();
    for (long i = 0; i < sample_calls; ++i) call();
    const double seconds = seconds_since(start);
    sum_calls_times += static_cast<double>(sample_calls) * seconds;
    sum_calls_squared += static_cast<double>(sample_calls) * static_cast<double>(sample_calls);
  }
  return sum_calls_times / sum_calls_squared;
}

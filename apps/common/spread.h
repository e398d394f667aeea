// The median, smallest and largest of repeated timings: what every app that times something
// several times reports (the training apps' step times, the Jacobian's calls, the sweeps, the
// bench).
#pragma once
#include <vector>

namespace engine::apps {

// All zero when there are no values; the median of an even count is the mean of the middle two.
struct Spread {
  double median = 0.0, min = 0.0, max = 0.0;
  int count = 0;
};
Spread spread_of(std::vector<double> values);

}  // namespace engine::apps

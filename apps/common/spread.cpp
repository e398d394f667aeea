#include "apps/common/spread.h"

#include <algorithm>

namespace engine::apps {

Spread spread_of(std::vector<double> values) {
  if (values.empty()) return {};
  std::sort(values.begin(), values.end());
  const size_t mid = values.size() / 2;
  const double median = values.size() % 2 ? values[mid] : 0.5 * (values[mid - 1] + values[mid]);
  return {median, values.front(), values.back(), static_cast<int>(values.size())};
}

}  // namespace engine::apps

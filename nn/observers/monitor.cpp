#include <cmath>
#include <cstdio>
#include <iostream>
#include <limits>

#include "core/error.h"
#include "nn/observers/observers.h"

namespace engine::nn {

namespace {
// Whether this run measures `name`: the loss always, the loss's own metric, and each with a
// val_ prefix only with validation data.
bool measures(const FitRun& run, const std::string& name) {
  const bool validated = name.rfind("val_", 0) == 0;
  const std::string base = validated ? name.substr(4) : name;
  if (validated && run.options.validation == nullptr) return false;
  return base == "loss" || base == metric_name(run.metric);
}
}  // namespace

Monitor::Monitor(const FitRun& run, std::string name, double min_delta, const char* who)
    : name_(std::move(name)),
      min_delta_(min_delta),
      lower_is_better_(lower_is_better(name_)),  // refuses an unknown name
      best_(lower_is_better_ ? std::numeric_limits<double>::infinity()
                             : -std::numeric_limits<double>::infinity()) {
  ENGINE_CHECK(min_delta >= 0.0, who, ": min_delta must be at least 0, got ", min_delta);
  if (!measures(run, name_)) {
    std::string measured = "loss";
    const std::string metric = metric_name(run.metric);
    if (!metric.empty()) measured += ", " + metric;
    if (run.options.validation) measured += ", val_loss" + (metric.empty() ? "" : ", val_" + metric);
    throw Error(detail::concat(who, " monitors ", name_, ", which this run does not measure (",
                               run.options.validation ? "" : "no validation data; ",
                               "it measures ", measured, ")"));
  }
}

bool Monitor::improved(const EpochRecord& record) {
  const double value = monitored_value(record, name_);
  // Written so that a NaN is never an improvement.
  const bool better = lower_is_better_ ? value < best_ - min_delta_ : value > best_ + min_delta_;
  if (!better) return false;
  best_ = value;
  best_epoch_ = record.epoch;
  return true;
}

std::ostream* fit_output(const FitOptions& options) {
  if (!options.verbose) return nullptr;
  return options.out ? options.out : &std::cout;
}

std::string format_monitored(double value) {
  char text[32];
  const bool tiny = value != 0.0 && std::fabs(value) < 1e-3;
  std::snprintf(text, sizeof text, tiny ? "%.4g" : "%.4f", value);
  return text;
}

}  // namespace engine::nn

#include <cmath>
#include <ostream>

#include "core/error.h"
#include "nn/model_file.h"
#include "nn/observers/observers.h"
#include "nn/sequential.h"
#include "nn/weights_io.h"

namespace engine::nn {

namespace {
bool ends_with(const std::string& text, const std::string& tail) {
  return text.size() >= tail.size() && text.compare(text.size() - tail.size(), tail.size(), tail) == 0;
}
}  // namespace

BestModelSaver::BestModelSaver(FitRun& run)
    : monitor_(run, run.options.save_best.monitor, run.options.save_best.min_delta,
               "saving the best model") {
  // A resumed run saves only what beats the epochs before it.
  for (const EpochRecord& record : run.history.epochs) {
    if (!std::isnan(monitored_value(record, monitor_.name()))) monitor_.improved(record);
  }
}

void BestModelSaver::epoch_finished(FitRun& run, EpochRecord& record) {
  const double before = monitor_.best();
  if (!monitor_.improved(record)) return;
  const std::string& path = run.options.save_best.path;
  const bool weights_only = ends_with(path, ".weights");
  if (weights_only) {
    save_weights(run.model, path);
  } else {
    try {
      save_model(run.model, path);
    } catch (const Error& e) {  // a layer of one's own, which a model file cannot describe
      throw Error(detail::concat(e.what(), " (saving the best model to ", path,
                                 "; a path ending in .weights saves the weights alone)"));
    }
  }
  if (std::ostream* out = fit_output(run.options)) {
    *out << "Epoch " << record.epoch << ": " << monitor_.name() << " improved from "
         << format_monitored(before) << " to " << format_monitored(monitor_.best()) << ", saving the "
         << (weights_only ? "weights" : "model") << " to " << path << "\n"
         << std::flush;
  }
}

}  // namespace engine::nn

#include <cerrno>
#include <charconv>
#include <cstdlib>
#include <cstring>
#include <sstream>
#include <vector>

#include "core/error.h"
#include "nn/observers/observers.h"

namespace engine::nn {

namespace {

// The shortest text that reads back as the same number, in %g's style ("0.0005", "5e-05"),
// much as Python's repr writes it in Keras' CSVLogger.
template <typename T>
std::string shortest(T value) {
  char text[64];
  const std::to_chars_result end =
      std::to_chars(text, text + sizeof text, value, std::chars_format::general);
  return std::string(text, end.ptr);
}

// The epoch a row of the log is for (its first field), or 0 where it has none.
int row_epoch(const std::string& row) {
  char* end = nullptr;
  const long epoch = std::strtol(row.c_str(), &end, 10);
  return end != row.c_str() && *end == ',' && epoch > 0 ? static_cast<int>(epoch) : 0;
}

}  // namespace

CsvLogger::CsvLogger(FitRun& run)
    : path_(run.options.log_csv),
      schedule_(run.options.lr_schedule.kind != LearningRateSchedule::Kind::None) {
  // Keras' columns: epoch, loss and the metric, the same of the validation data, the rate.
  const std::string metric = metric_name(run.metric);
  header_ = "epoch,loss";
  if (!metric.empty()) header_ += "," + metric;
  if (run.options.validation) header_ += metric.empty() ? ",val_loss" : ",val_loss,val_" + metric;
  if (schedule_) header_ += ",lr";

  // A resumed run keeps the header and the rows of the epochs its checkpoint holds (a run
  // killed after a later epoch left rows the resumed run writes again), then appends.
  std::string kept = header_ + "\n";
  const TrainingState* resume = run.options.resume;
  std::ifstream previous(resume ? path_ : std::string());
  if (previous) {
    std::string line;
    std::getline(previous, line);
    ENGINE_CHECK(line == header_, "the CSV log ", path_, " has the columns '", line,
                 "', this run writes '", header_, "': log the resumed run to another file");
    for (int number = 2; std::getline(previous, line); ++number) {
      const int epoch = row_epoch(line);
      ENGINE_CHECK(epoch > 0, "the CSV log ", path_, ": line ", number,
                   " is not a row of an epoch: '", line, "'");
      if (epoch < resume->epoch) kept += line + "\n";
    }
  }
  previous.close();
  file_.open(path_, std::ios::out | std::ios::trunc);
  file_ << kept << std::flush;
  ENGINE_CHECK(file_.good(), "cannot write the CSV log ", path_, ": ", std::strerror(errno));
}

void CsvLogger::epoch_finished(FitRun& run, EpochRecord& record) {
  const bool mae = run.metric == Metric::MeanAbsoluteError;
  std::ostringstream row;
  row << record.epoch << ',' << shortest(record.loss);
  if (run.metric != Metric::None) row << ',' << shortest(mae ? record.mae : record.accuracy);
  if (run.options.validation) {
    row << ',' << shortest(record.val_loss);
    if (run.metric != Metric::None) {
      row << ',' << shortest(mae ? record.val_mae : record.val_accuracy);
    }
  }
  // The optimizer's rate is a float: its own shortest text ("0.001", not 0.0010000000474...).
  if (schedule_) row << ',' << shortest(static_cast<float>(record.learning_rate));
  file_ << row.str() << '\n' << std::flush;  // a plot of a run in progress sees every epoch
  ENGINE_CHECK(file_.good(), "cannot write the CSV log ", path_, ": ", std::strerror(errno));
}

}  // namespace engine::nn

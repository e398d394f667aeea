#include "nn/checkpoint.h"

#include <cstdlib>
#include <utility>
#include <vector>

#include "core/binary_file.h"
#include "core/error.h"
#include "nn/fit_run.h"
#include "nn/weights_io.h"

namespace engine::nn {
namespace {

constexpr char MAGIC[8] = {'E', 'N', 'G', 'C', 'K', 'P', 'N', 'T'};

// Milliseconds to pause after every 64 KiB of a checkpoint write, so that a test can kill -9
// a run in the middle of one (tests/test_checkpoint_cli.sh). 0 unless the variable is set.
int test_write_pause_ms() {
  const char* value = std::getenv("ENGINE_TEST_CHECKPOINT_WRITE_DELAY_MS");
  return value ? std::atoi(value) : 0;
}

void put_record(ByteWriter& out, const EpochRecord& e) {
  out.put<int32_t>(e.epoch);
  out.put<int64_t>(e.steps);
  for (double value : {e.seconds, e.loss, e.accuracy, e.val_loss, e.val_accuracy, e.val_seconds,
                       e.data_wait_seconds}) {
    out.put<double>(value);
  }
}

// The CRC-32 of a tensor's bytes, read on the host (a device's tensor is copied there first).
uint32_t crc32_of_tensor(const Tensor& t) {
  if (!t.device().is_cpu()) return crc32_of_tensor(t.to(Device::cpu()));
  return crc32_of(static_cast<const char*>(t.raw_data()), t.nbytes());
}

EpochRecord get_record(ByteReader& in) {
  EpochRecord e;
  e.epoch = in.get<int32_t>("epoch record");
  e.steps = in.get<int64_t>("epoch record");
  for (double* value : {&e.seconds, &e.loss, &e.accuracy, &e.val_loss, &e.val_accuracy,
                        &e.val_seconds, &e.data_wait_seconds}) {
    *value = in.get<double>("epoch record");
  }
  return e;
}

}  // namespace

uint64_t fingerprint_of(const Dataset& data) {
  return uint64_t{crc32_of_tensor(data.x)} << 32 | crc32_of_tensor(data.y);
}

void refuse_non_finite(const ParameterStore& store, const std::vector<float>& flat,
                       const std::string& path, const std::string& refusal,
                       const std::string& what, const std::string& why) {
  float bad = 0.0f;
  const Parameter* p = first_non_finite(store, flat, &bad);
  ENGINE_CHECK(p == nullptr, path, ": ", refusal, ": ", p->name, " holds ", bad, " in ", what, why);
}

void save_checkpoint(Sequential& model, const TrainingState& state, const std::string& path) {
  const ParameterStore& store = model.parameters();
  Optimizer& optimizer = model.optimizer();
  const std::string refusal = "not saving a checkpoint";
  const std::string kept = " (the previous checkpoint is kept)";
  refuse_non_finite(store, store.values.to_vector(), path, refusal, "the weights", kept);

  ByteWriter out(MAGIC, CHECKPOINT_FORMAT_VERSION);
  out.put<uint64_t>(state.seed);
  out.put<int64_t>(state.batch_size);
  out.put<int64_t>(state.steps_per_epoch);
  out.put<int64_t>(state.data_samples);
  out.put<uint64_t>(state.data_fingerprint);
  out.put<int32_t>(state.epoch);
  out.put<int64_t>(state.step);
  out.put<int64_t>(model.step_counter().to_int_vector()[0]);
  out.put<float>(state.loss_sum);
  out.put<float>(state.correct);
  out.put<int64_t>(state.samples);
  out.put<double>(state.seconds);
  out.put<double>(state.data_wait_seconds);
  out.put<uint32_t>(static_cast<uint32_t>(state.history.size()));
  for (const EpochRecord& e : state.history) put_record(out, e);
  out.blob(state.source_state);
  write_parameter_records(out, store);
  out.string(optimizer.name());
  const auto buffers = optimizer.state(store);
  out.put<uint32_t>(static_cast<uint32_t>(buffers.size()));
  for (const auto& [name, buffer] : buffers) {
    const std::vector<float> values = buffer.to_vector();
    refuse_non_finite(store, values, path, refusal, optimizer.name() + "'s " + name, kept);
    out.string(name);
    out.put<uint64_t>(values.size());
    out.bytes(values.data(), values.size() * sizeof(float));
  }
  const Bytes& file = out.finish();
  write_file_atomically(path, file.data(), file.size(), test_write_pause_ms());
}

TrainingState load_checkpoint(Sequential& model, const std::string& path) {
  ParameterStore& store = model.parameters();
  Optimizer& optimizer = model.optimizer();
  const Bytes file = read_file(path, "checkpoint");
  ENGINE_CHECK(!is_weights_file(file), path,
               ": a weights file (as --save writes it), not a checkpoint");
  ByteReader in(file, MAGIC, CHECKPOINT_FORMAT_VERSION, path, "checkpoint");

  // Everything is read and checked into host memory first; the model changes only at the end.
  TrainingState s;
  s.seed = in.get<uint64_t>("seed");
  s.batch_size = in.get<int64_t>("batch size");
  s.steps_per_epoch = in.get<int64_t>("steps per epoch");
  if (in.version() >= 2) {  // version 1 has no data fingerprint: 0, not checked
    s.data_samples = in.get<int64_t>("training samples");
    s.data_fingerprint = in.get<uint64_t>("data fingerprint");
  }
  s.epoch = in.get<int32_t>("epoch");
  s.step = in.get<int64_t>("step");
  const auto step_counter = in.get<int64_t>("step counter");
  ENGINE_CHECK(s.batch_size >= 1 && s.steps_per_epoch >= 1 && s.epoch >= 1 && s.step >= 0 &&
                   s.step < s.steps_per_epoch && step_counter >= 0 && step_counter <= INT32_MAX,
               path, ": implausible position (epoch ", s.epoch, ", step ", s.step, " of ",
               s.steps_per_epoch, ", batch size ", s.batch_size, ", ", step_counter,
               " optimizer steps)");
  s.loss_sum = in.get<float>("running loss");
  s.correct = in.get<float>("running accuracy");
  s.samples = in.get<int64_t>("running sample count");
  s.seconds = in.get<double>("epoch seconds");
  s.data_wait_seconds = in.get<double>("epoch data wait");
  const auto epochs_done = in.get<uint32_t>("epoch count");
  for (uint32_t i = 0; i < epochs_done; ++i) s.history.push_back(get_record(in));
  s.source_state = in.blob("shuffling state");
  const std::vector<float> values = read_parameter_records(in, store);

  const std::string name = in.string(64, "optimizer name");
  ENGINE_CHECK(name == optimizer.name(), path, ": holds the state of ", name,
               " but the model trains with ", optimizer.name(), " (a different model)");
  // Making the optimizer's buffers (zeroed, as its first step would) is no visible change.
  auto buffers = optimizer.state(store);
  const auto count = in.get<uint32_t>("optimizer buffer count");
  ENGINE_CHECK(count == buffers.size(), path, ": ", count, " ", name, " state buffers, expected ",
               buffers.size());
  std::vector<std::vector<float>> states;
  for (const auto& [expected, buffer] : buffers) {
    const std::string buffer_name = in.string(64, "optimizer buffer name");
    ENGINE_CHECK(buffer_name == expected, path, ": ", name, " state '", buffer_name,
                 "' where '", expected, "' belongs");
    const auto n = in.get<uint64_t>("optimizer buffer size");
    ENGINE_CHECK(n == static_cast<uint64_t>(buffer.numel()), path, ": ", name, " state '",
                 buffer_name, "' holds ", n, " numbers for ", buffer.numel(), " parameters");
    states.emplace_back(static_cast<size_t>(n));
    in.bytes(states.back().data(), n * sizeof(float), "optimizer state");
  }
  in.expect_end("the optimizer state");
  // A NaN or an infinity is never saved (save_checkpoint): such a file was made by hand, and
  // training from it would only spread the NaN.
  const std::string refusal = "refusing the checkpoint", made = " (checkpoints never hold one)";
  refuse_non_finite(store, values, path, refusal, "the weights", made);
  for (size_t i = 0; i < buffers.size(); ++i) {
    refuse_non_finite(store, states[i], path, refusal, name + "'s " + buffers[i].first, made);
  }

  store.values.copy_from(Tensor::from_vector(values, store.values.shape()));
  for (size_t i = 0; i < buffers.size(); ++i) {
    buffers[i].second.copy_from(Tensor::from_vector(states[i], buffers[i].second.shape()));
  }
  model.set_step_counter(step_counter);
  s.file = path;
  return s;
}

TrainingState state_after_fit(const FitOptions& options, const BatchSource& source,
                              const History& history) {
  TrainingState s;
  s.seed = options.seed;
  s.batch_size = global_batch(options);
  s.steps_per_epoch = steps_per_epoch(options, source.size());
  s.data_samples = source.data_size();
  s.data_fingerprint = source.fingerprint();
  s.epoch = history.epochs.empty() ? 1 : history.epochs.back().epoch + 1;
  s.source_state = source.state();  // as it stands after the last epoch
  s.history = history.epochs;
  return s;
}

}  // namespace engine::nn

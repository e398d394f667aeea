// Data parallelism's arithmetic (core/data_parallel.h), on the CPU: the shards, the ranks'
// environment and the GPU rotation. The collective itself runs on the GPU machines
// (tests/test_ranks_gpu.sh).
#include <doctest/doctest.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <condition_variable>
#include <cstdlib>
#include <mutex>
#include <numeric>
#include <string>
#include <thread>
#include <vector>

#include "core/data_parallel.h"
#include "core/error.h"
#include "nn/gradient_buckets.h"
#include "nn/layers.h"
#include "nn/sequential.h"
#include "toy_data.h"

using engine::rank_order;
using engine::rows_per_rank;

namespace {

std::vector<int32_t> iota_order(int64_t n) {
  std::vector<int32_t> order(static_cast<size_t>(n));
  std::iota(order.begin(), order.end(), 0);
  // Any permutation will do; a reversed one shows positions are not confused with rows.
  std::reverse(order.begin(), order.end());
  return order;
}

// Sets or clears environment variables for one test, restoring them at the end.
class Environment {
 public:
  ~Environment() {
    for (const auto& [name, value] : saved_) {
      if (value.empty()) {
        ::unsetenv(name.c_str());
      } else {
        ::setenv(name.c_str(), value.c_str(), 1);
      }
    }
  }
  void set(const std::string& name, const char* value) {
    const char* old = std::getenv(name.c_str());
    saved_.emplace_back(name, old ? old : "");
    if (value) {
      ::setenv(name.c_str(), value, 1);
    } else {
      ::unsetenv(name.c_str());
    }
  }

 private:
  std::vector<std::pair<std::string, std::string>> saved_;
};

const char* const RANK_VARIABLES[] = {"ENGINE_RANK", "ENGINE_WORLD_SIZE", "ENGINE_LOCAL_RANK",
                                      "ENGINE_NCCL_ID_FILE", "OMPI_COMM_WORLD_RANK",
                                      "OMPI_COMM_WORLD_SIZE", "OMPI_COMM_WORLD_LOCAL_RANK"};

}  // namespace

TEST_CASE("rank_order: side by side, the ranks' batches are the batch one GPU takes with B x W") {
  for (const int64_t n : {int64_t{1}, int64_t{7}, int64_t{64}, int64_t{100}, int64_t{1001}}) {
    for (const int world : {1, 2, 3, 4, 8}) {
      for (const int64_t batch : {int64_t{1}, int64_t{5}, int64_t{32}}) {
        INFO("n ", n, " world ", world, " batch ", batch);
        const std::vector<int32_t> order = iota_order(n);
        const int64_t per_rank = rows_per_rank(n, world);
        CHECK(per_rank * world >= n);
        CHECK(per_rank * world < n + world);  // at most world - 1 rows repeated
        std::vector<std::vector<int32_t>> shards;
        for (int r = 0; r < world; ++r) {
          shards.push_back(rank_order(order, batch, r, world));
          REQUIRE(static_cast<int64_t>(shards.back().size()) == per_rank);
        }
        // Step by step: every rank takes as many rows, and rank 0's rows, then rank 1's, ...
        // are the padded order's next B x W (or fewer in the last step).
        const int64_t padded = per_rank * world;
        int64_t position = 0;
        for (int64_t first = 0; first < per_rank; first += batch) {
          const int64_t rows = std::min(batch, per_rank - first);
          for (int r = 0; r < world; ++r) {
            for (int64_t k = 0; k < rows; ++k, ++position) {
              const int32_t expected = order[static_cast<size_t>(position % n)];
              CHECK(shards[static_cast<size_t>(r)][static_cast<size_t>(first + k)] == expected);
            }
          }
        }
        CHECK(position == padded);
      }
    }
  }
}

TEST_CASE("rank_order: a world of one is the order itself; every row is trained on") {
  const std::vector<int32_t> order = iota_order(103);
  CHECK(rank_order(order, 10, 0, 1) == order);
  std::vector<int> seen(order.size(), 0);
  for (int r = 0; r < 4; ++r) {
    for (const int32_t row : rank_order(order, 10, r, 4)) ++seen[static_cast<size_t>(row)];
  }
  // 103 rows over 4 ranks: 104 places, one row twice (the epoch's first, repeated as padding).
  CHECK(std::count(seen.begin(), seen.end(), 0) == 0);
  CHECK(std::accumulate(seen.begin(), seen.end(), 0) == 104);
  CHECK(seen[static_cast<size_t>(order[0])] == 2);
}

TEST_CASE("rank_order refuses a rank outside the world and a batch of 0") {
  const std::vector<int32_t> order = iota_order(10);
  CHECK_THROWS_AS(rank_order(order, 4, 2, 2), engine::Error);
  CHECK_THROWS_AS(rank_order(order, 0, 0, 2), engine::Error);
}

TEST_CASE("ranks_from_environment: ours, Open MPI's, none, and bad values") {
  Environment env;
  for (const char* name : RANK_VARIABLES) env.set(name, nullptr);
  SUBCASE("none: one process, not launched") {
    const engine::ProcessRanks ranks = engine::ranks_from_environment();
    CHECK_FALSE(ranks.launched);
    CHECK(ranks.world == 1);
  }
  SUBCASE("the --gpus launcher's variables") {
    env.set("ENGINE_WORLD_SIZE", "4");
    env.set("ENGINE_RANK", "3");
    env.set("ENGINE_LOCAL_RANK", "3");
    env.set("ENGINE_NCCL_ID_FILE", "/tmp/x.id");
    const engine::ProcessRanks ranks = engine::ranks_from_environment();
    CHECK(ranks.launched);
    CHECK(ranks.world == 4);
    CHECK(ranks.rank == 3);
    CHECK(ranks.local_rank == 3);
    CHECK(ranks.id_file == "/tmp/x.id");
  }
  SUBCASE("mpirun's, with the id file passed by -x") {
    env.set("OMPI_COMM_WORLD_SIZE", "2");
    env.set("OMPI_COMM_WORLD_RANK", "1");
    env.set("OMPI_COMM_WORLD_LOCAL_RANK", "1");
    env.set("ENGINE_NCCL_ID_FILE", "/shared/run.id");
    const engine::ProcessRanks ranks = engine::ranks_from_environment();
    CHECK(ranks.launched);
    CHECK(ranks.rank == 1);
    CHECK(ranks.world == 2);
  }
  SUBCASE("bad values are one line each") {
    env.set("ENGINE_NCCL_ID_FILE", "/tmp/x.id");
    env.set("ENGINE_WORLD_SIZE", "2");
    env.set("ENGINE_RANK", "2");
    CHECK_THROWS_WITH_AS(engine::ranks_from_environment(),
                         doctest::Contains("ENGINE_RANK=2 is not a whole number from 0 to 1"),
                         engine::Error);
    env.set("ENGINE_RANK", "one");
    CHECK_THROWS_AS(engine::ranks_from_environment(), engine::Error);
    env.set("ENGINE_RANK", "0");
    env.set("ENGINE_NCCL_ID_FILE", nullptr);
    CHECK_THROWS_WITH_AS(engine::ranks_from_environment(),
                         doctest::Contains("needs ENGINE_NCCL_ID_FILE"), engine::Error);
  }
}

TEST_CASE("select_rank_gpu: the rank's GPU first, every GPU still visible") {
  Environment env;
  env.set("CUDA_VISIBLE_DEVICES", "4,5,6");
  engine::ProcessRanks ranks;
  ranks.launched = true;
  ranks.world = 3;
  ranks.rank = ranks.local_rank = 1;
  engine::select_rank_gpu(ranks);
  CHECK(std::string(std::getenv("CUDA_VISIBLE_DEVICES")) == "5,6,4");
  CHECK(engine::visible_gpu_count() == 3);
  env.set("CUDA_VISIBLE_DEVICES", "0");
  ranks.rank = ranks.local_rank = 2;
  CHECK_THROWS_WITH_AS(engine::select_rank_gpu(ranks),
                       doctest::Contains("wants GPU 2 of this host, which has 1 visible"),
                       engine::Error);
}

// ---- the whole data-parallel fit, two ranks as two threads on the CPU ----------------------

namespace {

using namespace engine;

// What NCCL does across processes, done across threads with a barrier: every collective
// exchanges the ranks' buffers and combines them in rank order, so every rank gets the same
// bits. start_all_reduce_mean runs at once (there is no second stream on the CPU).
struct ThreadRanks {
  explicit ThreadRanks(int n) : world(n), slots(static_cast<size_t>(n)) {}
  int world;
  std::mutex mutex;
  std::condition_variable changed;
  int arrived = 0;
  int64_t generation = 0;
  std::vector<std::vector<float>> slots;

  void barrier() {
    std::unique_lock<std::mutex> lock(mutex);
    const int64_t mine = generation;
    if (++arrived == world) {
      arrived = 0;
      ++generation;
      changed.notify_all();
    } else {
      changed.wait(lock, [&] { return generation != mine; });
    }
  }
  // Every rank's `values`, in rank order.
  std::vector<std::vector<float>> exchange(int rank, std::vector<float> values) {
    {
      std::lock_guard<std::mutex> lock(mutex);
      slots[static_cast<size_t>(rank)] = std::move(values);
    }
    barrier();
    std::vector<std::vector<float>> all;
    {
      std::lock_guard<std::mutex> lock(mutex);
      all = slots;
    }
    barrier();  // nobody writes the slots again before everyone has read them
    return all;
  }
};

class ThreadCommunicator final : public Communicator {
 public:
  ThreadCommunicator(ThreadRanks& ranks, int rank)
      : Communicator(ProcessRanks{rank, ranks.world, rank, "", true}), ranks_(ranks) {}
  int collectives = 0;  // all-reduces of gradients started

  void all_reduce_sum(Tensor& t) override { combine(t, false); }
  void start_all_reduce_mean(Tensor& t) override {
    ++collectives;
    combine(t, true);
  }
  void join_all_reduces() override {}
  void broadcast(Tensor& t, int root) override {
    const auto all = ranks_.exchange(rank(), t.to_vector());
    t.copy_from(Tensor::from_vector(all[static_cast<size_t>(root)], t.shape()));
  }
  int agree_on_stop(int signal, bool now) override {
    (void)now;  // no queue to drain here: agree at once
    int agreed = 0;
    for (const auto& v : ranks_.exchange(rank(), {static_cast<float>(signal)})) {
      agreed = std::max(agreed, static_cast<int>(v[0]));
    }
    return agreed;
  }
  bool same_on_every_rank(uint32_t value) override {
    const auto all = ranks_.exchange(rank(), {static_cast<float>(value & 0xffff),
                                              static_cast<float>(value >> 16)});
    return std::all_of(all.begin(), all.end(), [&](const auto& v) { return v == all[0]; });
  }

 private:
  void combine(Tensor& t, bool mean) {
    const auto all = ranks_.exchange(rank(), t.to_vector());
    std::vector<float> out(all[0].size(), 0.0f);
    for (const auto& v : all) {
      for (size_t i = 0; i < out.size(); ++i) out[i] += v[i];
    }
    if (mean) {
      for (float& x : out) x /= static_cast<float>(world());
    }
    t.copy_from(Tensor::from_vector(out, t.shape()));
  }
  ThreadRanks& ranks_;
};


}  // namespace

TEST_CASE("data-parallel fit: two ranks of batch 8 train one GPU's batch of 16, the same on both") {
  const nn::Dataset train = test::toy_data(96, 3);
  nn::FitOptions options;
  options.epochs = 2;
  options.seed = 11;
  options.verbose = false;

  nn::Sequential single = test::toy_model();
  options.batch_size = 16;
  const nn::History alone = single.fit(train, options);

  ThreadRanks ranks(2);
  std::vector<std::vector<float>> weights(2);
  std::vector<double> losses(2);
  std::vector<int> collectives(2);
  std::vector<std::thread> threads;
  for (int r = 0; r < 2; ++r) {
    threads.emplace_back([&, r] {
      ThreadCommunicator communicator(ranks, r);
      nn::Sequential model = test::toy_model();
      nn::FitOptions mine = options;
      mine.batch_size = 8;
      mine.communicator = &communicator;
      losses[static_cast<size_t>(r)] = model.fit(train, mine).epochs.back().loss;
      weights[static_cast<size_t>(r)] = model.parameters().values.to_vector();
      collectives[static_cast<size_t>(r)] = communicator.collectives;
    });
  }
  for (std::thread& t : threads) t.join();

  CHECK(weights[0] == weights[1]);  // bit for bit: every rank applied the same update
  CHECK(collectives[0] == 2 * 6);   // one bucket (the toy's gradients are small) per step
  // One GPU's batch of 16 and two ranks of 8 see the same rows and dropout masks; only the
  // order of float additions differs.
  const std::vector<float> expected = single.parameters().values.to_vector();
  REQUIRE(expected.size() == weights[0].size());
  float worst = 0.0f;
  for (size_t i = 0; i < expected.size(); ++i) {
    worst = std::max(worst, std::fabs(expected[i] - weights[0][i]));
  }
  CHECK(worst < 1e-5f);
  CHECK(losses[0] == doctest::Approx(alone.epochs.back().loss).epsilon(1e-5));
  CHECK(losses[0] == losses[1]);  // the epoch's loss is over both ranks' rows
}

TEST_CASE("data-parallel fit: a signal on one rank stops every rank after the same step") {
  const nn::Dataset train = test::toy_data(96, 3);
  ThreadRanks ranks(2);
  std::vector<nn::History> histories(2);
  std::vector<std::thread> threads;
  for (int r = 0; r < 2; ++r) {
    threads.emplace_back([&, r] {
      ThreadCommunicator communicator(ranks, r);
      nn::Sequential model = test::toy_model();
      std::atomic<int> signal{r == 1 ? 15 : 0};  // rank 1 alone saw SIGTERM
      nn::FitOptions options;
      options.epochs = 3;
      options.batch_size = 8;
      options.verbose = false;
      options.communicator = &communicator;
      options.stop_signal = &signal;
      histories[static_cast<size_t>(r)] = model.fit(train, options);
    });
  }
  for (std::thread& t : threads) t.join();
  for (const nn::History& h : histories) {
    CHECK(h.interrupted_by == 15);
    CHECK(h.stopped_epoch == histories[0].stopped_epoch);
    CHECK(h.stopped_step == histories[0].stopped_step);
  }
}

TEST_CASE("GradientBuckets: buckets from the buffer's end cover every gradient once") {
  nn::Sequential model = test::toy_model();  // kernels 6x16, 16x2 and their biases: 146
  struct Recording final : Communicator {
    Recording() : Communicator(ProcessRanks{0, 2, 0, "", true}) {}
    std::vector<std::pair<int64_t, int64_t>> started;  // (offset, count)
    const float* base = nullptr;
    int joins = 0;
    void all_reduce_sum(Tensor&) override {}
    void start_all_reduce_mean(Tensor& t) override {
      started.emplace_back(t.data<float>() - base, t.numel());
    }
    void join_all_reduces() override { ++joins; }
    void broadcast(Tensor&, int) override {}
    int agree_on_stop(int signal, bool) override { return signal; }
    bool same_on_every_rank(uint32_t) override { return true; }
  } recording;
  nn::ParameterStore& store = model.parameters();
  recording.base = store.grads.data<float>();
  // 40 bytes: each bucket closes at its first parameter of 10 floats or more.
  nn::GradientBuckets buckets(recording, store, 40);
  for (auto p = store.params.rbegin(); p != store.params.rend(); ++p) buckets.leaf_written(p->value);
  buckets.finish();
  CHECK(recording.joins == 1);
  // Backward's order: dense_1/bias (2) + dense_1/kernel (32), then dense/bias (16), then
  // dense/kernel (96); together the whole buffer, each element once, from the end down.
  const std::vector<std::pair<int64_t, int64_t>> expected = {{112, 34}, {96, 16}, {0, 96}};
  CHECK(recording.started == expected);
  // A parameter written again after its bucket left: refused, not silently wrong.
  CHECK_THROWS_AS(buckets.leaf_written(store.params.back().value), engine::Error);
}

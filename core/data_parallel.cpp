#include "core/data_parallel.h"

#include <dirent.h>

#include <algorithm>
#include <cstdlib>
#include <sstream>

#include "core/error.h"

#if defined(ENGINE_WITH_NCCL)
#include "kernels/nccl_communicator.h"
#endif

namespace engine {

namespace {

// The variable's value as a whole number in [lo, hi]; `fallback` when it is not set.
int env_int(const char* name, int fallback, int lo, int hi) {
  const char* text = std::getenv(name);
  if (text == nullptr) return fallback;
  char* end = nullptr;
  const long value = std::strtol(text, &end, 10);
  ENGINE_CHECK(*text != '\0' && *end == '\0' && value >= lo && value <= hi, name, "=", text,
               " is not a whole number from ", lo, " to ", hi);
  return static_cast<int>(value);
}

// The first of `names` that is set, or nullptr.
const char* first_set(std::initializer_list<const char*> names) {
  for (const char* name : names) {
    if (std::getenv(name) != nullptr) return name;
  }
  return nullptr;
}

// The GPUs this process may see, as CUDA_VISIBLE_DEVICES names them: its list where it is set,
// else 0 .. count - 1 for the GPUs the driver lists (read without starting CUDA, which would
// fix the visible devices before they are rotated).
std::vector<std::string> visible_gpus() {
  std::vector<std::string> gpus;
  if (const char* list = std::getenv("CUDA_VISIBLE_DEVICES")) {
    std::stringstream in(list);
    for (std::string item; std::getline(in, item, ',');) gpus.push_back(item);
    return gpus;
  }
  int count = 0;
  if (DIR* dir = ::opendir("/proc/driver/nvidia/gpus")) {
    while (const dirent* entry = ::readdir(dir)) count += entry->d_name[0] != '.';
    ::closedir(dir);
  }
  for (int i = 0; i < count; ++i) gpus.push_back(std::to_string(i));
  return gpus;
}

}  // namespace

ProcessRanks ranks_from_environment() {
  ProcessRanks ranks;
  const char* world_name = first_set({"ENGINE_WORLD_SIZE", "OMPI_COMM_WORLD_SIZE"});
  if (world_name == nullptr) return ranks;
  const bool ours = std::string(world_name) == "ENGINE_WORLD_SIZE";
  constexpr int MAX_RANKS = 4096;
  ranks.world = env_int(world_name, 1, 1, MAX_RANKS);
  ranks.rank = env_int(ours ? "ENGINE_RANK" : "OMPI_COMM_WORLD_RANK", -1, 0, ranks.world - 1);
  ENGINE_CHECK(ranks.rank >= 0, world_name, " is set but not ",
               ours ? "ENGINE_RANK" : "OMPI_COMM_WORLD_RANK");
  ranks.local_rank = env_int(ours ? "ENGINE_LOCAL_RANK" : "OMPI_COMM_WORLD_LOCAL_RANK",
                             ranks.rank, 0, ranks.world - 1);
  const char* id_file = std::getenv("ENGINE_NCCL_ID_FILE");
  ENGINE_CHECK(id_file != nullptr && *id_file != '\0',
               "a run of ", ranks.world, " ranks needs ENGINE_NCCL_ID_FILE: a file path all ranks "
               "can see, where rank 0 leaves NCCL's unique id (e.g. mpirun -x "
               "ENGINE_NCCL_ID_FILE=/tmp/run.id ...)");
  ranks.id_file = id_file;
  ranks.launched = true;
  return ranks;
}

void select_rank_gpu(const ProcessRanks& ranks) {
  if (!ranks.launched || ranks.local_rank == 0) return;
  const std::vector<std::string> gpus = visible_gpus();
  ENGINE_CHECK(static_cast<size_t>(ranks.local_rank) < gpus.size(), "rank ", ranks.rank,
               " wants GPU ", ranks.local_rank, " of this host, which has ", gpus.size(),
               " visible");
  std::string rotated;
  for (size_t i = 0; i < gpus.size(); ++i) {
    if (i > 0) rotated += ',';
    rotated += gpus[(i + static_cast<size_t>(ranks.local_rank)) % gpus.size()];
  }
  ::setenv("CUDA_VISIBLE_DEVICES", rotated.c_str(), 1);
}

int visible_gpu_count() { return static_cast<int>(visible_gpus().size()); }

int64_t rows_per_rank(int64_t n, int world) {
  ENGINE_CHECK(n >= 0 && world >= 1, "rows_per_rank(", n, ", ", world, ")");
  return (n + world - 1) / world;
}

std::vector<int32_t> rank_order(const std::vector<int32_t>& order, int64_t batch, int rank,
                                int world) {
  ENGINE_CHECK(batch >= 1 && world >= 1 && rank >= 0 && rank < world, "rank_order: batch ",
               batch, ", rank ", rank, " of ", world);
  const int64_t n = static_cast<int64_t>(order.size());
  const int64_t per_rank = rows_per_rank(n, world);
  const int64_t padded = per_rank * world;
  // Position p of the padded order: the epoch's order, then its first rows again.
  const auto row_at = [&](int64_t p) { return order[static_cast<size_t>(p % n)]; };
  std::vector<int32_t> mine;
  mine.reserve(static_cast<size_t>(per_rank));
  for (int64_t start = 0; start < padded; start += batch * world) {
    const int64_t rows = std::min(batch, (padded - start) / world);  // this step's, per rank
    const int64_t first = start + rank * rows;
    for (int64_t k = 0; k < rows; ++k) mine.push_back(row_at(first + k));
  }
  return mine;
}

bool built_with_nccl() {
#if defined(ENGINE_WITH_NCCL)
  return true;
#else
  return false;
#endif
}

std::unique_ptr<Communicator> connect_ranks(const ProcessRanks& ranks, Device device,
                                            double timeout_seconds) {
  ENGINE_CHECK(!device.is_cpu(), "data-parallel training runs on GPUs (--gpu); the CPU has ",
               "no NCCL");
#if defined(ENGINE_WITH_NCCL)
  return cuda::connect_nccl(ranks, timeout_seconds);
#else
  (void)ranks, (void)timeout_seconds;
  throw Error("this build has no NCCL (nccl.h and libnccl were not found when it was "
              "configured), so it cannot train on several GPUs");
#endif
}

}  // namespace engine

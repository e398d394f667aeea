// NCCL behind core/data_parallel.h's Communicator. Connecting: rank 0 asks NCCL for a unique
// id (which names a listening socket in rank 0's process), leaves it in a file, and every
// rank passes it to ncclCommInitRank, which returns once all ranks have joined.
#include "kernels/nccl_communicator.h"

#include <nccl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <array>
#include <chrono>
#include <thread>

#include "core/binary_file.h"
#include "core/error.h"
#include "kernels/cuda_check.h"
#include "kernels/launch.h"

namespace engine::cuda {

namespace {

#define CHECK_NCCL(call)                                                                      \
  do {                                                                                        \
    const ncclResult_t status_ = (call);                                                      \
    ENGINE_CHECK(status_ == ncclSuccess, "NCCL error: ", #call, " failed: ",                  \
                 ncclGetErrorString(status_), " (", ncclGetLastError(nullptr), ")");          \
  } while (0)

// Rank 0 leaves the id in the file; the others wait for one made after they started waiting
// (less a minute, for a rank 0 that wrote it before they began): an older file is a crashed
// run's, which rank 0 did not get to remove.
ncclUniqueId exchange_id(const ProcessRanks& ranks, double timeout_seconds) {
  ncclUniqueId id;
  if (ranks.rank == 0) {
    CHECK_NCCL(ncclGetUniqueId(&id));
    write_file_atomically(ranks.id_file, id.internal, sizeof id.internal);
    return id;
  }
  const auto start = std::chrono::system_clock::now();
  const auto deadline = std::chrono::steady_clock::now() +
                        std::chrono::duration<double>(timeout_seconds);
  const auto oldest = std::chrono::system_clock::to_time_t(start) - 60;
  for (;;) {
    struct stat st;
    if (::stat(ranks.id_file.c_str(), &st) == 0 && st.st_mtime >= oldest &&
        st.st_size == static_cast<off_t>(sizeof id.internal)) {
      const Bytes bytes = read_file(ranks.id_file, "NCCL id");
      if (bytes.size() == sizeof id.internal) {
        std::copy(bytes.begin(), bytes.end(), id.internal);
        return id;
      }
    }
    ENGINE_CHECK(std::chrono::steady_clock::now() < deadline, "rank ", ranks.rank, ": rank 0 did ",
                 "not leave NCCL's id in ", ranks.id_file, " within ", timeout_seconds,
                 " s (did rank 0 start? does every rank see that file?)");
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
}

class NcclCommunicator final : public Communicator {
 public:
  NcclCommunicator(const ProcessRanks& ranks, double timeout_seconds) : Communicator(ranks) {
    const ncclUniqueId id = exchange_id(ranks, timeout_seconds);
    CHECK_NCCL(ncclCommInitRank(&comm_, ranks.world, id, ranks.rank));
    // Every rank has read the id now (joining needed it): no later run can mistake it for its own.
    if (ranks.rank == 0) ::unlink(ranks.id_file.c_str());
    CHECK_CUDA(cudaMalloc(&flags_device_, sizeof(int) * SLOTS));
    CHECK_CUDA(cudaMallocHost(&flags_host_, sizeof(int) * SLOTS));
    for (cudaEvent_t& event : flag_ready_) {
      CHECK_CUDA(cudaEventCreateWithFlags(&event, cudaEventDisableTiming | cudaEventBlockingSync));
    }
    CHECK_CUDA(cudaStreamCreateWithFlags(&side_, cudaStreamNonBlocking));
    CHECK_CUDA(cudaEventCreateWithFlags(&fork_, cudaEventDisableTiming));
    CHECK_CUDA(cudaEventCreateWithFlags(&join_, cudaEventDisableTiming));
  }
  ~NcclCommunicator() override {
    cudaEventDestroy(join_);
    cudaEventDestroy(fork_);
    cudaStreamDestroy(side_);
    for (cudaEvent_t event : flag_ready_) cudaEventDestroy(event);
    cudaFreeHost(flags_host_);
    cudaFree(flags_device_);
    ncclCommDestroy(comm_);
  }

  void start_all_reduce_mean(Tensor& t) override {
    CHECK_CUDA(cudaEventRecord(fork_, stream()));  // the gradients were queued before this
    CHECK_CUDA(cudaStreamWaitEvent(side_, fork_, 0));
    all_reduce(t, ncclAvg, side_);
    pending_ = true;
  }

  void join_all_reduces() override {
    if (!pending_) return;
    CHECK_CUDA(cudaEventRecord(join_, side_));
    CHECK_CUDA(cudaStreamWaitEvent(stream(), join_, 0));
    pending_ = false;
  }
  void all_reduce_sum(Tensor& t) override { all_reduce(t, ncclSum, stream()); }

  void broadcast(Tensor& t, int root) override {
    check_tensor(t);
    CHECK_NCCL(ncclBroadcast(t.raw_data(), t.raw_data(), static_cast<size_t>(t.numel()),
                             ncclFloat32, root, comm_, stream()));
  }

  bool same_on_every_rank(uint32_t value) override {
    // The largest and the smallest value over the ranks (the smallest as the largest of the
    // complements): equal exactly when every rank has the same.
    uint32_t host[2] = {value, ~value};
    uint32_t* device = nullptr;
    CHECK_CUDA(cudaMallocAsync(reinterpret_cast<void**>(&device), sizeof host, stream()));
    CHECK_CUDA(cudaMemcpyAsync(device, host, sizeof host, cudaMemcpyHostToDevice, stream()));
    CHECK_NCCL(ncclAllReduce(device, device, 2, ncclUint32, ncclMax, comm_, stream()));
    CHECK_CUDA(cudaMemcpyAsync(host, device, sizeof host, cudaMemcpyDeviceToHost, stream()));
    CHECK_CUDA(cudaFreeAsync(device, stream()));
    CHECK_CUDA(cudaStreamSynchronize(stream()));
    return host[0] == static_cast<uint32_t>(~host[1]);
  }

  int agree_on_stop(int signal, bool now) override {
    if (world() == 1) return signal;
    // Call k reduces its signal in slot k % SLOTS and reads the answer of call k - LAG, whose
    // slot is not the one being written: the host waits for work LAG steps old.
    const int slot = static_cast<int>(calls_ % SLOTS);
    flags_host_[slot] = signal;
    int* device_flag = flags_device_ + slot;
    CHECK_CUDA(cudaMemcpyAsync(device_flag, flags_host_ + slot, sizeof(int),
                               cudaMemcpyHostToDevice, stream()));
    CHECK_NCCL(ncclAllReduce(device_flag, device_flag, 1, ncclInt32, ncclMax, comm_, stream()));
    CHECK_CUDA(cudaMemcpyAsync(flags_host_ + slot, device_flag, sizeof(int),
                               cudaMemcpyDeviceToHost, stream()));
    CHECK_CUDA(cudaEventRecord(flag_ready_[slot], stream()));
    ++calls_;
    if (now) {
      // Signals only ever appear, so this call's answer covers the earlier ones still pending.
      CHECK_CUDA(cudaEventSynchronize(flag_ready_[slot]));
      const int agreed = flags_host_[slot];
      calls_ = 0;
      return agreed;
    }
    if (calls_ <= LAG) return 0;
    const int answered = static_cast<int>((calls_ - 1 - LAG) % SLOTS);
    CHECK_CUDA(cudaEventSynchronize(flag_ready_[answered]));
    return flags_host_[answered];
  }

 private:
  static constexpr int LAG = 2;
  static constexpr int SLOTS = LAG + 1;

  void check_tensor(const Tensor& t) const {
    ENGINE_CHECK(t.dtype() == DType::F32 && !t.device().is_cpu(),
                 "NCCL collectives here take F32 tensors on the GPU");
  }
  void all_reduce(Tensor& t, ncclRedOp_t op, cudaStream_t on) {
    check_tensor(t);
    CHECK_NCCL(ncclAllReduce(t.raw_data(), t.raw_data(), static_cast<size_t>(t.numel()),
                             ncclFloat32, op, comm_, on));
  }

  ncclComm_t comm_ = nullptr;
  int* flags_device_ = nullptr;
  int* flags_host_ = nullptr;  // pinned
  std::array<cudaEvent_t, SLOTS> flag_ready_{};
  // The gradients' all-reduces run on their own stream while the backward pass goes on.
  cudaStream_t side_ = nullptr;
  cudaEvent_t fork_ = nullptr, join_ = nullptr;
  bool pending_ = false;
  int64_t calls_ = 0;  // since the last agreement made `now`
};

}  // namespace

std::unique_ptr<Communicator> connect_nccl(const ProcessRanks& ranks, double timeout_seconds) {
  return std::make_unique<NcclCommunicator>(ranks, timeout_seconds);
}

}  // namespace engine::cuda

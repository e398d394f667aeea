// Data parallelism: one process per GPU, each training the same model on its own shard of
// every batch, the gradients averaged across the processes ("ranks") after each backward pass
// so every rank applies the same update and the weights stay identical everywhere.
//
//   global batch of step s (B x W rows of the epoch's order, W = world size):
//     | rank 0: B rows | rank 1: B rows | ... | rank W-1: B rows |
//   each rank: forward + backward on its B rows -> all-reduce(mean) of the gradients
//              -> the same optimizer step on every rank
//
// The arithmetic of the shards is here (pure functions, tested on the CPU); the collective
// itself is NCCL's (kernels/nccl_communicator.cpp), behind the Communicator interface.
#pragma once
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "core/device.h"
#include "core/tensor.h"

namespace engine {

// Who this process is among the ranks of a data-parallel run.
struct ProcessRanks {
  int rank = 0;        // 0 .. world - 1; rank 0 prints, saves and writes the records
  int world = 1;       // the number of processes (one GPU each)
  int local_rank = 0;  // the rank among those on this host: which GPU it takes
  // Where rank 0 leaves NCCL's unique id for the others to read (a file all ranks can see).
  std::string id_file;
  // Whether the process was started as a rank (by --gpus N or by mpirun), even of a world of
  // one: the gradients then go through NCCL.
  bool launched = false;
};

// The ranks from the environment: ENGINE_RANK, ENGINE_WORLD_SIZE, ENGINE_LOCAL_RANK and
// ENGINE_NCCL_ID_FILE (set by the --gpus launcher, apps/common/rank_launcher.h), or Open MPI's
// OMPI_COMM_WORLD_RANK / _SIZE / _LOCAL_RANK under mpirun (with ENGINE_NCCL_ID_FILE passed by
// `mpirun -x`). Not launched (world 1) when none is set. Throws engine::Error, one line, for
// values that are not numbers, out of range, or disagree.
ProcessRanks ranks_from_environment();

// Makes this process's GPU (visible device `local_rank`) the CUDA device 0, before CUDA starts:
// CUDA_VISIBLE_DEVICES is rotated so that every GPU stays visible (NCCL moves data between
// processes' GPUs through CUDA IPC, which needs the peer visible) with this rank's first.
// Throws when there are fewer GPUs than local_rank + 1. Does nothing for a world of one
// started on the first GPU.
void select_rank_gpu(const ProcessRanks& ranks);

// The GPUs this process may use, counted without starting CUDA: CUDA_VISIBLE_DEVICES' list
// where it is set, else the GPUs the NVIDIA driver lists (/proc/driver/nvidia/gpus).
int visible_gpu_count();

// ---- the shards --------------------------------------------------------------------------

// The rows each rank trains on per epoch: the data set padded to a multiple of the world size
// (by repeating the epoch's first rows, at most world - 1 of them), then split evenly, so that
// every rank runs the same number of steps with the same batch sizes. n rows, world 1: n.
int64_t rows_per_rank(int64_t n, int world);

// This rank's part of the epoch's `order` (a permutation of the n rows), in the order its
// steps take them: for each global step s of `batch` x world rows, the rank's contiguous slice
// of it. Step s of rank r trains on global positions [s*B*W + r*c, s*B*W + (r+1)*c), c being
// the step's rows per rank (B, or less in the last step): the ranks' batches, side by side,
// are exactly the batch one GPU would take with batch B x W.
std::vector<int32_t> rank_order(const std::vector<int32_t>& order, int64_t batch, int rank,
                                int world);

// ---- the collective ----------------------------------------------------------------------

// The ranks' connection. Every call is collective: every rank must make it, in the same order,
// or the run hangs (the launcher then stops it: apps/common/rank_launcher.h).
class Communicator {
 public:
  virtual ~Communicator() = default;
  int rank() const { return ranks_.rank; }
  int world() const { return ranks_.world; }

  // In place, on the device's stream (so a CUDA graph records it with the step): each element
  // becomes its sum over the ranks (the epoch's loss sums). F32 tensors on this rank's GPU.
  virtual void all_reduce_sum(Tensor& t) = 0;
  // In place, each element becomes its mean over the ranks (a bucket of gradients), on the
  // communicator's own stream, after the work queued so far: the work queued next (the rest of
  // the backward pass) runs meanwhile. join_all_reduces() makes the work queued after it wait
  // for every all-reduce started so far. Both record into a CUDA graph like the rest (a fork
  // and a join of the two streams).
  virtual void start_all_reduce_mean(Tensor& t) = 0;
  virtual void join_all_reduces() = 0;
  // Rank `root`'s values to every rank (the weights at the start, so all ranks begin equal).
  virtual void broadcast(Tensor& t, int root) = 0;
  // Whether any rank should stop (the largest signal number any rank saw, 0: none), agreed so
  // that all ranks stop after the same step. Called once per step with the rank's own signal;
  // the answer is the one agreed `lag` calls earlier, so the host waits only for work `lag`
  // steps old (done long ago) instead of draining the queue every step. `now` agrees on this
  // call's signals (at an epoch's end, where the queue is drained anyway).
  virtual int agree_on_stop(int signal, bool now) = 0;
  // Whether every rank passed the same `value` (a checksum of its weights, say).
  virtual bool same_on_every_rank(uint32_t value) = 0;

 protected:
  explicit Communicator(const ProcessRanks& ranks) : ranks_(ranks) {}
  ProcessRanks ranks_;
};

// Whether this build has NCCL (CMake found it): without it, only a world of one.
bool built_with_nccl();

// Connects the ranks through NCCL on `device` (rank 0 writes the unique id to ranks.id_file,
// the others wait for it, at most `timeout_seconds`). Throws engine::Error, one line, where
// this build has no NCCL, the device is the CPU, or the ranks do not connect in time.
std::unique_ptr<Communicator> connect_ranks(const ProcessRanks& ranks, Device device,
                                            double timeout_seconds = 120.0);

}  // namespace engine

// --gpus N: one training process per GPU on this host, NCCL between them (core/data_parallel.h).
//
//   mnist_cnn --gpu --gpus 2 ...        this process (the launcher) starts two copies of
//     rank 0: mnist_cnn --gpu --gpus 2 ...   itself with ENGINE_RANK / ENGINE_WORLD_SIZE /
//     rank 1: (the same; its stdout muted)   ENGINE_NCCL_ID_FILE set, waits for them, and
//                                            exits with their status
//
// The same app started by `mpirun -np N -x ENGINE_NCCL_ID_FILE=/tmp/run.id` needs no launcher:
// each copy finds its rank in Open MPI's variables (ranks_from_environment). No MPI is needed
// for --gpus.
#pragma once
#include <optional>

#include "apps/common/app_options.h"
#include "core/data_parallel.h"
#include "nn/sequential.h"

namespace engine::apps {

// Thrown by start_training in the launcher once its ranks have ended: run_app returns
// `status` (rank 0's, or the first failing rank's).
struct RanksFinished {
  int status;
};

// Starts `gpus` ranks running this process's own command line (/proc/self/cmdline) and waits
// for them. SIGINT and SIGTERM sent to the launcher (Ctrl-C) go to every rank once, so all
// stop after the same step and rank 0 saves the checkpoint. When a rank fails (a non-zero
// status other than a requested stop, or a signal), the launcher says so in one line and stops
// the others: SIGTERM, then SIGKILL after a few seconds, since a rank waiting in a collective
// for a dead peer never returns by itself. Throws UsageError for more GPUs than the host has,
// or a build without NCCL.
int launch_ranks(int gpus);

// In start_training: if this process is a rank (launched by --gpus or mpirun), takes its GPU
// (select_rank_gpu, before CUDA starts) and, on ranks other than 0, clears the options that
// write files (--save, --save-model, --json, --log-csv, --save-best): rank 0 writes for all.
// Checks that --gpus, where given, agrees with the world size. Returns the ranks.
ProcessRanks join_ranks(CommonOptions& options);

// In a rank: connects the ranks through NCCL on `device` (every rank must call it). Nothing in
// a process that is not a rank.
void connect_rank_communicator(Device device);
// The ranks' communicator once connected; nullptr in a process that is not a rank.
Communicator* rank_communicator();
// Whether this process writes the run's files: one that is not a rank, or rank 0.
bool writes_files();

// After training, in a rank: checks that every rank holds the same weights (their CRC-32s
// compared through NCCL) and says so on `out` ("Ranks: the weights are identical on all 2
// ranks (CRC-32 8a0f33c1)"); throws engine::Error where they differ. Nothing elsewhere.
void check_ranks_agree(const nn::Sequential& model, std::ostream& out);

}  // namespace engine::apps

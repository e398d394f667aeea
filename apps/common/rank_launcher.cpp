#include "apps/common/rank_launcher.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstring>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <iterator>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "core/binary_file.h"
#include "core/error.h"

namespace engine::apps {

namespace {

// This process's command line, as it was started: the ranks run exactly that.
std::vector<std::string> own_command_line() {
  std::ifstream in("/proc/self/cmdline", std::ios::binary);
  const std::string all((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  std::vector<std::string> args;
  for (size_t start = 0; start < all.size();) {
    const size_t end = all.find('\0', start);
    args.push_back(all.substr(start, end - start));
    start = end == std::string::npos ? all.size() : end + 1;
  }
  return args;
}

// The signal the launcher received (0: none): a handler may only store it.
std::atomic<int> g_forward{0};
extern "C" void remember_signal(int signal) { g_forward.store(signal); }

// The environment of rank `rank`: this process's, with the rank's variables set.
std::vector<std::string> rank_environment(int rank, int world, const std::string& id_file) {
  const std::vector<std::pair<std::string, std::string>> ours = {
      {"ENGINE_RANK", std::to_string(rank)},
      {"ENGINE_LOCAL_RANK", std::to_string(rank)},
      {"ENGINE_WORLD_SIZE", std::to_string(world)},
      {"ENGINE_NCCL_ID_FILE", id_file}};
  std::vector<std::string> env;
  for (char** e = environ; *e != nullptr; ++e) {
    const std::string entry = *e;
    bool replaced = false;
    for (const auto& var : ours) replaced = replaced || entry.rfind(var.first + "=", 0) == 0;
    if (!replaced) env.push_back(entry);
  }
  for (const auto& var : ours) env.push_back(var.first + "=" + var.second);
  return env;
}

std::vector<char*> pointers(std::vector<std::string>& strings) {
  std::vector<char*> p;
  for (std::string& s : strings) p.push_back(s.data());
  p.push_back(nullptr);
  return p;
}

// Starts rank `rank` of `world` in process group `group` (0: a new one, led by this rank),
// apart from the terminal's, so that Ctrl-C reaches the launcher alone, which passes it on
// once (a second SIGINT would stop a rank at once, without its checkpoint).
pid_t start_rank(std::vector<std::string> args, int rank, int world, const std::string& id_file,
                 pid_t group) {
  std::vector<std::string> env = rank_environment(rank, world, id_file);
  const std::vector<char*> argv = pointers(args), envp = pointers(env);
  const pid_t pid = ::fork();
  ENGINE_CHECK(pid >= 0, "--gpus: cannot start rank ", rank, " (fork failed)");
  if (pid > 0) {
    ::setpgid(pid, group == 0 ? pid : group);  // also here: before any kill(-group) below
    return pid;
  }
  // The child: only async-signal-safe calls from here to exec, which runs the app again.
  ::setpgid(0, group);
  if (rank != 0) {  // one progress line on the terminal, rank 0's; errors still show
    const int quiet = ::open("/dev/null", O_WRONLY);
    if (quiet >= 0) ::dup2(quiet, STDOUT_FILENO);
  }
  ::execve("/proc/self/exe", argv.data(), envp.data());
  ::_exit(127);
}

// "exited with status 1", "was killed by SIGKILL".
std::string how_it_ended(int status) {
  if (WIFEXITED(status)) return "exited with status " + std::to_string(WEXITSTATUS(status));
  return "was killed by signal " + std::to_string(WTERMSIG(status)) + " (" +
         ::strsignal(WTERMSIG(status)) + ")";
}

// A shell's exit status for a wait status: the code, or 128 + the signal.
int exit_status(int status) {
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

ProcessRanks g_ranks;
std::unique_ptr<Communicator> g_communicator;

}  // namespace

int launch_ranks(int gpus) {
  if (!built_with_nccl()) {
    throw UsageError("--gpus: this build has no NCCL (install NCCL, e.g. Debian's libnccl-dev, "
                     "and configure again)");
  }
  const int available = visible_gpu_count();
  if (gpus > available) {
    throw UsageError("--gpus " + std::to_string(gpus) + ": this host has " +
                     std::to_string(available) + " GPU" + (available == 1 ? "" : "s"));
  }
  char folder[] = "/tmp/engine-ranks-XXXXXX";
  ENGINE_CHECK(::mkdtemp(folder) != nullptr, "--gpus: cannot make a folder for NCCL's id in /tmp");
  const std::string id_file = std::string(folder) + "/nccl.id";
  const std::vector<std::string> args = own_command_line();

  struct sigaction forward {}, old_int {}, old_term {};
  forward.sa_handler = remember_signal;
  sigemptyset(&forward.sa_mask);
  ::sigaction(SIGINT, &forward, &old_int);
  ::sigaction(SIGTERM, &forward, &old_term);

  std::vector<pid_t> ranks;
  for (int r = 0; r < gpus; ++r) {
    ranks.push_back(start_rank(args, r, gpus, id_file, r == 0 ? 0 : ranks[0]));
  }
  const pid_t group = ranks[0];
  int result = -1, alive = gpus;
  bool forwarded = false, stopping = false;
  auto kill_after = std::chrono::steady_clock::time_point::max();
  while (alive > 0) {
    if (const int signal = g_forward.exchange(0); signal != 0) {
      ::kill(-group, signal);  // once: every rank stops after the same step and says so
      forwarded = true;
    }
    int status = 0;
    const pid_t pid = ::waitpid(-1, &status, WNOHANG);
    if (pid > 0) {
      --alive;
      int rank = 0;
      while (ranks[static_cast<size_t>(rank)] != pid) ++rank;
      const bool asked_to_stop = forwarded && WIFEXITED(status) &&
                                 (WEXITSTATUS(status) == 130 || WEXITSTATUS(status) == 143);
      const bool failed = !(WIFEXITED(status) && WEXITSTATUS(status) == 0) && !asked_to_stop;
      if (failed && !stopping) {
        std::cerr << "rank " << rank << " of " << gpus << " " << how_it_ended(status)
                  << "; stopping the other ranks\n";
        ::kill(-group, SIGTERM);
        stopping = true;
        kill_after = std::chrono::steady_clock::now() + std::chrono::seconds(5);
        result = exit_status(status);
      }
      if (rank == 0 && result < 0) result = exit_status(status);
      continue;
    }
    if (stopping && std::chrono::steady_clock::now() > kill_after) {
      ::kill(-group, SIGKILL);  // stuck in a collective with a dead peer
      kill_after = std::chrono::steady_clock::time_point::max();
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  ::sigaction(SIGINT, &old_int, nullptr);
  ::sigaction(SIGTERM, &old_term, nullptr);
  std::error_code ignored;
  std::filesystem::remove_all(folder, ignored);
  return result;
}

ProcessRanks join_ranks(CommonOptions& options) {
  g_ranks = ranks_from_environment();
  if (!g_ranks.launched) return g_ranks;
  if (options.gpus > 0 && options.gpus != g_ranks.world) {
    throw UsageError("--gpus " + std::to_string(options.gpus) + " but this is rank " +
                     std::to_string(g_ranks.rank) + " of " + std::to_string(g_ranks.world));
  }
  select_rank_gpu(g_ranks);
  if (g_ranks.rank != 0) {
    for (std::string* output : {&options.save_path, &options.save_model_path, &options.json_path,
                                &options.log_csv, &options.save_best_path}) {
      output->clear();
    }
  }
  return g_ranks;
}

void connect_rank_communicator(Device device) {
  if (!g_ranks.launched || g_communicator) return;
  g_communicator = connect_ranks(g_ranks, device);
  // NCCL must let go of the GPU before CUDA's own exit handler tears the runtime down, which
  // CUDA registered when it started, before this: handlers run last registered, first.
  std::atexit([] { g_communicator.reset(); });
}

Communicator* rank_communicator() { return g_communicator.get(); }

bool writes_files() { return !g_ranks.launched || g_ranks.rank == 0; }

void check_ranks_agree(const nn::Sequential& model, std::ostream& out) {
  if (!g_communicator) return;
  const std::vector<float> weights = model.parameters().values.to_vector();
  const uint32_t crc = crc32_of(reinterpret_cast<const char*>(weights.data()),
                                weights.size() * sizeof(float));
  ENGINE_CHECK(g_communicator->same_on_every_rank(crc), "the ranks' weights differ after "
               "training (rank ", g_ranks.rank, "'s CRC-32 is ", crc, "): a bug, please report it");
  char hex[9];
  std::snprintf(hex, sizeof hex, "%08x", crc);
  out << "Ranks: the weights are identical on all " << g_ranks.world << " ranks (CRC-32 " << hex
      << ")\n";
}

}  // namespace engine::apps

// --breakdown's report: for each epoch, where its wall time went (nn/epoch_breakdown.h), as
// numbers and as a one-line bar; and the --json fields of an epoch's breakdown and memory.
//   epoch  3: 0.084 s = data 0.000 | h2d 0.000 | gpu 0.081 | d2h 0.000 | eval 0.000 | other 0.003
//             [######################################..] measured 96.4%
// (one line in the output). On the CPU the device's parts are named for what they are there:
// input, compute and reads (a read is a copy within host memory).
#pragma once
#include <iosfwd>
#include <nlohmann/json.hpp>
#include <string>

#include "core/device.h"
#include "nn/training.h"

namespace engine::apps {

// `width` characters, one run per part in the line's order, each as long as its share of the
// wall (rounded by largest remainders, so that the runs fill the width exactly; a negative
// remainder, measured parts a hair over the wall, counts as none):
//   ~ data   > input (h2d)   # compute (gpu)   < reads (d2h)   = eval   . other
std::string breakdown_bar(const nn::EpochBreakdown& b, int width = 40);

// "0.084 s = data 0.000 | h2d 0.000 | gpu 0.081 | ... | other 0.003 [bar] measured 96.4%"; the
// parts named for a GPU or for the CPU.
std::string breakdown_line(const nn::EpochBreakdown& b, bool gpu);

// The table of every epoch that has a breakdown, their sum, what is measured and what is the
// remainder, how many steps ran op by op, the timers' reading cost; then the memory after the
// first and the last epoch. Nothing when no epoch has a breakdown.
void print_breakdown(std::ostream& out, Device device, const nn::History& history);

// An epoch's parts in seconds, other (the remainder), the measured fraction, steps and replays.
nlohmann::json breakdown_json(const nn::EpochBreakdown& b);
nlohmann::json memory_json(const nn::EpochMemory& m);

}  // namespace engine::apps

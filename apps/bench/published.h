// The times the source articles published (docs/SOURCES.md), each with the article it comes
// from, in one table, so that the report can set ours beside them.
#pragma once
#include <string>
#include <vector>

#include "apps/common/bench_report.h"

namespace engine::bench {

// The figures the article of `experiment` (an app's name: mnist_mlp, jacobian_mlp,
// cifar10_cnn, mnist_cnn, dogs_vs_cats) published for the case `key` ("small", "wide",
// "val=100", "val=1000"; "" where the article has one case) on a device of the kind of ours
// called `device` (cpu, gpu, cudnn). Empty where it published none.
std::vector<Published> published(const std::string& experiment, const std::string& key,
                                 const std::string& device);

}  // namespace engine::bench

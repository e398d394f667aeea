// Averaging the gradients across data-parallel ranks while the backward pass still runs.
//
// The backward pass writes the last layer's gradients first. The flat gradient buffer
// (nn/parameters.h) is cut once, from its end, into buckets of about `bucket_bytes`; in each
// step, as soon as the last gradient of a bucket is written, its all-reduce starts on the
// communicator's stream (Communicator::start_all_reduce_mean), and the backward pass of the
// earlier layers runs meanwhile. finish() starts what is left (gradients backward never wrote,
// zeroed by zero_unreached_grads) and makes the optimizer wait for all of them.
//
//   backward:  dense_1 grads | dense grads ............ | conv grads .............. |
//   all-reduce:              [bucket: dense_1 + dense]  [bucket: conv layers]        -> update
#pragma once
#include <cstdint>
#include <unordered_map>
#include <vector>

#include "core/data_parallel.h"
#include "nn/parameters.h"

namespace engine::nn {

class GradientBuckets {
 public:
  // bucket_bytes: FitOptions::bucket_bytes, 4 MiB by default: large enough that NCCL moves a
  // bucket near its bandwidth, small enough that the seed CNNs' gradients make more than one.
  GradientBuckets(Communicator& communicator, const ParameterStore& store, int64_t bucket_bytes);
  // Before a step's backward pass: every bucket waits for all its gradients again.
  void start_step();
  // backward()'s leaf_written: counts the leaf's bucket down, starting it at zero.
  void leaf_written(const Tensor& leaf);
  // After the backward pass: starts the buckets not started yet, then joins them all.
  void finish();

 private:
  struct Bucket {
    int64_t offset = 0, count = 0;  // elements of the flat gradient buffer
    int parameters = 0;             // how many lie in it
    int waiting = 0;                // of those, the ones whose gradient this step has not written
    bool started = false;
  };
  void start(Bucket& bucket);

  Communicator& communicator_;
  Tensor grads_;  // the flat gradient buffer (a handle on the model's)
  std::vector<Bucket> buckets_;  // from the buffer's end to its start: the order backward fills it
  std::unordered_map<const void*, size_t> bucket_of_;  // a parameter's data -> its bucket
};

}  // namespace engine::nn

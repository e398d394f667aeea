#include "nn/gradient_buckets.h"

#include "core/error.h"

namespace engine::nn {

GradientBuckets::GradientBuckets(Communicator& communicator, const ParameterStore& store,
                                 int64_t bucket_bytes)
    : communicator_(communicator), grads_(store.grads) {
  const auto* base = static_cast<const char*>(store.values.raw_data());
  // Parameters from the last to the first; a bucket closes once it holds bucket_bytes.
  for (auto p = store.params.rbegin(); p != store.params.rend(); ++p) {
    const int64_t offset =
        (static_cast<const char*>(p->value.raw_data()) - base) / static_cast<int64_t>(sizeof(float));
    if (buckets_.empty() || buckets_.back().count * int64_t{sizeof(float)} >= bucket_bytes) {
      buckets_.push_back({offset + p->value.numel(), 0, 0, 0, false});
    }
    Bucket& bucket = buckets_.back();
    // Parameters lie back to back, so the bucket grows downwards over this one.
    bucket.count += bucket.offset - offset;
    bucket.offset = offset;
    ++bucket.parameters;
    bucket_of_[p->value.raw_data()] = buckets_.size() - 1;
  }
  start_step();
}

void GradientBuckets::start_step() {
  for (Bucket& bucket : buckets_) {
    bucket.waiting = bucket.parameters;
    bucket.started = false;
  }
}

void GradientBuckets::leaf_written(const Tensor& leaf) {
  const auto found = bucket_of_.find(leaf.raw_data());
  if (found == bucket_of_.end()) return;  // not one of the model's parameters
  Bucket& bucket = buckets_[found->second];
  // A parameter the forward pass used twice gets two contributions; its bucket must not be
  // on its way to the other GPUs before the second.
  ENGINE_CHECK(!bucket.started, "data-parallel training: a parameter received a second gradient "
               "after its bucket's all-reduce started (a parameter used twice in one forward "
               "pass is not supported with --gpus)");
  if (--bucket.waiting == 0) start(bucket);
}

void GradientBuckets::finish() {
  for (Bucket& bucket : buckets_) {
    if (!bucket.started) start(bucket);
  }
  communicator_.join_all_reduces();
}

void GradientBuckets::start(Bucket& bucket) {
  Tensor part = grads_.slice(bucket.offset, {bucket.count});
  communicator_.start_all_reduce_mean(part);
  bucket.started = true;
}

}  // namespace engine::nn

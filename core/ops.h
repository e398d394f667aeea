// Every op, one include: what nn/ builds layers from. Each family has its own header in
// core/ops/ (core/ops/README.md): the differentiable op (checks its inputs, allocates its output,
// records a Node for backward), its raw:: dispatch point, and the declarations of its CPU, GPU
// and vendor implementations. None of it names a device: the tensors' device decides.
#pragma once
#include "core/ops/activation.h"
#include "core/ops/augment.h"
#include "core/ops/binary_cross_entropy.h"
#include "core/ops/conv2d.h"
#include "core/ops/dropout.h"
#include "core/ops/elementwise.h"
#include "core/ops/elementwise_jvp.h"
#include "core/ops/gather.h"
#include "core/ops/matmul.h"
#include "core/ops/optimizers.h"
#include "core/ops/pool.h"
#include "core/ops/random.h"
#include "core/ops/reduce.h"
#include "core/ops/regression_loss.h"
#include "core/ops/shape.h"
#include "core/ops/softmax.h"
#include "core/ops/strided_copy.h"
#include "core/rng.h"

// ENGINE_HOST_DEVICE marks a small function written once for the CPU and the GPU: in a CUDA
// file it compiles for both (and is inlined), in a plain C++ file it is an ordinary inline
// function. The rules that must agree bit for bit between cpu/ and kernels/ (the random
// numbers, the augmentation's coordinates, Adam's step size) are written this way.
#pragma once

#if defined(__CUDACC__)
#define ENGINE_HOST_DEVICE __host__ __device__ __forceinline__
#else
#define ENGINE_HOST_DEVICE inline
#endif

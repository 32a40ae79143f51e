// Device memory for the bindings' small buffers; see memory.h.
#include <cstdlib>
#include <cstring>
#include <new>

#include "common.cuh"
#include "memory.h"

namespace minifw {
namespace MINIFW_CUDA_NS {
#ifdef __CUDACC__
namespace {
void check_call(cudaError_t status, const char* call, const char* note = "") {
  if (status != cudaSuccess)
    throw std::runtime_error(std::string("CUDA error in ") + call + ": " + cudaGetErrorName(status) + ": " +
                             cudaGetErrorString(status) + note);
}
// What a synchronizing call reports may come from any kernel queued before it.
constexpr const char* kEarlier = " (an error of a kernel launched earlier on this stream shows here)";
}  // namespace

void* device_alloc(size_t bytes, void* stream) {
  void* p = nullptr;
  check_call(cudaMallocAsync(&p, bytes ? bytes : 1, static_cast<cudaStream_t>(stream)), "cudaMallocAsync");
  return p;
}

void device_free(void* pointer, void* stream) {
  if (pointer) (void)cudaFreeAsync(pointer, static_cast<cudaStream_t>(stream));
}

void copy_to_host(void* host, const void* device, size_t bytes, void* stream) {
  const cudaStream_t st = static_cast<cudaStream_t>(stream);
  check_call(cudaMemcpyAsync(host, device, bytes, cudaMemcpyDeviceToHost, st), "cudaMemcpyAsync", kEarlier);
  check_call(cudaStreamSynchronize(st), "cudaStreamSynchronize", kEarlier);
}
#else
// The emulator runs every launch to completion before it returns: nothing to wait for.
void* device_alloc(size_t bytes, void*) {
  void* p = std::malloc(bytes ? bytes : 1);
  if (!p) throw std::bad_alloc();
  return p;
}

void device_free(void* pointer, void*) { std::free(pointer); }

void copy_to_host(void* host, const void* device, size_t bytes, void*) { std::memcpy(host, device, bytes); }
#endif
}  // namespace MINIFW_CUDA_NS
}  // namespace minifw

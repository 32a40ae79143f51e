// The part of cudasim that host code outside the kernels uses (C++17): the
// error a broken rule raises and the number of worker threads.
#pragma once
#include <stdexcept>

namespace cudasim {

// A kernel broke a rule of the hardware, or its launch was invalid; what()
// names the kernel, and the block and thread where it happened.
struct Fault : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// OS threads that run blocks side by side: n clamped to [1, max_workers()].
void set_workers(int n);
int workers();
// The most workers: each keeps a stack and a guard page (two memory mappings) for every
// thread of the largest block it has run, up to 1024 threads, so ~2048 mappings; the system
// refuses mappings past vm.max_map_count (65530 by default), and then neither fiber stacks
// nor OpenMP's threads can be made. The workers may take half of them: max_map_count / 4096
// (15 with Linux's default of 65530), in [1, 1024].
int max_workers();

// "fibers" (the default) or "threads" (the ThreadSanitizer backend).
const char* backend_name();
}  // namespace cudasim

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

// OS threads that run blocks side by side (at least 1).
void set_workers(int n);

// "fibers" (the default) or "threads" (the ThreadSanitizer backend).
const char* backend_name();
}  // namespace cudasim

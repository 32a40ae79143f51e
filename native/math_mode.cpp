// The TF32 flags of native/cuda/math_mode.h. Atomic: Python may flip a flag on
// one thread while a launcher on another reads it.
#include "cuda/math_mode.h"

#include <atomic>

namespace minifw {
namespace {
std::atomic<bool> g_tf32[2] = {false, false};  // indexed by Tf32Use
}

bool tf32_allowed(Tf32Use use) { return g_tf32[int(use)].load(std::memory_order_relaxed); }
void set_tf32_allowed(Tf32Use use, bool allowed) { g_tf32[int(use)].store(allowed, std::memory_order_relaxed); }

}  // namespace minifw

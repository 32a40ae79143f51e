// The scheduler of cudasim.h: fibers, barriers, warp collectives and launch checks.
#include "cudasim.h"

#include <omp.h>
#include <sys/mman.h>

#include <algorithm>
#include <memory>
#include <mutex>
#include <unordered_map>
#include <vector>

#if defined(__SANITIZE_ADDRESS__)
#define CUDASIM_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define CUDASIM_ASAN 1
#endif
#endif
#ifdef CUDASIM_ASAN
#include <sanitizer/common_interface_defs.h>
#endif

#if !defined(__x86_64__)
#include <ucontext.h>
#endif

namespace cudasim {
namespace detail {
namespace {

// ---- context switch --------------------------------------------------------
#if defined(__x86_64__)
// Saves the callee-saved registers on the current stack, stores the stack
// pointer in *save and continues on `next`'s stack: a handful of instructions,
// where glibc's swapcontext also makes a system call per switch.
extern "C" void cudasim_switch_stack(void** save, void* next);
asm(".text\n"
    ".globl cudasim_switch_stack\n"
    ".hidden cudasim_switch_stack\n"
    ".type cudasim_switch_stack,@function\n"
    "cudasim_switch_stack:\n"
    "  pushq %rbp\n  pushq %rbx\n  pushq %r12\n  pushq %r13\n  pushq %r14\n  pushq %r15\n"
    "  movq %rsp, (%rdi)\n  movq %rsi, %rsp\n"
    "  popq %r15\n  popq %r14\n  popq %r13\n  popq %r12\n  popq %rbx\n  popq %rbp\n"
    "  ret\n"
    ".size cudasim_switch_stack,.-cudasim_switch_stack\n");
struct Context {
  void* sp = nullptr;
};
void switch_context(Context& from, Context& to) { cudasim_switch_stack(&from.sp, to.sp); }
void make_context(Context& c, char* stack, size_t size, void (*entry)()) {
  // The first switch pops six zeroed registers and returns into entry, with the
  // stack aligned as the ABI expects at a function's first instruction.
  void** top = reinterpret_cast<void**>((reinterpret_cast<uintptr_t>(stack) + size - 16) & ~uintptr_t(15));
  top[1] = nullptr;
  top[0] = reinterpret_cast<void*>(entry);
  for (int i = 1; i <= 6; ++i) top[-i] = nullptr;
  c.sp = top - 6;
}
#else
struct Context {
  ucontext_t uc;
};
void switch_context(Context& from, Context& to) { swapcontext(&from.uc, &to.uc); }
void make_context(Context& c, char* stack, size_t size, void (*entry)()) {
  getcontext(&c.uc);
  c.uc.uc_stack.ss_sp = stack;
  c.uc.uc_stack.ss_size = size;
  c.uc.uc_link = nullptr;
  makecontext(&c.uc, entry, 0);
}
#endif

#ifdef CUDASIM_ASAN
constexpr size_t kStackBytes = 512 * 1024;  // AddressSanitizer's frames are large
#else
constexpr size_t kStackBytes = 64 * 1024;
#endif
constexpr size_t kGuardBytes = 4096;  // below each stack: an overflow faults at once

enum class State : uint8_t { ready, at_barrier, at_collective, done, faulted };

struct Fiber {
  Context context;
  char* stack = nullptr;  // kStackBytes, above a guard page
  uint3 index{0, 0, 0};
  State state = State::ready;
  const char* file = nullptr;  // where it waits at __syncthreads
  int line = 0;
  Collective op = Collective::syncwarp;  // the collective it waits at
  unsigned mask = 0;
  uint64_t value = 0, result = 0;
  int lane_arg = 0, width = 32;
  void* asan_fake_stack = nullptr;
};

// What one OS thread needs to run blocks: the fibers (stacks kept between
// launches), the dynamic shared memory, the block's state.
struct Worker {
  std::vector<Fiber> fibers;
  std::unique_ptr<unsigned char[]> shared;
  size_t shared_capacity = 0, shared_bytes = 0;
  Context scheduler;
  Fiber* current = nullptr;
  const KernelCall* call = nullptr;
  std::string fault;
  const void* scheduler_stack_bottom = nullptr;
  size_t scheduler_stack_size = 0;

  ~Worker() {
    for (Fiber& f : fibers)
      if (f.stack) munmap(f.stack - kGuardBytes, kStackBytes + kGuardBytes);
  }
  void prepare(const KernelCall& c, unsigned nthreads, size_t dynamic_shared) {
    call = &c;
    while (fibers.size() < nthreads) {
      char* m = static_cast<char*>(
          mmap(nullptr, kStackBytes + kGuardBytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0));
      if (m == MAP_FAILED) throw Fault(std::string("cudasim: kernel ") + c.name + ": out of memory for thread stacks");
      mprotect(m, kGuardBytes, PROT_NONE);
      fibers.emplace_back();
      fibers.back().stack = m + kGuardBytes;
    }
    if (shared_capacity < dynamic_shared) {
      shared.reset(new unsigned char[dynamic_shared]);
      shared_capacity = dynamic_shared;
    }
    shared_bytes = dynamic_shared;
  }
};
thread_local Worker t_worker;

int g_workers = 1;
std::mutex g_limits_mutex;
std::unordered_map<const void*, size_t> g_dynamic_shared_limits;

std::string triple(unsigned x, unsigned y, unsigned z) {
  return "(" + std::to_string(x) + "," + std::to_string(y) + "," + std::to_string(z) + ")";
}
std::string where(const char* kernel, uint3 block, uint3 thread) {
  return std::string("cudasim: kernel ") + kernel + ", block " + triple(block.x, block.y, block.z) + ", thread " +
         triple(thread.x, thread.y, thread.z) + ": ";
}
std::string site(const char* file, int line) {
  const char* base = std::strrchr(file, '/');
  return std::string(base ? base + 1 : file) + ":" + std::to_string(line);
}
std::string hex(unsigned v) {
  char b[16];
  std::snprintf(b, sizeof b, "0x%08x", v);
  return b;
}
const char* collective_name(Collective op) {
  switch (op) {
    case Collective::shfl: return "__shfl_sync";
    case Collective::shfl_up: return "__shfl_up_sync";
    case Collective::shfl_down: return "__shfl_down_sync";
    case Collective::shfl_xor: return "__shfl_xor_sync";
    case Collective::ballot: return "__ballot_sync";
    case Collective::any: return "__any_sync";
    case Collective::all: return "__all_sync";
    case Collective::syncwarp: return "__syncwarp";
  }
  return "?";
}

// ---- fibers ----------------------------------------------------------------
void to_scheduler(Worker& w, bool final) {
#ifdef CUDASIM_ASAN
  __sanitizer_start_switch_fiber(final ? nullptr : &w.current->asan_fake_stack, w.scheduler_stack_bottom,
                                 w.scheduler_stack_size);
#endif
  (void)final;
  switch_context(w.current->context, w.scheduler);
#ifdef CUDASIM_ASAN
  __sanitizer_finish_switch_fiber(w.current->asan_fake_stack, nullptr, nullptr);
#endif
}

void fiber_entry() {
  Worker& w = t_worker;
#ifdef CUDASIM_ASAN
  __sanitizer_finish_switch_fiber(nullptr, &w.scheduler_stack_bottom, &w.scheduler_stack_size);
#endif
  try {
    w.call->invoke(w.call->params);
    w.current->state = State::done;
  } catch (const std::exception& e) {
    w.fault = where(w.call->name, blockIdx, threadIdx) + "exception in the kernel: " + e.what();
    w.current->state = State::faulted;
  }
  to_scheduler(w, true);
  __builtin_unreachable();
}

void resume(Worker& w, Fiber& f) {
  w.current = &f;
  threadIdx = f.index;
#ifdef CUDASIM_ASAN
  void* fake = nullptr;
  __sanitizer_start_switch_fiber(&fake, f.stack, kStackBytes);
#endif
  switch_context(w.scheduler, f.context);
#ifdef CUDASIM_ASAN
  __sanitizer_finish_switch_fiber(fake, nullptr, nullptr);
#endif
  w.current = nullptr;
}

// ---- warp collectives ------------------------------------------------------
// Releases the collectives whose lanes have all arrived; returns whether any
// was released, or sets `error`.
bool release_collectives(Worker& w, unsigned nthreads, std::string& error) {
  bool progress = false;
  for (unsigned base = 0; base < nthreads; base += 32) {
    const unsigned lanes = std::min(32u, nthreads - base);
    for (unsigned i = 0; i < lanes; ++i) {
      Fiber& f = w.fibers[base + i];
      if (f.state != State::at_collective) continue;
      const unsigned mask = f.mask;
      for (unsigned j = 0; j < 32; ++j) {
        if (!((mask >> j) & 1u)) continue;
        const std::string head = where(w.call->name, blockIdx, f.index) + collective_name(f.op) + " with mask " +
                                 hex(mask) + ": lane " + std::to_string(j);
        if (j >= lanes) {
          error = head + " does not exist (the block has " + std::to_string(nthreads) + " threads)";
          return false;
        }
        const Fiber& g = w.fibers[base + j];
        if (g.state == State::done) error = head + " has exited";
        else if (g.state == State::at_barrier) error = head + " waits at __syncthreads (" + site(g.file, g.line) + ")";
        else if (g.mask != mask) error = head + " is at a collective with mask " + hex(g.mask);
        else if (g.op != f.op) error = head + " is at " + collective_name(g.op);
        if (!error.empty()) return false;
      }
      // Every lane of the mask is here: compute each one's result.
      for (unsigned j = 0; j < lanes; ++j) {
        if (!((mask >> j) & 1u)) continue;
        Fiber& g = w.fibers[base + j];
        const int lane = int(j), seg = lane & ~(g.width - 1);
        int src = lane;
        switch (g.op) {
          case Collective::shfl: src = seg + (g.lane_arg & (g.width - 1)); break;
          case Collective::shfl_up: src = lane - g.lane_arg < seg ? lane : lane - g.lane_arg; break;
          case Collective::shfl_down: src = lane + g.lane_arg >= seg + g.width ? lane : lane + g.lane_arg; break;
          case Collective::shfl_xor: src = (lane ^ g.lane_arg) >= seg + g.width ? lane : lane ^ g.lane_arg; break;
          default: break;
        }
        uint64_t r = 0;
        if (g.op == Collective::ballot || g.op == Collective::any || g.op == Collective::all) {
          unsigned ballot = 0;
          for (unsigned k = 0; k < 32; ++k)
            if (((mask >> k) & 1u) && w.fibers[base + k].value) ballot |= 1u << k;
          r = g.op == Collective::ballot ? ballot : g.op == Collective::any ? ballot != 0 : ballot == mask;
        } else if (g.op != Collective::syncwarp) {
          // A lane outside the mask (or the warp) gives an undefined value on a GPU: poison.
          r = (src >= 0 && src < 32 && ((mask >> src) & 1u)) ? w.fibers[base + src].value : ~uint64_t(0);
        }
        g.result = r;
      }
      for (unsigned j = 0; j < lanes; ++j)
        if ((mask >> j) & 1u) w.fibers[base + j].state = State::ready;
      progress = true;
    }
  }
  return progress;
}

// ---- one block -------------------------------------------------------------
// Runs every thread of the current block; returns "" or what went wrong.
std::string run_block(Worker& w, unsigned nthreads) {
  if (w.shared_bytes) std::memset(w.shared.get(), 0xFF, w.shared_bytes);  // poison: unwritten reads are NaN
  for (unsigned t = 0; t < nthreads; ++t) {
    Fiber& f = w.fibers[t];
    make_context(f.context, f.stack, kStackBytes, fiber_entry);
    f.index = uint3{t % blockDim.x, (t / blockDim.x) % blockDim.y, t / (blockDim.x * blockDim.y)};
    f.state = State::ready;
  }
  for (;;) {
    for (unsigned t = 0; t < nthreads; ++t)
      if (w.fibers[t].state == State::ready) {
        resume(w, w.fibers[t]);
        if (w.fibers[t].state == State::faulted) return w.fault;
      }
    std::string error;
    if (release_collectives(w, nthreads, error)) continue;
    if (!error.empty()) return error;
    const Fiber* waiting = nullptr;
    const Fiber* exited = nullptr;
    unsigned n_exited = 0;
    for (unsigned t = 0; t < nthreads; ++t) {
      const Fiber& f = w.fibers[t];
      if (f.state == State::at_barrier && !waiting) waiting = &f;
      if (f.state == State::done && !n_exited++) exited = &f;
    }
    if (!waiting) return "";  // every thread has finished
    if (n_exited)
      return where(w.call->name, blockIdx, exited->index) + "exited before __syncthreads at " +
             site(waiting->file, waiting->line) + " (" + std::to_string(n_exited) + " of " +
             std::to_string(nthreads) + " threads exited; all must reach it)";
    for (unsigned t = 0; t < nthreads; ++t) {
      Fiber& f = w.fibers[t];
      if (f.line != waiting->line || std::strcmp(f.file, waiting->file) != 0)
        return where(w.call->name, blockIdx, f.index) + "waits at __syncthreads at " + site(f.file, f.line) +
               " while thread " + triple(waiting->index.x, waiting->index.y, waiting->index.z) + " waits at " +
               site(waiting->file, waiting->line) + " (a barrier in divergent code)";
      f.state = State::ready;
    }
  }
}

void check_launch(const char* name, dim3 grid, dim3 block, size_t dynamic_shared, size_t limit) {
  const uint64_t threads = uint64_t(block.x) * block.y * block.z;
  std::string why;
  if (threads == 0 || threads > 1024)
    why = "block " + triple(block.x, block.y, block.z) + " has " + std::to_string(threads) +
          " threads; a block holds 1 to 1024";
  else if (block.x > 1024 || block.y > 1024 || block.z > 64)
    why = "block " + triple(block.x, block.y, block.z) + " is over the limits (1024, 1024, 64)";
  else if (!grid.x || !grid.y || !grid.z || grid.x > 2147483647u || grid.y > 65535 || grid.z > 65535)
    why = "grid " + triple(grid.x, grid.y, grid.z) + " is outside 1..(2^31-1, 65535, 65535)";
  else if (dynamic_shared > limit)
    why = std::to_string(dynamic_shared) + " bytes of dynamic shared memory requested; the kernel's limit is " +
          std::to_string(limit) +
          (limit < kMaxDynamicShared ? " (cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, "
                                       "bytes) raises it)"
                                     : "");
  if (!why.empty()) throw Fault(std::string("cudasim: kernel ") + name + ": invalid launch: " + why);
}
}  // namespace

// ---- the interface of cudasim.h ----------------------------------------------
void syncthreads_at(const char* file, int line) {
  Worker& w = t_worker;
  w.current->state = State::at_barrier;
  w.current->file = file;
  w.current->line = line;
  to_scheduler(w, false);
}

void fail(const std::string& what) {
  Worker& w = t_worker;
  w.fault = where(w.call->name, blockIdx, threadIdx) + what;
  w.current->state = State::faulted;
  to_scheduler(w, true);
  __builtin_unreachable();
}

uint64_t collective(Collective op, unsigned mask, uint64_t value, int lane_arg, int width) {
  Worker& w = t_worker;
  Fiber& f = *w.current;
  const unsigned linear = unsigned(&f - w.fibers.data());
  if (!((mask >> (linear % 32)) & 1u))
    fail(std::string(collective_name(op)) + ": the calling lane " + std::to_string(linear % 32) +
         " is not in the mask " + hex(mask));
  if (width < 1 || width > 32 || (width & (width - 1)))
    fail(std::string(collective_name(op)) + ": width must be a power of 2 from 1 to 32, got " + std::to_string(width));
  f.state = State::at_collective;
  f.op = op, f.mask = mask, f.value = value, f.lane_arg = lane_arg, f.width = width;
  to_scheduler(w, false);
  return f.result;
}

unsigned char* dynamic_shared_base() { return t_worker.shared.get(); }

size_t dynamic_shared_limit(const void* function) {
  std::lock_guard<std::mutex> lock(g_limits_mutex);
  auto it = g_dynamic_shared_limits.find(function);
  return it == g_dynamic_shared_limits.end() ? kDefaultDynamicShared : it->second;
}

void set_dynamic_shared_limit(const void* function, size_t bytes) {
  if (bytes > kMaxDynamicShared)
    throw Fault("cudasim: cudaFuncSetAttribute: " + std::to_string(bytes) +
                " bytes of dynamic shared memory is over the device's " + std::to_string(kMaxDynamicShared));
  std::lock_guard<std::mutex> lock(g_limits_mutex);
  g_dynamic_shared_limits[function] = bytes;
}

void run(const KernelCall& call, dim3 grid, dim3 block, size_t dynamic_shared) {
  check_launch(call.name, grid, block, dynamic_shared, dynamic_shared_limit(call.function));
  const unsigned nthreads = block.x * block.y * block.z;
  const uint64_t nblocks = uint64_t(grid.x) * grid.y * grid.z;
  const int workers = int(std::min<uint64_t>(std::max(g_workers, 1), nblocks));
  std::atomic<uint64_t> next{0};
  std::atomic<bool> failed{false};
  std::mutex fault_mutex;
  std::string first_fault;
  auto work = [&] {
    Worker& w = t_worker;
    try {
      w.prepare(call, nthreads, dynamic_shared);
    } catch (const Fault& e) {
      std::lock_guard<std::mutex> lock(fault_mutex);
      if (!failed.exchange(true)) first_fault = e.what();
      return;
    }
    blockDim = block, gridDim = grid;
    for (uint64_t b; !failed.load() && (b = next.fetch_add(1)) < nblocks;) {
      blockIdx = uint3{unsigned(b % grid.x), unsigned((b / grid.x) % grid.y), unsigned(b / (uint64_t(grid.x) * grid.y))};
      std::string fault = run_block(w, nthreads);
      if (!fault.empty()) {
        std::lock_guard<std::mutex> lock(fault_mutex);
        if (!failed.exchange(true)) first_fault = fault;
      }
    }
    w.call = nullptr;
  };
  if (workers == 1) {
    work();
  } else {
#pragma omp parallel num_threads(workers)
    work();
  }
  if (failed.load()) throw Fault(first_fault);
}
}  // namespace detail

void set_workers(int n) { detail::g_workers = n < 1 ? 1 : n; }
}  // namespace cudasim

// cudasim's default backend: each CUDA thread of a block a fiber on one OS
// thread, run to its next barrier or collective; blocks on worker threads.
#ifndef CUDASIM_THREADS
#include "internal.h"

#include <omp.h>
#include <sys/mman.h>

#include <algorithm>
#include <memory>
#include <mutex>
#include <vector>

#if defined(__SANITIZE_ADDRESS__)
#define CUDASIM_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define CUDASIM_ASAN 1
#endif
#endif
#ifdef CUDASIM_ASAN
#include <sanitizer/asan_interface.h>
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

// AddressSanitizer marks the redzones around a frame's locals and clears them when
// the frame returns; a fiber abandoned mid-kernel (its block faulted) never returns,
// so its stack is cleared here before it is reused or unmapped.
inline void forget_frames(char* stack) {
#ifdef CUDASIM_ASAN
  __asan_unpoison_memory_region(stack, kStackBytes);
#else
  (void)stack;
#endif
}

enum class State : uint8_t { ready, at_barrier, at_collective, done, faulted };

struct Fiber {
  Context context;
  char* stack = nullptr;  // kStackBytes, above a guard page
  uint3 index{0, 0, 0};
  State state = State::ready;
  const char* file = nullptr;  // where it waits at __syncthreads
  int line = 0;
  LaneCall call;  // the collective it waits at
  uint64_t result = 0;
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
      if (f.stack) {
        forget_frames(f.stack);  // the memory may come back as anything: no stale poison on it
        munmap(f.stack - kGuardBytes, kStackBytes + kGuardBytes);
      }
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
  LaneCall calls[32];
  for (unsigned base = 0; base < nthreads; base += 32) {
    const unsigned lanes = std::min(32u, nthreads - base);
    for (unsigned i = 0; i < lanes; ++i) {
      Fiber& f = w.fibers[base + i];
      if (f.state != State::at_collective) continue;
      const unsigned mask = f.call.mask;
      for (unsigned j = 0; j < 32; ++j) {
        if (!((mask >> j) & 1u)) continue;
        static const LaneCall none;
        const Fiber* g = j < lanes ? &w.fibers[base + j] : nullptr;
        const LaneState state = !g                                 ? LaneState::running
                                : g->state == State::done          ? LaneState::exited
                                : g->state == State::at_barrier    ? LaneState::at_barrier
                                : g->state == State::at_collective ? LaneState::at_collective
                                                                   : LaneState::running;
        const std::string problem =
            lane_problem(f.call, j, lanes, nthreads, state, g ? g->call : none, g ? g->file : "", g ? g->line : 0);
        if (!problem.empty()) {
          error = where(w.call->name, blockIdx, f.index) + problem;
          return false;
        }
      }
      // Every lane of the mask is here.
      for (unsigned j = 0; j < lanes; ++j) calls[j] = w.fibers[base + j].call;
      for (unsigned j = 0; j < lanes; ++j)
        if ((mask >> j) & 1u) {
          w.fibers[base + j].result = collective_result(calls, j);
          w.fibers[base + j].state = State::ready;
        }
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
    forget_frames(f.stack);  // frames of a block abandoned at a fault never returned
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
  f.call = LaneCall{op, mask, value, lane_arg, width};
  const std::string error = check_lane_call(f.call, unsigned(&f - w.fibers.data()) % 32);
  if (!error.empty()) fail(error);
  f.state = State::at_collective;
  to_scheduler(w, false);
  return f.result;
}

unsigned char* dynamic_shared_base() { return t_worker.shared.get(); }

void run(const KernelCall& call, dim3 grid, dim3 block, size_t dynamic_shared) {
  check_launch(call, grid, block, dynamic_shared);
  const unsigned nthreads = block.x * block.y * block.z;
  const uint64_t nblocks = uint64_t(grid.x) * grid.y * grid.z;
  // Starting workers costs more than a few small blocks take: small grids run on this thread.
  const int workers = nblocks < 8 ? 1 : int(std::min<uint64_t>(std::max(g_workers, 1), nblocks));
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

const char* backend_name() { return "fibers"; }
}  // namespace cudasim
#endif  // CUDASIM_THREADS

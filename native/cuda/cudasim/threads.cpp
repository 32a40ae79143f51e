// cudasim's backend for ThreadSanitizer (built with -DCUDASIM_THREADS): each
// CUDA thread of a block is an OS thread, so that TSan sees every access and
// every barrier edge and reports a missing __syncthreads as a data race. Blocks
// run one after another (their __shared__ variables are plain statics). The
// rules checked are the fiber backend's; what the fibers find by scheduling
// (a thread gone before a barrier, a lane missing from a collective) is found
// here by bookkeeping, and a wait that lasts CUDASIM_TIMEOUT seconds (default
// 60) is reported as a deadlock. Thousands of OS threads per launch: small
// shapes only.
#ifdef CUDASIM_THREADS
#include <chrono>
#include <condition_variable>
#include <cstdlib>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include "internal.h"

namespace cudasim {
namespace detail {
namespace {

struct Aborted {};  // unwinds the other threads of a block after a fault

struct Block {
  const KernelCall* call;
  unsigned nthreads;
  std::mutex m;  // guards everything below
  std::condition_variable cv;
  bool aborted = false;
  std::string fault;
  // __syncthreads
  unsigned arrived = 0, exited = 0;
  uint64_t generation = 0;
  const char* file = nullptr;
  int line = 0;
  uint3 first_waiter{0, 0, 0};
  // warp collectives, per lane of the block
  std::vector<LaneCall> calls;
  std::vector<uint64_t> results;
  std::vector<char> at_collective, gone;
  std::vector<uint64_t> served;  // collectives each lane has had answered
  std::vector<unsigned char> shared;
};

thread_local Block* t_block = nullptr;
thread_local unsigned t_linear = 0;

std::chrono::seconds timeout() {
  const char* s = std::getenv("CUDASIM_TIMEOUT");
  return std::chrono::seconds(s && std::atoi(s) > 0 ? std::atoi(s) : 60);
}

// Records the first fault of the block and wakes everyone; the caller unwinds.
[[noreturn]] void abort_block(Block& b, std::unique_lock<std::mutex>&, const std::string& what) {
  if (!b.aborted) b.fault = what;
  b.aborted = true;
  b.cv.notify_all();
  throw Aborted{};
}

template <class Ready>
void wait(Block& b, std::unique_lock<std::mutex>& lock, const std::string& what, Ready ready) {
  if (!b.cv.wait_for(lock, timeout(), [&] { return b.aborted || ready(); }))
    abort_block(b, lock, where(b.call->name, blockIdx, threadIdx) + "deadlock: waited " +
                             std::to_string(timeout().count()) + " s at " + what);
  if (b.aborted) throw Aborted{};
}

// A lane named in `mask` that can no longer join a collective: "" or why.
std::string missing_lane(Block& b, unsigned base, unsigned mask, const LaneCall& mine) {
  const unsigned lanes = std::min(32u, b.nthreads - base);
  static const LaneCall none;
  for (unsigned j = 0; j < 32; ++j) {
    if (!((mask >> j) & 1u)) continue;
    const bool exists = j < lanes;
    const LaneState state = !exists                         ? LaneState::running
                            : b.gone[base + j]              ? LaneState::exited
                            : b.at_collective[base + j]     ? LaneState::at_collective
                                                            : LaneState::running;
    std::string problem = lane_problem(mine, j, lanes, b.nthreads, state, exists ? b.calls[base + j] : none, "", 0);
    if (!problem.empty()) return problem;
  }
  return "";
}

void thread_main(Block& b, unsigned linear, uint3 index, uint3 block_index) {
  t_block = &b, t_linear = linear;
  threadIdx = index, blockIdx = block_index;
  try {
    b.call->invoke(b.call->params);
    std::unique_lock<std::mutex> lock(b.m);
    b.gone[linear] = 1;
    ++b.exited;
    if (b.arrived && b.arrived + b.exited == b.nthreads)
      abort_block(b, lock, where(b.call->name, blockIdx, threadIdx) + "exited before __syncthreads at " +
                               site(b.file, b.line) + " (" + std::to_string(b.exited) + " of " +
                               std::to_string(b.nthreads) + " threads exited; all must reach it)");
    b.cv.notify_all();  // lanes waiting for this one in a collective find it gone
  } catch (const Aborted&) {
  } catch (const std::exception& e) {
    std::unique_lock<std::mutex> lock(b.m);
    try {
      abort_block(b, lock, where(b.call->name, blockIdx, threadIdx) + "exception in the kernel: " + e.what());
    } catch (const Aborted&) {
    }
  }
}
}  // namespace

void syncthreads_at(const char* file, int line) {
  Block& b = *t_block;
  std::unique_lock<std::mutex> lock(b.m);
  if (b.aborted) throw Aborted{};
  if (b.arrived == 0) {
    b.file = file, b.line = line, b.first_waiter = threadIdx;
  } else if (b.line != line || std::strcmp(b.file, file) != 0) {
    abort_block(b, lock, where(b.call->name, blockIdx, threadIdx) + "waits at __syncthreads at " + site(file, line) +
                             " while thread " + triple(b.first_waiter.x, b.first_waiter.y, b.first_waiter.z) +
                             " waits at " + site(b.file, b.line) + " (a barrier in divergent code)");
  }
  if (b.exited)
    abort_block(b, lock, where(b.call->name, blockIdx, threadIdx) + "waits at __syncthreads at " + site(file, line) +
                             " which " + std::to_string(b.exited) + " exited threads will never reach");
  const uint64_t generation = b.generation;
  if (++b.arrived == b.nthreads) {
    b.arrived = 0, ++b.generation;
    b.cv.notify_all();
    return;
  }
  wait(b, lock, "__syncthreads " + site(file, line), [&] { return b.generation != generation; });
}

[[noreturn]] void fail(const std::string& what) {
  Block& b = *t_block;
  std::unique_lock<std::mutex> lock(b.m);
  abort_block(b, lock, where(b.call->name, blockIdx, threadIdx) + what);
}

uint64_t collective(Collective op, unsigned mask, uint64_t value, int lane_arg, int width) {
  Block& b = *t_block;
  const unsigned me = t_linear, lane = me % 32, base = me - lane;
  const LaneCall call{op, mask, value, lane_arg, width};
  std::unique_lock<std::mutex> lock(b.m);
  if (b.aborted) throw Aborted{};
  const std::string bad = check_lane_call(call, lane);
  if (!bad.empty()) abort_block(b, lock, where(b.call->name, blockIdx, threadIdx) + bad);
  b.calls[me] = call, b.at_collective[me] = 1;
  const uint64_t served = b.served[me];
  for (;;) {
    const std::string missing = missing_lane(b, base, mask, call);
    if (!missing.empty()) abort_block(b, lock, where(b.call->name, blockIdx, threadIdx) + missing);
    bool all_here = true;
    for (unsigned j = 0; j < 32; ++j)
      if (((mask >> j) & 1u) && !b.at_collective[base + j]) all_here = false;
    if (all_here) {  // the last lane to arrive answers everyone in the mask
      LaneCall calls[32];
      for (unsigned j = 0; j < 32 && base + j < b.nthreads; ++j) calls[j] = b.calls[base + j];
      for (unsigned j = 0; j < 32; ++j)
        if ((mask >> j) & 1u) {
          b.results[base + j] = collective_result(calls, j);
          b.at_collective[base + j] = 0;
          ++b.served[base + j];
        }
      b.cv.notify_all();
      return b.results[me];
    }
    // Wake on any change: an answer, a lane arriving or exiting, a fault.
    const uint64_t generation = b.generation;
    const unsigned exited = b.exited;
    b.cv.wait_for(lock, timeout(), [&] { return b.aborted || b.served[me] != served || b.exited != exited; });
    (void)generation;
    if (b.aborted) throw Aborted{};
    if (b.served[me] != served) return b.results[me];
    if (b.exited == exited)
      abort_block(b, lock, where(b.call->name, blockIdx, threadIdx) + "deadlock: waited " +
                               std::to_string(timeout().count()) + " s in " + collective_name(op));
  }
}

unsigned char* dynamic_shared_base() { return t_block->shared.data(); }

void run(const KernelCall& call, dim3 grid, dim3 block, size_t dynamic_shared) {
  check_launch(call, grid, block, dynamic_shared);
  const unsigned nthreads = block.x * block.y * block.z;
  const uint64_t nblocks = uint64_t(grid.x) * grid.y * grid.z;
  for (uint64_t blk = 0; blk < nblocks; ++blk) {
    Block b;
    b.call = &call, b.nthreads = nthreads;
    b.calls.resize(nthreads), b.results.resize(nthreads), b.served.resize(nthreads);
    b.at_collective.assign(nthreads, 0), b.gone.assign(nthreads, 0);
    b.shared.assign(dynamic_shared, 0xFF);  // poison: unwritten reads are NaN
    const uint3 block_index{unsigned(blk % grid.x), unsigned((blk / grid.x) % grid.y),
                            unsigned(blk / (uint64_t(grid.x) * grid.y))};
    std::vector<std::thread> threads;
    threads.reserve(nthreads);
    for (unsigned t = 0; t < nthreads; ++t) {
      const uint3 index{t % block.x, (t / block.x) % block.y, t / (block.x * block.y)};
      threads.emplace_back([&b, t, index, block_index, block, grid] {
        blockDim = block, gridDim = grid;
        thread_main(b, t, index, block_index);
      });
    }
    for (std::thread& th : threads) th.join();
    if (b.aborted) throw Fault(b.fault);
  }
}
}  // namespace detail

const char* backend_name() { return "threads"; }
}  // namespace cudasim
#endif  // CUDASIM_THREADS

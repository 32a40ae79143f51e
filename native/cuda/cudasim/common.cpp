// The parts of cudasim both backends use: messages, launch checks, collective results.
#include <cstdio>
#include <cstring>
#include <mutex>
#include <unordered_map>

#include "internal.h"

namespace cudasim {
namespace detail {

int g_workers = 1;

namespace {
std::mutex g_limits_mutex;
std::unordered_map<const void*, size_t> g_dynamic_shared_limits;
}  // namespace

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

void check_launch(const KernelCall& call, dim3 grid, dim3 block, size_t dynamic_shared) {
  const size_t limit = dynamic_shared_limit(call.function);
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
  if (!why.empty()) throw Fault(std::string("cudasim: kernel ") + call.name + ": invalid launch: " + why);
}

std::string check_lane_call(const LaneCall& call, unsigned lane) {
  if (!((call.mask >> lane) & 1u))
    return std::string(collective_name(call.op)) + ": the calling lane " + std::to_string(lane) +
           " is not in the mask " + hex(call.mask);
  if (call.width < 1 || call.width > 32 || (call.width & (call.width - 1)))
    return std::string(collective_name(call.op)) + ": width must be a power of 2 from 1 to 32, got " +
           std::to_string(call.width);
  return "";
}

std::string lane_problem(const LaneCall& mine, unsigned j, unsigned lanes, unsigned nthreads, LaneState state,
                         const LaneCall& theirs, const char* file, int line) {
  const bool missing = j >= lanes || state == LaneState::exited || state == LaneState::at_barrier;
  const bool differs = state == LaneState::at_collective && (theirs.mask != mine.mask || theirs.op != mine.op);
  if (!missing && !differs) return "";
  const std::string head = std::string(collective_name(mine.op)) + " with mask " + hex(mine.mask) + ": lane " +
                           std::to_string(j);
  if (j >= lanes) return head + " does not exist (the block has " + std::to_string(nthreads) + " threads)";
  if (state == LaneState::exited) return head + " has exited";
  if (state == LaneState::at_barrier) return head + " waits at __syncthreads (" + site(file, line) + ")";
  if (theirs.mask != mine.mask) return head + " is at a collective with mask " + hex(theirs.mask);
  return head + " is at " + collective_name(theirs.op);
}

uint64_t collective_result(const LaneCall* calls, unsigned lane) {
  const LaneCall& c = calls[lane];
  const unsigned mask = c.mask;
  if (c.op == Collective::ballot || c.op == Collective::any || c.op == Collective::all) {
    unsigned ballot = 0;
    for (unsigned k = 0; k < 32; ++k)
      if (((mask >> k) & 1u) && calls[k].value) ballot |= 1u << k;
    return c.op == Collective::ballot ? ballot : c.op == Collective::any ? ballot != 0 : ballot == mask;
  }
  if (c.op == Collective::syncwarp) return 0;
  const int l = int(lane), seg = l & ~(c.width - 1);
  int src = l;
  switch (c.op) {
    case Collective::shfl: src = seg + (c.lane_arg & (c.width - 1)); break;
    case Collective::shfl_up: src = l - c.lane_arg < seg ? l : l - c.lane_arg; break;
    case Collective::shfl_down: src = l + c.lane_arg >= seg + c.width ? l : l + c.lane_arg; break;
    case Collective::shfl_xor: src = (l ^ c.lane_arg) >= seg + c.width ? l : l ^ c.lane_arg; break;
    default: break;
  }
  // A lane outside the mask gives an undefined value on a GPU: poison.
  return (src >= 0 && src < 32 && ((mask >> src) & 1u)) ? calls[src].value : ~uint64_t(0);
}

}  // namespace detail

int max_workers() {
  static const int cap = [] {
    long maps = 65530;  // Linux's default vm.max_map_count
    if (std::FILE* f = std::fopen("/proc/sys/vm/max_map_count", "r")) {
      long v = 0;
      if (std::fscanf(f, "%ld", &v) == 1 && v > 0) maps = v;
      std::fclose(f);
    }
    const long workers = maps / 4096;
    return static_cast<int>(workers < 1 ? 1 : workers > 1024 ? 1024 : workers);
  }();
  return cap;
}

// minifw's set_num_threads hands its count here: the emulator runs min(n, max_workers())
// workers, so a count the CPU kernels can use never exhausts the mappings of fiber stacks.
void set_workers(int n) {
  const int cap = max_workers();
  detail::g_workers = n < 1 ? 1 : (n > cap ? cap : n);
}
int workers() { return detail::g_workers; }
}  // namespace cudasim

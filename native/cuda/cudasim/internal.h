// What both backends of cudasim share (fibers.cpp, the default; threads.cpp,
// built with CUDASIM_THREADS for ThreadSanitizer): messages, launch checks,
// the results of warp collectives.
#pragma once
#include <string>

#include "cudasim.h"

namespace cudasim {
namespace detail {

extern int g_workers;  // set_workers

std::string triple(unsigned x, unsigned y, unsigned z);
// "cudasim: kernel K, block (..), thread (..): " -- the start of every fault message.
std::string where(const char* kernel, uint3 block, uint3 thread);
std::string site(const char* file, int line);  // "file.cu:42"
std::string hex(unsigned v);
const char* collective_name(Collective op);

// Throws Fault for a launch the hardware would refuse.
void check_launch(const KernelCall& call, dim3 grid, dim3 block, size_t dynamic_shared);

// One lane's call of a warp collective.
struct LaneCall {
  Collective op = Collective::syncwarp;
  unsigned mask = 0;
  uint64_t value = 0;
  int lane_arg = 0, width = 32;
};
// The checks a lane makes on entering a collective: "" or what is wrong.
std::string check_lane_call(const LaneCall& call, unsigned lane);
// Where a lane named in a collective's mask is.
enum class LaneState { at_collective, at_barrier, exited, running };
// Why lane j, named in the mask of `mine`, cannot join that collective, or "" (without
// building any message) when it has joined or may still join. `lanes`: the lanes the
// warp has; `theirs`: lane j's call when at a collective; file/line: its barrier.
std::string lane_problem(const LaneCall& mine, unsigned j, unsigned lanes, unsigned nthreads, LaneState state,
                         const LaneCall& theirs, const char* file, int line);
// What lane `lane` gets back, once every lane of its mask has made `calls[lane]`.
uint64_t collective_result(const LaneCall* calls, unsigned lane);

}  // namespace detail
}  // namespace cudasim

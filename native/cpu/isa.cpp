#include "isa.h"

#include <atomic>
#include <cstdlib>
#include <stdexcept>

namespace minifw {
namespace {
Isa best_supported() {
#if defined(MINIFW_X86)
  __builtin_cpu_init();
  // libgcc also checks that the OS saves the wider registers (XCR0).
  if (__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
      __builtin_cpu_supports("avx512dq") && __builtin_cpu_supports("avx512vl") &&
      __builtin_cpu_supports("fma"))
    return Isa::avx512;
  if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) return Isa::avx2;
#endif
  return Isa::generic;
}

Isa initial_isa() {
  Isa best = best_supported();
  if (const char* env = std::getenv("MINIFW_ISA")) {
    if (*env == '\0') return best;
    Isa asked;
    try {
      asked = parse_isa(env);
    } catch (const std::invalid_argument&) {
      return best;  // Python reports the bad value when it imports the module
    }
    return static_cast<int>(asked) < static_cast<int>(best) ? asked : best;
  }
  return best;
}

std::atomic<int>& current() {
  static std::atomic<int> isa{static_cast<int>(initial_isa())};
  return isa;
}
}  // namespace

Isa active_isa() { return static_cast<Isa>(current().load(std::memory_order_relaxed)); }

void set_active_isa(Isa isa) {
  if (static_cast<int>(isa) > static_cast<int>(best_supported()))
    throw std::invalid_argument(std::string("ISA '") + isa_name(isa) +
                                "' is not supported by this CPU (best: " +
                                isa_name(best_supported()) + ")");
  current().store(static_cast<int>(isa));
}

std::vector<Isa> supported_isas() {
  std::vector<Isa> out;
  for (int i = 0; i <= static_cast<int>(best_supported()); ++i) out.push_back(static_cast<Isa>(i));
  return out;
}

const char* isa_name(Isa isa) {
  switch (isa) {
    case Isa::avx512: return "avx512";
    case Isa::avx2: return "avx2";
    default: return "generic";
  }
}

Isa parse_isa(const std::string& name) {
  if (name == "avx512") return Isa::avx512;
  if (name == "avx2") return Isa::avx2;
  if (name == "generic") return Isa::generic;
  throw std::invalid_argument("ISA must be one of 'avx512', 'avx2', 'generic'; got '" + name + "'");
}
}  // namespace minifw

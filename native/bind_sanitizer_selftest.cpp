// Only in a build under AddressSanitizer + UBSan (cmake -DMINIFW_SANITIZE=address):
// faults committed on purpose by the extension's own instrumented code, so the
// tests can check that a sanitizer's report ends the process (tests/test_sanitizers.py).
#ifdef MINIFW_SANITIZE_ADDRESS
#include <climits>
#include <memory>
#include <string>

#include "bind_util.h"
#include "registry.h"

namespace minifw {
MINIFW_BINDINGS(bind_sanitizer_selftest) {
  m.def(
      "sanitizer_selftest",
      [](const std::string& fault) {
        volatile int64_t n = 8;  // volatile: the compiler cannot see the faults coming
        auto buffer = std::make_unique<float[]>(n);
        volatile int big = INT_MAX;
        if (fault == "none") {
          buffer[n - 1] = 1.0f;
          return static_cast<double>(buffer[n - 1]);
        }
        if (fault == "heap_overflow") {
          buffer[n] = 1.0f;  // one past the end
          return static_cast<double>(buffer[n]);
        }
        if (fault == "signed_overflow") return static_cast<double>(big + 1);
        require(false, "fault: expected 'none', 'heap_overflow' or 'signed_overflow', got '" + fault + "'");
        return 0.0;
      },
      py::arg("fault"));
}
}  // namespace minifw
#endif

// The emulator's own checks, for its tests: kernels that break one rule each
// (native/cuda/selftest.cu), run on device "cudasim".
#include <string>

#include "bind_util.h"
#include "cuda/selftest.h"
#include "registry.h"

namespace minifw {
MINIFW_BINDINGS(bind_cudasim) {
  m.def(
      "cudasim_selftest",
      [](const std::string& fault, int64_t n) {
        require(n >= 32 && n <= 1024 && n % 32 == 0, "n: expected a multiple of 32 from 32 to 1024, got " +
                                                         std::to_string(n));
        py::array_t<float> out(n);
        float* p = out.mutable_data();
        {
          py::gil_scoped_release release;
          cudasim::selftest(fault.c_str(), p, n, nullptr);
        }
        return out;
      },
      py::arg("fault"), py::arg("n") = 64,
      "Runs native/cuda/selftest.cu's kernel with one rule broken on purpose (fault 'none': none).");
}
}  // namespace minifw

// The TF32 switches of the CUDA kernels (cuda/math_mode.h), which
// minifw.backends.cuda.matmul.allow_tf32 and minifw.backends.cudnn.allow_tf32 set,
// and the emulator's check of its tensor-core model (cuda/wmma_selftest.cu).
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>

#include <string>

#include "cuda/math_mode.h"
#include "cuda/wmma_selftest.h"
#include "registry.h"

namespace py = pybind11;

namespace minifw {
namespace {
Tf32Use parse_use(const std::string& kind) {
  if (kind == "matmul") return Tf32Use::matmul;
  if (kind == "conv") return Tf32Use::conv;
  throw py::value_error("kind must be 'matmul' or 'conv', got '" + kind + "'");
}

// A C-contiguous float32 array of `shape`, or ValueError naming `name`.
void check_operand(const char* name, const py::array_t<float>& a, py::ssize_t rows, py::ssize_t cols) {
  if (a.ndim() != 2 || a.shape(0) != rows || a.shape(1) != cols)
    throw py::value_error(std::string(name) + ": expected shape (" + std::to_string(rows) + ", " +
                          std::to_string(cols) + "), got " + std::string(py::str(py::object(a.attr("shape")))));
}
}  // namespace

MINIFW_BINDINGS(bind_math_mode) {
  m.def(
      "set_tf32", [](const std::string& kind, bool allowed) { set_tf32_allowed(parse_use(kind), allowed); },
      py::arg("kind"), py::arg("allowed"),
      "Lets float32 GEMMs ('matmul') or convolutions ('conv') on the CUDA devices use TF32 tensor cores.");
  m.def(
      "get_tf32", [](const std::string& kind) { return tf32_allowed(parse_use(kind)); }, py::arg("kind"),
      "Whether float32 GEMMs ('matmul') or convolutions ('conv') may use TF32 tensor cores.");
  m.def(
      "cudasim_wmma_selftest",
      [](const std::string& fault, py::array_t<float, py::array::c_style | py::array::forcecast> a,
         py::array_t<float, py::array::c_style | py::array::forcecast> b) {
        check_operand("a", a, 16, 8);
        check_operand("b", b, 8, 16);
        py::array_t<float> out({2, 16, 16});
        const float *pa = a.data(), *pb = b.data();
        float* p = out.mutable_data();
        {
          py::gil_scoped_release release;
          cudasim::wmma_selftest(fault.c_str(), pa, pb, p, nullptr);
        }
        return out;
      },
      py::arg("fault"), py::arg("a"), py::arg("b"),
      "Runs native/cuda/wmma_selftest.cu: two warps each compute tf32(a) @ tf32(b) (a 16 x 8, b 8 x 16) with "
      "wmma, with one rule broken on purpose (fault 'none': none).");
}
}  // namespace minifw

// Test hook for the vectorized math under the primitives: evaluates one
// vecmath function on an array (exp_shift_sum also returns the sum) with the active ISA's table. Not part of the
// ops API; tests/test_activation.py checks its accuracy over extreme ranges.
#include <string>

#include "bind_util.h"
#include "cpu/vecmath.h"
#include "registry.h"

namespace minifw {
namespace {
template <typename T>
double eval(const std::string& fn, py::array x, py::array y, double param) {
  const int64_t n = static_cast<int64_t>(x.size());
  const T* xp = in_ptr<T>(x, n, "x");
  T* yp = out_ptr<T>(y, n, "y");
  require_disjoint({{&y, "y"}}, {{&x, "x"}});
  const VecMath<T>& vm = vecmath<T>();
  const T a = static_cast<T>(param);
  if (fn == "exp") vm.exp(xp, yp, n);
  else if (fn == "log") vm.log(xp, yp, n);
  else if (fn == "sigmoid") vm.sigmoid(xp, yp, n);
  else if (fn == "tanh") vm.tanh(xp, yp, n);
  else if (fn == "elu") vm.elu(xp, yp, n, a);
  else if (fn == "pow_neg") vm.pow_neg(xp, yp, n, a);
  else if (fn == "exp_shift_sum") return static_cast<double>(vm.exp_shift_sum(xp, a, yp, n));
  else throw py::value_error("unknown vecmath function '" + fn + "'");
  return 0.0;
}
}  // namespace

MINIFW_BINDINGS(bind_vecmath) {
  m.def("_vecmath_f32", &eval<float>);
  m.def("_vecmath_f64", &eval<double>);
}
}  // namespace minifw

// Run-time choice of instruction set. Kernels for each ISA are compiled side by
// side (files *_avx512.cpp, *_avx2.cpp, and portable C++); the active ISA starts
// as the best the CPU and OS support, lowered by MINIFW_ISA=avx2|generic, and
// set_active_isa switches it to any supported one. Families pick their kernels
// by it through isa_dispatch.h.
#pragma once
#include <string>
#include <vector>

namespace minifw {
enum class Isa { generic = 0, avx2 = 1, avx512 = 2 };

Isa active_isa();
void set_active_isa(Isa isa);  // throws std::invalid_argument if unsupported here
std::vector<Isa> supported_isas();
const char* isa_name(Isa isa);
Isa parse_isa(const std::string& name);  // throws std::invalid_argument
}  // namespace minifw

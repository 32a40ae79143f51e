// The one way a kernel family offers per-ISA variants, chosen at run time.
//
// A family gathers its kernels for one dtype in a small struct of function
// pointers, its table (PoolKernels<float>, VecMath<double>, ...), and builds
// one table per ISA from the same templated source: the generic table in the
// family's portable .cpp, the others in <family>_avx2.cpp and
// <family>_avx512.cpp, which CMake compiles with that ISA's flags, on x86-64
// only. Each build is one explicit specialization of isa_variant<Table, isa>():
//
//   pooling.h:          MINIFW_DECLARE_ISA_VARIANTS(PoolKernels<float>);
//   pooling_avx2.cpp:   MINIFW_ISA_VARIANT(PoolKernels<float>, avx2, make_pool_kernels_simd<F32x8>())
//   pooling.cpp:        const PoolKernels<T>& k = select_isa_variant<PoolKernels<T>>();
//
// A caller selects once per call, before its loops, and calls through the
// table inside them: the selection is a comparison or two and a call that
// returns an already built table.
//
// Files compiled with ISA flags define their variants and never call
// select_isa_variant: an inline or template function instantiated in such a
// file could be the copy the linker keeps for every caller.
#pragma once
#include "isa.h"

namespace minifw {

// The table built for one ISA. There is no general definition: every table
// type declares its specializations with MINIFW_DECLARE_ISA_VARIANTS and
// defines each with MINIFW_ISA_VARIANT.
template <typename Table, Isa isa>
const Table& isa_variant();

// The variant for `isa` (the active ISA by default): the best one in this
// build that needs no more than `isa`. On x86-64 every family builds all three;
// elsewhere only the generic variants are compiled, and the active ISA is
// always generic.
template <typename Table>
const Table& select_isa_variant(Isa isa = active_isa()) {
#if defined(MINIFW_X86)
  if (isa >= Isa::avx512) return isa_variant<Table, Isa::avx512>();
  if (isa >= Isa::avx2) return isa_variant<Table, Isa::avx2>();
#endif
  return isa_variant<Table, Isa::generic>();
}

}  // namespace minifw

// In the family's header, inside namespace minifw: Table has a generic, an
// avx2 and an avx512 variant. (A family with nothing better for AVX-512 than
// its AVX2 code defines its avx512 variant as a copy of the avx2 one; see
// native/README.md.)
#define MINIFW_DECLARE_ISA_VARIANTS(Table)                        \
  template <>                                                     \
  const Table& isa_variant<Table, ::minifw::Isa::generic>();      \
  template <>                                                     \
  const Table& isa_variant<Table, ::minifw::Isa::avx2>();         \
  template <>                                                     \
  const Table& isa_variant<Table, ::minifw::Isa::avx512>()

// In the file compiled for `isa` (generic, avx2 or avx512), inside namespace
// minifw and outside any anonymous namespace: the variant is the value of the
// expression after `isa`, built on first use and kept.
#define MINIFW_ISA_VARIANT(Table, isa, ...)                       \
  template <>                                                     \
  const Table& isa_variant<Table, ::minifw::Isa::isa>() {         \
    static const Table table = __VA_ARGS__;                       \
    return table;                                                 \
  }

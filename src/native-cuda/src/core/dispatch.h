// The ABI passes the element type and the reduction as run-time codes; the kernels of every backend
// are templates over them. These two functions are the only place that turns a code into a template
// argument: a backend writes `with_op(op, [&](auto o) { return kernel<T, o.value>(...); })` and gets
// every op, so a new op or dtype is added here once instead of in each caller's switch.
// The codes were validated at the ABI (core/api_coll.cpp); an unknown one cannot reach this.
#pragma once
#include <type_traits>

#include "core/abi.h"

namespace symmem {

template <int V>
using OpConstant = std::integral_constant<int, V>;

// Calls f(OpConstant<op>{}) for op in {SUM, AVG, MAX, MIN}.
template <class F>
decltype(auto) with_op(int op, F&& f) {
  switch (op) {
    case SYMMEM_SUM: return f(OpConstant<SYMMEM_SUM>{});
    case SYMMEM_AVG: return f(OpConstant<SYMMEM_AVG>{});
    case SYMMEM_MAX: return f(OpConstant<SYMMEM_MAX>{});
    default: return f(OpConstant<SYMMEM_MIN>{});
  }
}

template <class T>
struct TypeTag {
  using type = T;
};

// Calls f(TypeTag<X>{}) with X the backend's own type for the dtype: each backend has its own
// 16-bit types (CUDA's __nv_bfloat16/__half, the host's software ones), so it names them here.
template <class Float32, class BFloat16, class Float16, class F>
decltype(auto) with_dtype(int dtype, F&& f) {
  switch (dtype) {
    case SYMMEM_FLOAT32: return f(TypeTag<Float32>{});
    case SYMMEM_BFLOAT16: return f(TypeTag<BFloat16>{});
    default: return f(TypeTag<Float16>{});
  }
}

}  // namespace symmem

// SameActivations (kernels.hpp): a per-thread number that changes with every scope, so that
// what a GEMM saved in one scope can never be taken for another scope's activations.
#include "kernels/kernels.hpp"

namespace pocket::kernels {
namespace {
thread_local uint64_t t_scopes_opened = 0;
thread_local uint64_t t_live_scope = 0;
}  // namespace

SameActivations::SameActivations() { t_live_scope = ++t_scopes_opened; }
SameActivations::~SameActivations() { t_live_scope = 0; }  // scopes do not nest: an inner one ends reuse
uint64_t same_activations_scope() { return t_live_scope; }

bool DerivedActivations::reuse(const void* a, size_t a_stride, int64_t m, int64_t blocks) {
    const uint64_t scope = t_live_scope;
    if (scope != 0 && scope_ == scope && a_ == a && a_stride_ == a_stride && m_ == m && blocks_ == blocks) return true;
    a_ = a, a_stride_ = a_stride, m_ = m, blocks_ = blocks, scope_ = scope;
    return false;
}

}  // namespace pocket::kernels

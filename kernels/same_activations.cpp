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

}  // namespace pocket::kernels

// avx512 kernels (placeholder: every type keeps the scalar reference for now).
#include "kernels/isa_table.hpp"

namespace pocket::kernels {

void fill_avx512(IsaTable&) {}

}  // namespace pocket::kernels

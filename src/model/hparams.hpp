#pragma once
#include "pocket/model.hpp"

namespace pocket {

// Reads <arch>.* keys; the rope mode comes from the architecture (llama: NORM; qwen2,
// phi3, gemma: NEOX).
HParams read_hparams(const GgufFile& file);

}  // namespace pocket

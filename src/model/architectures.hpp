#pragma once
// One factory per architecture (src/model/arch/<name>.cpp): reads and checks the weights,
// returns the object that builds the forward graph.
#include "pocket/model.hpp"

#include <memory>

namespace pocket {

std::unique_ptr<Architecture> make_llama(const Model& m);
std::unique_ptr<Architecture> make_qwen2(const Model& m);
std::unique_ptr<Architecture> make_phi3(const Model& m);
std::unique_ptr<Architecture> make_gemma(const Model& m);
std::unique_ptr<Architecture> make_qwen3(const Model& m);
std::unique_ptr<Architecture> make_qwen3moe(const Model& m);
std::unique_ptr<Architecture> make_gemma2(const Model& m);
std::unique_ptr<Architecture> make_gemma3(const Model& m);

// By general.architecture; throws naming the file when pocket cannot run it.
std::unique_ptr<Architecture> make_architecture(const Model& m);

}  // namespace pocket

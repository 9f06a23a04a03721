#include "model/architectures.hpp"

#include "pocket/error.hpp"

namespace pocket {

std::unique_ptr<Architecture> make_architecture(const Model& m) {
    const std::string& arch = m.hparams().arch;
    if (arch == "llama") return make_llama(m);
    if (arch == "qwen2") return make_qwen2(m);
    if (arch == "phi3") return make_phi3(m);
    if (arch == "gemma") return make_gemma(m);
    if (arch == "qwen3") return make_qwen3(m);
    if (arch == "qwen3moe") return make_qwen3moe(m);
    if (arch == "gemma2") return make_gemma2(m);
    if (arch == "gemma3") return make_gemma3(m);
    throw Error("{}: architecture '{}' is not supported (llama, qwen2, qwen3, qwen3moe, phi3, gemma, gemma2, gemma3)", m.file().path(), arch);
}

}  // namespace pocket

#include "model/architectures.hpp"

#include "pocket/error.hpp"

namespace pocket {

std::unique_ptr<Architecture> make_architecture(const Model& m) {
    const std::string& arch = m.hparams().arch;
    if (arch == "llama") return make_llama(m);
    if (arch == "qwen2") return make_qwen2(m);
    if (arch == "phi3") return make_phi3(m);
    if (arch == "gemma") return make_gemma(m);
    throw Error("{}: architecture '{}' is not supported (llama, qwen2, phi3, gemma)", m.file().path(), arch);
}

}  // namespace pocket

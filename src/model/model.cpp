#include "pocket/model.hpp"

#include "model/architectures.hpp"
#include "model/hparams.hpp"
#include "pocket/error.hpp"
#include "pocket/tokenizer.hpp"
#include "kernels/kernels.hpp"

#include <cstdlib>
#include <fmt/format.h>
#include <spdlog/spdlog.h>

namespace pocket {

Model::Model(GgufFile file) : file_(std::move(file)) {}
Model::~Model() = default;

std::unique_ptr<Model> Model::load(const std::string& path, const ModelLoadOptions& options) {
    GgufOpenOptions open;
    open.use_mmap = options.use_mmap;
    open.lock = options.mlock;
    std::unique_ptr<Model> m(new Model(GgufFile::open(path, open)));
    m->options_ = options;
    m->hparams_ = read_hparams(m->file_);
    m->tokenizer_ = std::make_unique<Tokenizer>(Vocab::from_gguf(m->file_));
    if (m->tokenizer_->vocab().size() != m->hparams_.n_vocab)
        spdlog::warn("{}: the vocabulary has {} tokens but the model {}", path, m->tokenizer_->vocab().size(), m->hparams_.n_vocab);
    m->arch_ = make_architecture(*m);
    spdlog::info("{}: {} with {} layers, n_embd {}, {} heads ({} kv), vocab {}", path, m->hparams_.arch, m->hparams_.n_layer,
                 m->hparams_.n_embd, m->hparams_.n_head, m->hparams_.n_head_kv, m->hparams_.n_vocab);
    return m;
}

Tensor* Model::optional_weight(const std::string& name, std::initializer_list<int64_t> shape) const {
    if (auto it = weights_.find(name); it != weights_.end()) return &it->second;
    const GgufTensorInfo* info = file_.find_tensor(name);
    if (!info) return nullptr;
    std::array<int64_t, 4> want{1, 1, 1, 1};
    size_t i = 0;
    for (int64_t d : shape) want[i++] = d;
    if (info->ne != want) {
        auto text = [](const std::array<int64_t, 4>& ne) { return fmt::format("[{}, {}, {}, {}]", ne[0], ne[1], ne[2], ne[3]); };
        throw Error("{}: tensor '{}' has shape {}, expected {}", file_.path(), name, text(info->ne), text(want));
    }
    auto [it, _] = weights_.emplace(name, tensor_from_gguf(*info));
    return &it->second;
}

void Model::pack_for_cpu(Tensor& w) const {
    if (!options_.repack || w.packed || !w.data || w.ne[2] != 1 || w.ne[3] != 1) return;
    // Only where a SIMD kernel reads the packed layout: the scalar one gains nothing.
    const kernels::Isa isa = kernels::active_isa();
    if (isa != kernels::Isa::avx2 && isa != kernels::Isa::avx512) return;
    const kernels::RepackKernels* rk = kernels::repack_kernels(w.type);
    if (!rk || w.ne[1] % rk->rows_per_group != 0) return;
    const auto owned = weights_.find(w.get_name());
    if (owned == weights_.end() || &owned->second != &w) return;  // not one of this model's weights
    const size_t bytes = rk->packed_bytes(w.ne[1], w.ne[0]);
    void* raw = std::aligned_alloc(64, (bytes + 63) / 64 * 64);
    if (!raw) throw Error("{}: out of memory repacking '{}' ({} bytes)", file_.path(), w.get_name(), bytes);
    packed_.emplace_back(raw);
    rk->pack(w.data, w.nb[1], w.ne[1], w.ne[0], raw);
    w.packed = raw;
}

void Model::FreeDeleter::operator()(void* p) const { std::free(p); }

Tensor* Model::weight(const std::string& name, std::initializer_list<int64_t> shape) const {
    Tensor* t = optional_weight(name, shape);
    if (!t) throw Error("{}: missing tensor '{}'", file_.path(), name);
    return t;
}

uint64_t Model::n_params() const {
    uint64_t n = 0;
    for (const auto& t : file_.tensors()) n += static_cast<uint64_t>(t.n_elements());
    return n;
}

uint64_t Model::weight_bytes() const {
    uint64_t n = 0;
    for (const auto& t : file_.tensors()) n += t.n_bytes;
    return n;
}

std::string Model::type_name() const {
    // llama.cpp's names for general.file_type (llama_ftype).
    static const std::pair<uint32_t, const char*> kNames[] = {
        {0, "all F32"}, {1, "F16"}, {2, "Q4_0"}, {3, "Q4_1"}, {7, "Q8_0"}, {8, "Q5_0"}, {9, "Q5_1"},
        {10, "Q2_K - Medium"}, {11, "Q3_K - Small"}, {12, "Q3_K - Medium"}, {13, "Q3_K - Large"},
        {14, "Q4_K - Small"}, {15, "Q4_K - Medium"}, {16, "Q5_K - Small"}, {17, "Q5_K - Medium"},
        {18, "Q6_K"}, {21, "Q2_K - Small"}, {25, "IQ4_NL - 4.5 bpw"}, {30, "IQ4_XS - 4.25 bpw"}, {32, "BF16"},
    };
    if (auto ft = file_.find_as<uint32_t>("general.file_type"))
        for (const auto& [id, name] : kNames)
            if (id == *ft) return name;
    return "unknown";
}

}  // namespace pocket

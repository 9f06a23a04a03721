#include "pocket/model.hpp"

#include "model/architectures.hpp"
#include "model/hparams.hpp"
#include "pocket/error.hpp"
#include "pocket/tokenizer.hpp"

#include <algorithm>
#include <charconv>
#include <cstdlib>
#include <thread>
#include <fmt/format.h>
#include <spdlog/spdlog.h>

namespace pocket {

Model::Model(GgufFile file) : file_(std::move(file)) {}
Model::~Model() = default;

std::unique_ptr<Model> Model::load(const std::string& path, const ModelLoadOptions& options) {
    GgufOpenOptions open;
    open.use_mmap = options.use_mmap;
    open.lock = options.mlock;
    GgufFile file = GgufFile::open(path, open);
    for (const std::string& spec : options.kv_overrides) file.override_kv(spec);
    std::unique_ptr<Model> m(new Model(std::move(file)));
    m->options_ = options;
    m->hparams_ = read_hparams(m->file_);
    m->tokenizer_ = std::make_unique<Tokenizer>(Vocab::from_gguf(m->file_));
    if (m->tokenizer_->vocab().size() != m->hparams_.n_vocab)
        spdlog::warn("{}: the vocabulary has {} tokens but the model {}", path, m->tokenizer_->vocab().size(), m->hparams_.n_vocab);
    // The context a Context would make by default: the model's, at most 4096.
    const uint32_t n_ctx = options.n_ctx ? options.n_ctx : std::min<uint32_t>(m->hparams_.n_ctx_train ? m->hparams_.n_ctx_train : 4096, 4096);
    m->placement_ = plan_placement(m->file_, m->hparams_, {options.gpu_layers, options.device, n_ctx, options.n_ubatch});
    m->arch_ = make_architecture(*m);  // requests the weights it reads, per layer
    m->load_weights();
    spdlog::info("{}: {} with {} layers, n_embd {}, {} heads ({} kv), vocab {}", path, m->hparams_.arch, m->hparams_.n_layer,
                 m->hparams_.n_embd, m->hparams_.n_head, m->hparams_.n_head_kv, m->hparams_.n_vocab);
    return m;
}

void Model::load_weights() {
    const size_t n_dev = placement_.devices.size();
    std::vector<std::vector<Tensor*>> per_device(n_dev);
    weight_bytes_.assign(n_dev, 0);
    for (auto& [key, t] : weights_) {
        weight_bytes_[static_cast<size_t>(key.device)] += t.nbytes();
        if (!key.input) per_device[static_cast<size_t>(key.device)].push_back(&t);  // the lookup reads the file's layout
    }
    // Bytes the embedding lookup keeps reading from the file (a tied output matrix moved to
    // a device shares them) must stay; the rest of a moved weight's pages can go.
    // A device may release a weight in pieces, so a range is kept when it overlaps one.
    std::vector<std::pair<const uint8_t*, const uint8_t*>> kept;
    for (const auto& [key, t] : weights_)
        if (key.input) kept.emplace_back(static_cast<const uint8_t*>(t.data), static_cast<const uint8_t*>(t.data) + t.nbytes());
    WeightLoadOptions lo;
    lo.repack = options_.repack;
    lo.copy_mapped = options_.use_mmap && options_.repack;  // --no-repack: weights stay in the mapping
    lo.release_source = [this, &kept](const void* data, size_t bytes) {
        const auto* begin = static_cast<const uint8_t*>(data);
        for (const auto& [kb, ke] : kept)
            if (begin < ke && kb < begin + bytes) return;
        file_.release_pages(data, bytes);
    };
    lo.n_threads = options_.n_threads > 0 ? options_.n_threads : static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
    for (size_t d = 0; d < n_dev; ++d) {
        Device& dev = *placement_.devices[d];
        if (options_.progress) lo.progress = [&](size_t done, size_t total) { options_.progress(dev.name(), done, total); };
        for (auto& b : dev.load_weights(per_device[d], lo)) weight_buffers_.push_back(std::move(b));
    }
    loaded_ = true;
}

size_t Model::weight_bytes_on(size_t device_index) const {
    return device_index < weight_bytes_.size() ? weight_bytes_[device_index] : 0;
}

Tensor* Model::optional_weight(const std::string& name, std::initializer_list<int64_t> shape, int layer) const {
    if (layer == kLayerFromName) {
        layer = -1;
        if (name.rfind("blk.", 0) == 0) std::from_chars(name.data() + 4, name.data() + name.size(), layer);
        else if (name.rfind("output", 0) == 0) layer = static_cast<int>(hparams_.n_layer);
    }
    const GgufTensorInfo* info = file_.find_tensor(name);
    if (!info) return nullptr;
    int device = placement_.device_index(layer);
    // A type the layer's device cannot decode stays on the CPU (the last device), with its ops.
    if (!placement_.devices[static_cast<size_t>(device)]->holds_weight_type(info->type))
        device = static_cast<int>(placement_.devices.size()) - 1;
    const WeightKey key{name, device, layer < 0};
    if (auto it = weights_.find(key); it != weights_.end()) return &it->second;
    if (loaded_) throw Error("{}: weight '{}' requested after the model was loaded", file_.path(), name);
    std::array<int64_t, 4> want{1, 1, 1, 1};
    size_t i = 0;
    for (int64_t d : shape) want[i++] = d;
    if (info->ne != want) {
        auto text = [](const std::array<int64_t, 4>& ne) { return fmt::format("[{}, {}, {}, {}]", ne[0], ne[1], ne[2], ne[3]); };
        throw Error("{}: tensor '{}' has shape {}, expected {}", file_.path(), name, text(info->ne), text(want));
    }
    auto [it, _] = weights_.emplace(key, tensor_from_gguf(*info));
    return &it->second;
}

Tensor* Model::weight(const std::string& name, std::initializer_list<int64_t> shape, int layer) const {
    Tensor* t = optional_weight(name, shape, layer);
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

uint64_t Model::bytes_read_per_token() const {
    uint64_t n = 0;
    for (const auto& [key, t] : weights_) {
        const GgufTensorInfo& info = file_.tensor(key.name);  // the file's bytes: a repacked copy holds as many
        const auto rows = static_cast<uint64_t>(info.ne[1] * info.ne[2] * info.ne[3]);
        if (key.input) n += info.n_bytes / std::max<uint64_t>(rows, 1);  // the lookup reads one row
        else if (hparams_.n_expert > 0 && info.ne[2] == hparams_.n_expert) n += info.n_bytes / hparams_.n_expert * hparams_.n_expert_used;
        else n += info.n_bytes;
    }
    return n;
}

std::string Model::type_name() const {
    // llama.cpp's names for general.file_type (llama_ftype).
    static const std::pair<uint32_t, const char*> kNames[] = {
        {0, "all F32"}, {1, "F16"}, {2, "Q4_0"}, {3, "Q4_1"}, {7, "Q8_0"}, {8, "Q5_0"}, {9, "Q5_1"},
        {10, "Q2_K - Medium"}, {11, "Q3_K - Small"}, {12, "Q3_K - Medium"}, {13, "Q3_K - Large"},
        {14, "Q4_K - Small"}, {15, "Q4_K - Medium"}, {16, "Q5_K - Small"}, {17, "Q5_K - Medium"},
        {18, "Q6_K"}, {19, "IQ2_XXS - 2.0625 bpw"}, {20, "IQ2_XS - 2.3125 bpw"}, {21, "Q2_K - Small"},
        {22, "IQ3_XS - 3.3 bpw"}, {23, "IQ3_XXS - 3.0625 bpw"}, {24, "IQ1_S - 1.5625 bpw"}, {25, "IQ4_NL - 4.5 bpw"},
        {26, "IQ3_S - 3.4375 bpw"}, {27, "IQ3_S mix - 3.66 bpw"}, {28, "IQ2_S - 2.5 bpw"}, {29, "IQ2_M - 2.7 bpw"},
        {30, "IQ4_XS - 4.25 bpw"}, {31, "IQ1_M - 1.75 bpw"}, {32, "BF16"}, {36, "TQ1_0 - 1.69 bpw ternary"},
        {37, "TQ2_0 - 2.06 bpw ternary"}, {38, "MXFP4 MoE"},
    };
    if (auto ft = file_.find_as<uint32_t>("general.file_type"))
        for (const auto& [id, name] : kNames)
            if (id == *ft) return name;
    return "unknown";
}

}  // namespace pocket

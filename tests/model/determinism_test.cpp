// pocket's promise: the logits do not depend on the thread count or the batch sizes.
#include "pocket/backend.hpp"
#include "pocket/context.hpp"
#include "pocket/device.hpp"
#include "pocket/error.hpp"
#include "pocket/model.hpp"
#include "pocket/quantize.hpp"
#include "kernels/kernels.hpp"
#include "shared_data.hpp"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <cstring>
#include <fstream>
#include <iostream>
#include <unistd.h>

using namespace pocket;

namespace {

std::vector<float> all_logits(const Model& m, const std::vector<int32_t>& tokens, int threads, uint32_t ubatch, bool one_by_one,
                              bool flash_attn = true) {
    if (tokens.empty()) return {};
    Context ctx(m, {.n_ctx = 256, .n_batch = ubatch, .n_ubatch = ubatch, .n_threads = threads, .flash_attn = flash_attn});
    std::vector<float> out;
    if (one_by_one) {
        for (int32_t t : tokens) {
            ctx.decode(std::span<const int32_t>(&t, 1), true);
            out.insert(out.end(), ctx.logits(0).begin(), ctx.logits(0).end());
        }
    } else {
        ctx.decode(tokens, true);
        for (size_t r = 0; r < ctx.n_logits(); ++r) out.insert(out.end(), ctx.logits(r).begin(), ctx.logits(r).end());
    }
    return out;
}

// A prompt of `n_batch_first` tokens as batches (-tb threads), then the rest token by token
// (-t threads), in one context: the pool switches its thread count between computes.
std::vector<float> mixed_logits(const Model& m, const std::vector<int32_t>& tokens, int threads, int threads_batch, size_t n_batch_first) {
    Context ctx(m, {.n_ctx = 256, .n_batch = 7, .n_ubatch = 7, .n_threads = threads, .n_threads_batch = threads_batch});
    std::vector<float> out;
    ctx.decode(std::span<const int32_t>(tokens.data(), n_batch_first), true);
    for (size_t r = 0; r < ctx.n_logits(); ++r) out.insert(out.end(), ctx.logits(r).begin(), ctx.logits(r).end());
    for (size_t i = n_batch_first; i < tokens.size(); ++i) {
        ctx.decode(std::span<const int32_t>(&tokens[i], 1), true);
        out.insert(out.end(), ctx.logits(0).begin(), ctx.logits(0).end());
    }
    return out;
}

}  // namespace

class Determinism : public ::testing::TestWithParam<const char*> {};

TEST_P(Determinism, BitwiseAcrossThreadsAndBatches) {
    POCKET_REQUIRE_SHARED(shared);
    auto model = Model::load((shared / "reference" / GetParam()).string());
    std::ifstream in(shared / "reference" / "tokens" / "seq64.json");
    const auto tokens = nlohmann::json::parse(in).get<std::vector<int32_t>>();
    const auto base = all_logits(*model, tokens, 1, 512, false);
    for (auto [threads, ubatch, one] : {std::tuple{2, 512u, false}, std::tuple{3, 7u, false}, std::tuple{2, 16u, false}, std::tuple{1, 1u, true}}) {
        const auto other = all_logits(*model, tokens, threads, ubatch, one);
        ASSERT_EQ(other.size(), base.size());
        EXPECT_EQ(0, std::memcmp(other.data(), base.data(), base.size() * sizeof(float)))
            << "threads " << threads << ", ubatch " << ubatch << (one ? ", token by token" : "");
    }
}

// -fa off (attention as separate ops) keeps the promise too.
TEST_P(Determinism, WithoutFlashAttentionBitwiseAcrossThreadsAndBatches) {
    POCKET_REQUIRE_SHARED(shared);
    auto model = Model::load((shared / "reference" / GetParam()).string());
    std::ifstream in(shared / "reference" / "tokens" / "seq64.json");
    const auto tokens = nlohmann::json::parse(in).get<std::vector<int32_t>>();
    const auto base = all_logits(*model, tokens, 1, 512, false, false);
    for (auto [threads, ubatch, one] : {std::tuple{2, 512u, false}, std::tuple{3, 7u, false}, std::tuple{1, 1u, true}}) {
        const auto other = all_logits(*model, tokens, threads, ubatch, one, false);
        ASSERT_EQ(other.size(), base.size());
        EXPECT_EQ(0, std::memcmp(other.data(), base.data(), base.size() * sizeof(float)))
            << "-fa off, threads " << threads << ", ubatch " << ubatch << (one ? ", token by token" : "");
    }
}

// -tb apart from -t (llama.cpp's batch threads): the same bits, whichever count each part uses.
TEST_P(Determinism, BitwiseWithBatchThreadsApart) {
    POCKET_REQUIRE_SHARED(shared);
    auto model = Model::load((shared / "reference" / GetParam()).string());
    std::ifstream in(shared / "reference" / "tokens" / "seq64.json");
    const auto tokens = nlohmann::json::parse(in).get<std::vector<int32_t>>();
    const auto base = all_logits(*model, tokens, 1, 512, false);
    for (auto [threads, threads_batch] : {std::pair{1, 3}, std::pair{3, 1}, std::pair{2, 4}}) {
        const auto other = mixed_logits(*model, tokens, threads, threads_batch, 40);
        ASSERT_EQ(other.size(), base.size());
        EXPECT_EQ(0, std::memcmp(other.data(), base.data(), base.size() * sizeof(float)))
            << "-t " << threads << " -tb " << threads_batch;
    }
}

// On a GPU (lavapipe's Vulkan0 in CI) the promise is the same for the batch sizes, and run
// after run: every output is summed in a fixed order, never in the order threads finish.
TEST_P(Determinism, OnTheGpuBitwiseAcrossBatchesAndRuns) {
    POCKET_REQUIRE_SHARED(shared);
    const std::vector<Device*> gpus = gpu_devices();
    if (gpus.empty()) GTEST_SKIP() << "no GPU device on this machine";
    auto model = Model::load((shared / "reference" / GetParam()).string(),
                             {.gpu_layers = GpuLayers::all(), .device = std::string(gpus.front()->name())});
    ASSERT_EQ(model->placement().n_gpu_layers, model->hparams().n_layer + 1);
    std::ifstream in(shared / "reference" / "tokens" / "seq64.json");
    const auto tokens = nlohmann::json::parse(in).get<std::vector<int32_t>>();
    const auto base = all_logits(*model, tokens, 2, 512, false);
    for (auto [ubatch, one] : {std::tuple{512u, false}, std::tuple{7u, false}, std::tuple{16u, false}, std::tuple{1u, true}}) {
        const auto other = all_logits(*model, tokens, 2, ubatch, one);
        ASSERT_EQ(other.size(), base.size());
        EXPECT_EQ(0, std::memcmp(other.data(), base.data(), base.size() * sizeof(float)))
            << gpus.front()->name() << ", ubatch " << ubatch << (one ? ", token by token" : "");
    }
}

// Several sequences in one context (serve's slots): each token is a SeqToken of its own
// sequence, batches mix sequences in changing amounts and orders, and one sequence is cut back
// and continued. Every sequence's logits must be bitwise those it gets alone.
static void expect_sequences_as_alone(const Model& m, const std::vector<int32_t>& tokens, bool flash_attn, int threads,
                                      const std::string& where) {
    const std::vector<std::vector<int32_t>> seqs = {{tokens.begin(), tokens.begin() + 40},
                                                    {tokens.begin() + 10, tokens.end()},
                                                    {tokens.begin() + 5, tokens.begin() + 30}};
    std::vector<std::vector<float>> alone;
    for (const auto& s : seqs) alone.push_back(all_logits(m, s, threads, 512, false, flash_attn));
    const size_t n_vocab = m.hparams().n_vocab;
    // -c 300 over 3 sequences: 100 positions each; ubatches of 16 split the batches unevenly.
    Context ctx(m, {.n_ctx = 300, .n_batch = 64, .n_ubatch = 16, .n_threads = threads, .flash_attn = flash_attn, .n_seq = 3});
    ASSERT_EQ(ctx.n_ctx(), 100u);
    // Every position's logits, as far as a step kept them: even steps keep every token's,
    // odd steps only every seventh position's (so that some ubatches keep none).
    std::vector<std::vector<std::vector<float>>> got(seqs.size());
    for (size_t i = 0; i < seqs.size(); ++i) got[i].resize(seqs[i].size());
    size_t n_kept = 0;
    auto run = [&] {
        std::vector<size_t> done = {ctx.n_past(0), ctx.n_past(1), ctx.n_past(2)};
        for (int step = 0;; ++step) {
            std::vector<SeqToken> batch;
            std::vector<size_t> pos;
            for (size_t k = 0; k < seqs.size(); ++k) {
                const size_t i = (k + static_cast<size_t>(step)) % seqs.size();  // rotating order
                const size_t n = std::min<size_t>(seqs[i].size() - done[i], (step * 7 + i * 3) % 9 + 1);
                for (size_t j = 0; j < n; ++j) {
                    const size_t p = done[i] + j;
                    batch.push_back({seqs[i][p], static_cast<uint32_t>(i), step % 2 == 0 || p % 7 == 6});
                    pos.push_back(p);
                }
                done[i] += n;
            }
            if (batch.empty()) break;
            ctx.decode_sequences(batch);
            size_t row = 0;
            for (size_t r = 0; r < batch.size(); ++r)
                if (batch[r].logits) {
                    const auto l = ctx.logits(row++);
                    got[batch[r].seq][pos[r]].assign(l.begin(), l.end());
                    ++n_kept;
                }
            ASSERT_EQ(ctx.n_logits(), row);
        }
    };
    auto compare = [&](size_t i, const char* when) {
        size_t compared = 0;
        for (size_t p = 0; p < seqs[i].size(); ++p) {
            if (got[i][p].empty()) continue;
            ++compared;
            EXPECT_EQ(0, std::memcmp(got[i][p].data(), alone[i].data() + p * n_vocab, n_vocab * sizeof(float)))
                << where << ", sequence " << i << ", position " << p << when;
        }
        EXPECT_GT(compared, 5u) << "too few logits kept to compare";
    };
    run();
    for (size_t i = 0; i < seqs.size(); ++i) {
        ASSERT_EQ(ctx.n_past(static_cast<uint32_t>(i)), seqs[i].size());
        compare(i, "");
    }
    EXPECT_LT(n_kept, seqs[0].size() + seqs[1].size() + seqs[2].size()) << "every logit was kept: the sparse case went untested";
    // Cut sequence 1 back to 20 tokens and sequence 0 to none; evaluate both again beside
    // nothing of 2's (which is complete): the same logits again.
    ctx.truncate(1, 20);
    ctx.truncate(0, 0);
    for (auto* g : {&got[0], &got[1]})
        for (auto& v : *g) v.clear();
    run();
    for (size_t i = 0; i < 2; ++i) compare(i, " after truncate");
    // A sequence cannot outgrow its share.
    std::vector<SeqToken> too_many(101, SeqToken{tokens[0], 2, false});
    EXPECT_THROW(ctx.decode_sequences(too_many), Error);
    EXPECT_EQ(ctx.n_past(2), seqs[2].size()) << "a refused batch must leave the context as it was";
    EXPECT_THROW(ctx.decode_sequences(std::vector<SeqToken>{{tokens[0], 3, false}}), Error);
}

TEST_P(Determinism, SequencesSharingAContextGiveTheirLogitsAlone) {
    POCKET_REQUIRE_SHARED(shared);
    auto model = Model::load((shared / "reference" / GetParam()).string());
    std::ifstream in(shared / "reference" / "tokens" / "seq64.json");
    const auto tokens = nlohmann::json::parse(in).get<std::vector<int32_t>>();
    expect_sequences_as_alone(*model, tokens, true, 2, "CPU");
    expect_sequences_as_alone(*model, tokens, false, 2, "CPU, -fa off");
}

TEST_P(Determinism, SequencesSharingAContextOnTheGpu) {
    POCKET_REQUIRE_SHARED(shared);
    const std::vector<Device*> gpus = gpu_devices();
    if (gpus.empty()) GTEST_SKIP() << "no GPU device on this machine";
    auto model = Model::load((shared / "reference" / GetParam()).string(),
                             {.gpu_layers = GpuLayers::all(), .device = std::string(gpus.front()->name())});
    std::ifstream in(shared / "reference" / "tokens" / "seq64.json");
    const auto tokens = nlohmann::json::parse(in).get<std::vector<int32_t>>();
    expect_sequences_as_alone(*model, tokens, true, 2, std::string(gpus.front()->name()));
}

INSTANTIATE_TEST_SUITE_P(Models, Determinism,
                         ::testing::Values("models/rand-llama-f32.gguf", "models/rand-llama-pure-q4_0.gguf",
                                           "models/rand-llama-mix-q4_k_m.gguf", "models/rand-qwen2-f32.gguf",
                                           "g_arch2/rand-qwen3-f32.gguf", "g_arch2/rand-gemma2-f32.gguf",
                                           "g_arch2/rand-gemma3-f32.gguf", "g_arch2/rand-qwen3moe-f32.gguf",
                                           "g_arch2/rand-llama-moe-f32.gguf"),
                         [](const auto& test) {
                             std::string n = std::filesystem::path(test.param).filename().string();
                             for (auto& ch : n)
                                 if (!std::isalnum(static_cast<unsigned char>(ch))) ch = '_';
                             return n;
                         });

// Load-time repacking (8 rows interleaved, one record layout per type) changes the layout,
// never the bits: per repacked type, a model whose matrices are all of that type gives the
// same logits repacked and in the file's layout, and every matrix really took the repacked
// path (the kernels test checks each repacked GEMM; this checks that the CPU device picks it).
struct RepackedModel {
    GgmlType type;     // the type of every matrix but the embeddings
    const char* file;  // under reference/models; nullptr: quantized here from the f16 model
    std::string name() const { return std::string(ggml_type_info(type).name); }
};

class RepackedWeights : public ::testing::TestWithParam<RepackedModel> {};

TEST_P(RepackedWeights, GiveTheSameLogitsAndAreTaken) {
    POCKET_REQUIRE_SHARED(shared);
    const RepackedModel& param = GetParam();
    const auto models = shared / "reference" / "models";
    std::string path;
    if (param.file) {
        path = (models / param.file).string();
    } else {
        // No shared model of this type: quantize the f16 one (--pure, so every matrix has it).
        path = (std::filesystem::path(::testing::TempDir()) / ("repacked-" + param.name() + "-" + std::to_string(::getpid()) + ".gguf")).string();
        const QuantFileType* ft = find_quant_file_type(param.name());
        ASSERT_NE(ft, nullptr);
        quantize_model((models / "rand-llama-pure-f16.gguf").string(), path, *ft, {.n_threads = 2, .pure = true});
    }
    auto packed = Model::load(path);
    auto plain = Model::load(path, {.repack = false});

    auto in_own_layout = [](const Tensor* t) { return t->buffer && !t->buffer->plain_layout(); };
    const auto isa = kernels::active_isa();
    const bool has_repacked_kernels = isa == kernels::Isa::avx2 || isa == kernels::Isa::avxvnni || isa == kernels::Isa::avx512;
    int matrices = 0;
    for (const GgufTensorInfo& info : packed->file().tensors()) {
        if (info.n_dims != 2 || info.name == "token_embd.weight") continue;
        const std::string name(info.name);
        const Tensor* t = packed->weight(name, {info.ne[0], info.ne[1]});
        EXPECT_FALSE(in_own_layout(plain->weight(name, {info.ne[0], info.ne[1]}))) << name << " repacked under --no-repack";
        if (info.type != param.type) continue;
        ++matrices;
        if (has_repacked_kernels) {
            EXPECT_TRUE(in_own_layout(t)) << name << ": the repacked path was not taken";
        }
    }
    EXPECT_GE(matrices, 14) << "the model has too few " << param.name() << " matrices to test";
    if (!has_repacked_kernels) std::cout << "[ observed ] " << kernels::isa_name(isa) << ": no repacked kernel, compared the plain path with itself\n";

    std::ifstream in(shared / "reference" / "tokens" / "seq64.json");
    const auto tokens = nlohmann::json::parse(in).get<std::vector<int32_t>>();
    for (auto [threads, ubatch, one] : {std::tuple{1, 512u, false}, std::tuple{2, 7u, false}, std::tuple{2, 1u, true}}) {
        const auto a = all_logits(*packed, tokens, threads, ubatch, one);
        const auto b = all_logits(*plain, tokens, threads, ubatch, one);
        ASSERT_EQ(a.size(), b.size());
        EXPECT_EQ(0, std::memcmp(a.data(), b.data(), a.size() * sizeof(float))) << "threads " << threads << ", ubatch " << ubatch;
    }
    packed.reset();
    plain.reset();
    if (!param.file) std::filesystem::remove(path);
}

// On the CPU every weight but the embedding table leaves the mapped file at load (repacked or
// copied), vectors too: a norm read in place faulted in the whole page-cache folio around it
// on kernels with large folios, ~1.2 MiB of repacked neighbours per norm held resident again.
// --no-repack keeps them all in the mapping.
TEST(LoadedWeights, LeaveTheMappedFileButTheEmbedding) {
    POCKET_REQUIRE_SHARED(shared);
    const std::string path = (shared / "reference" / "models" / "rand-llama-pure-q4_0.gguf").string();
    for (const bool repack : {true, false}) {
        auto model = Model::load(path, {.repack = repack});
        const uint8_t* begin = model->file().file_data();
        ASSERT_NE(begin, nullptr) << "the model was not mapped";
        int vectors = 0;
        for (const GgufTensorInfo& info : model->file().tensors()) {
            if (info.name == "token_embd.weight" || info.n_dims > 2) continue;
            const std::string name(info.name);
            const Tensor* t = info.n_dims == 1 ? model->weight(name, {info.ne[0]}) : model->weight(name, {info.ne[0], info.ne[1]});
            const auto* data = static_cast<const uint8_t*>(t->data);
            const bool in_file = data >= begin && data < begin + model->file().file_size();
            EXPECT_EQ(in_file, !repack) << name << (repack ? " is still read from the mapped file" : " left the mapping under --no-repack");
            vectors += info.n_dims == 1;
        }
        EXPECT_GE(vectors, 3) << "the model has too few norms to test";
    }
}

INSTANTIATE_TEST_SUITE_P(Types, RepackedWeights,
                         ::testing::Values(RepackedModel{GgmlType::Q4_0, "rand-llama-pure-q4_0.gguf"},
                                           RepackedModel{GgmlType::Q8_0, "rand-llama-pure-q8_0.gguf"},
                                           RepackedModel{GgmlType::Q2_K, "rand-llama-pure-q2_k.gguf"},
                                           RepackedModel{GgmlType::Q3_K, "rand-llama-pure-q3_k_m.gguf"},
                                           RepackedModel{GgmlType::Q4_K, "rand-llama-pure-q4_k_m.gguf"},
                                           RepackedModel{GgmlType::Q5_K, "rand-llama-pure-q5_k_m.gguf"},
                                           RepackedModel{GgmlType::Q6_K, "rand-llama-pure-q6_k.gguf"},
                                           RepackedModel{GgmlType::IQ4_XS, nullptr}),
                         [](const auto& test) { return test.param.name(); });

// A context shift (drop cells, move the rest down, re-rotate their keys) against recomputing
// the shifted context from scratch.
//
// On a one-layer model every cached key and value depends only on its own token and position,
// so shifting must reproduce recomputation up to float rounding: the shifted keys are rotated
// twice (by p, then by -d) where fresh ones are rotated once by p - d. Tolerance 1e-4 on the
// logits; a wrong angle, a wrong cell or a stale mask moves them by more than 0.01.
// On deeper models the cached states of later layers still carry what the dropped tokens
// contributed (as in llama.cpp), so there the shift is an approximation by design; the test
// only reports that distance for stories260K.
#include "pocket/context.hpp"
#include "pocket/model.hpp"
#include "pocket/tokenizer.hpp"
#include "shared_data.hpp"
#include "synth.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <unistd.h>

using namespace pocket;
namespace fs = std::filesystem;

namespace {

double shift_vs_recompute(const Model& model, const std::vector<TokenId>& tokens, uint32_t keep, uint32_t discard) {
    const ContextOptions co{.n_ctx = 128, .n_threads = 2, .type_k = GgmlType::F32, .type_v = GgmlType::F32};
    Context shifted(model, co);
    shifted.decode(std::span(tokens).first(tokens.size() - 1));
    shifted.shift(keep, discard);
    EXPECT_EQ(shifted.n_past(), tokens.size() - 1 - discard);
    shifted.decode(std::span(tokens).last(1));

    std::vector<TokenId> kept(tokens.begin(), tokens.begin() + keep);
    kept.insert(kept.end(), tokens.begin() + keep + discard, tokens.end());
    Context fresh(model, co);
    fresh.decode(kept);
    double worst = 0;
    for (size_t i = 0; i < fresh.last_logits().size(); ++i)
        worst = std::max(worst, std::fabs(static_cast<double>(fresh.last_logits()[i]) - shifted.last_logits()[i]));
    return worst;
}

}  // namespace

TEST(ContextShift, ExactOnAOneLayerModel) {
    const fs::path p = fs::temp_directory_path() / ("pocket-shift-" + std::to_string(::getpid()) + ".gguf");
    tools::SynthOptions o;
    o.preset = "tiny";
    o.output = p.string();
    o.type = "f32";
    o.n_layer = 1;
    tools::synth_model(o);
    const auto model = Model::load(p.string());
    std::vector<TokenId> tokens;
    for (int i = 0; i < 40; ++i) tokens.push_back(3 + (i * 37) % 500);
    for (auto [keep, discard] : {std::pair{0u, 1u}, std::pair{4u, 9u}, std::pair{10u, 20u}}) {
        const double worst = shift_vs_recompute(*model, tokens, keep, discard);
        std::cout << "[ observed ] 1 layer, keep " << keep << ", drop " << discard << ": max |delta logit| = " << worst << "\n";
        EXPECT_LT(worst, 1e-4);
    }
    fs::remove(p);
}

// gemma3's sliding-window layers rope with their own base (rope.freq_base_swa, 10000, not the
// model's 1e6): the shift must re-rotate their keys with that rope, not the model's.
TEST(ContextShift, ExactOnAOneLayerGemma3WithItsLocalRope) {
    POCKET_REQUIRE_SHARED(shared);
    const fs::path p = fs::temp_directory_path() / ("pocket-shift-gemma3-" + std::to_string(::getpid()) + ".gguf");
    tools::SynthOptions o;
    o.preset = "gemma3-1b";
    o.output = p.string();
    o.type = "f32";
    o.n_layer = 1;
    o.vocab = (shared / "gguf" / "stories260K-f32.gguf").string();
    tools::synth_model(o);
    const auto model = Model::load(p.string());
    std::vector<TokenId> tokens;
    for (int i = 0; i < 40; ++i) tokens.push_back(3 + (i * 37) % 500);
    const double worst = shift_vs_recompute(*model, tokens, 4, 9);
    std::cout << "[ observed ] gemma3 1 local layer, keep 4, drop 9: max |delta logit| = " << worst << "\n";
    EXPECT_LT(worst, 1e-4);
    fs::remove(p);
}

TEST(ContextShift, ReportsTheApproximationOnStories) {
    const auto model = Model::load((test::source_dir() / "models" / "stories260K.gguf").string());
    const auto tokens = model->tokenizer().tokenize(
        "Once upon a time, there was a little girl named Lily. She loved to play outside in the park. One day, she saw a big, red "
        "ball.", true);
    const double worst = shift_vs_recompute(*model, tokens, 5, 10);
    std::cout << "[ observed ] stories260K, keep 5, drop 10: max |delta logit| = " << worst << "\n";
    EXPECT_TRUE(std::isfinite(worst));
}

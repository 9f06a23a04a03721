#include "perplexity.hpp"

#include "kl_divergence.hpp"
#include "pocket/error.hpp"
#include "pocket/tokenizer.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>

namespace pocket::tools {
namespace {

// log p(token) under softmax(logits), in double.
double log_prob(std::span<const float> logits, TokenId token) {
    float max = logits[0];
    for (float l : logits) max = std::max(max, l);
    double sum = 0;
    for (float l : logits) sum += std::exp(static_cast<double>(l) - max);
    return static_cast<double>(logits[static_cast<size_t>(token)]) - max - std::log(sum);
}

// Mean and its standard error from a running sum and sum of squares.
std::pair<double, double> mean_stderr(double sum, double sum2, size_t n) {
    const double mean = sum / static_cast<double>(n);
    const double var = sum2 / static_cast<double>(n) - mean * mean;
    return {mean, n > 1 && var > 0 ? std::sqrt(var / static_cast<double>(n - 1)) : 0.0};
}

}  // namespace

void fit_chunks_to_batch(PerplexityOptions& o, ContextOptions& c) {
    o.n_seq = std::max<uint32_t>(1, c.n_batch / o.n_ctx);
    if (o.n_chunks > 0) o.n_seq = std::min(o.n_seq, static_cast<uint32_t>(o.n_chunks));
    c.n_ctx = o.n_seq * o.n_ctx;
    c.n_batch = std::max(c.n_batch, o.n_ctx);
}

std::vector<TokenId> perplexity_tokens(const Model& model, std::string text) {
    if (text.ends_with('\n')) text.pop_back();
    return model.tokenizer().tokenize(text, /*add_special=*/true, /*parse_special=*/false);
}

PerplexityResult compute_perplexity(Context& ctx, const std::vector<TokenId>& tokens, const PerplexityOptions& o,
                                    const PerplexityProgress& progress) {
    const Model& model = ctx.model();
    const uint32_t c = o.n_ctx;
    if (c < 4) throw Error("perplexity needs a context of at least 4 tokens (-c {})", c);
    if (o.n_seq == 0) throw Error("perplexity needs at least one chunk per batch");
    if (ctx.n_ctx() < static_cast<uint64_t>(c) * o.n_seq)
        throw Error("the context holds {} tokens, fewer than {} chunks of -c {}", ctx.n_ctx(), o.n_seq, c);
    if (tokens.size() < 2 * static_cast<size_t>(c))
        throw Error("the text is {} tokens long; perplexity with -c {} needs at least {} (2 x ctx)", tokens.size(), c, 2 * c);
    size_t n_chunks = tokens.size() / c;
    if (o.n_chunks > 0) n_chunks = std::min(n_chunks, static_cast<size_t>(o.n_chunks));

    const auto& vocab = model.tokenizer().vocab();
    const bool add_bos = vocab.add_bos() && vocab.special().bos != kNoToken;
    const uint32_t n_vocab = model.hparams().n_vocab;
    const size_t first = c / 2;

    std::unique_ptr<KlBaseWriter> owned_out;
    KlBaseWriter* kl_out = nullptr;
    std::unique_ptr<KlBaseReader> kl_in;
    if (!o.kl_base_in.empty()) {
        kl_in = std::make_unique<KlBaseReader>(o.kl_base_in, c, n_vocab, tokens);
        n_chunks = std::min<size_t>(n_chunks, kl_in->n_chunk());  // as llama-perplexity: the base's chunks at most
    } else if (o.kl_writer) {
        kl_out = o.kl_writer;
    } else if (!o.kl_base_out.empty()) {
        owned_out = std::make_unique<KlBaseWriter>(o.kl_base_out);
        kl_out = owned_out.get();
    }
    if (kl_out) kl_out->begin(c, n_vocab, static_cast<uint32_t>(n_chunks), tokens);

    PerplexityResult r;
    r.n_tokens = tokens.size();
    r.n_chunks = n_chunks;
    double nll = 0, nll2 = 0;
    double kld = 0, kld2 = 0, dp = 0, dp2 = 0, base_nll = 0;
    size_t same_top = 0;
    KlStats kl;
    QuantizedLogProbs base_row, cur_row;
    std::vector<double> lp_base, lp_cur;
    const auto t0 = std::chrono::steady_clock::now();
    std::vector<TokenId> batch;
    for (size_t k0 = 0; k0 < n_chunks; k0 += o.n_seq) {
        const size_t n_seq = std::min<size_t>(o.n_seq, n_chunks - k0);
        batch.assign(tokens.begin() + static_cast<ptrdiff_t>(k0 * c), tokens.begin() + static_cast<ptrdiff_t>((k0 + n_seq) * c));
        if (add_bos)
            for (size_t i = 0; i < n_seq; ++i) batch[i * c] = vocab.special().bos;
        ctx.decode_independent(batch, static_cast<uint32_t>(n_seq));
        for (size_t k = k0; k < k0 + n_seq; ++k) {
            const size_t row0 = (k - k0) * c;
            for (size_t j = first; j + 1 < c; ++j) {
                const TokenId target = batch[row0 + j + 1];
                const double l = -log_prob(ctx.logits(row0 + j), target);
                nll += l;
                nll2 += l * l;
                ++r.n_scored;
                if (kl_out) kl_out->add(ctx.logits(row0 + j));
                if (kl_in) {
                    // Both sides go through the same 16-bit quantization, so a model compared
                    // with itself gives exactly 0.
                    kl_in->next(base_row);
                    base_row.to_log_probs(lp_base);
                    cur_row.from_logits(ctx.logits(row0 + j));
                    cur_row.to_log_probs(lp_cur);
                    double d = 0;
                    size_t top_b = 0, top_c = 0;
                    for (size_t i = 0; i < n_vocab; ++i) {
                        d += std::exp(lp_base[i]) * (lp_base[i] - lp_cur[i]);
                        if (lp_base[i] > lp_base[top_b]) top_b = i;
                        if (lp_cur[i] > lp_cur[top_c]) top_c = i;
                    }
                    d = std::max(d, 0.0);
                    kl.kld_values.push_back(static_cast<float>(d));
                    kld += d;
                    kld2 += d * d;
                    kl.kld_max = std::max(kl.kld_max, d);
                    const double delta = std::exp(lp_cur[static_cast<size_t>(target)]) - std::exp(lp_base[static_cast<size_t>(target)]);
                    kl.dp_values.push_back(static_cast<float>(delta));
                    dp += delta;
                    dp2 += delta * delta;
                    same_top += top_b == top_c;
                    base_nll -= lp_base[static_cast<size_t>(target)];
                }
            }
            r.running_ppl.push_back(std::exp(nll / static_cast<double>(r.n_scored)));
            if (kl_in) {
                const double n = static_cast<double>(r.n_scored);
                kl.chunks.push_back({r.running_ppl.back(), (nll - base_nll) / n, kld / n, std::sqrt(dp2 / n),
                                     static_cast<double>(same_top) / n});
            }
            if (progress) progress(k + 1, n_chunks, r.running_ppl.back(), kl_in ? &kl.chunks.back() : nullptr);
        }
    }
    ctx.clear();
    r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    const auto [mean_nll, se_nll] = mean_stderr(nll, nll2, r.n_scored);
    r.ppl = std::exp(mean_nll);
    r.ppl_stderr = se_nll * r.ppl;
    if (kl_out) kl_out->finish();
    if (kl_in) {
        kl.n = r.n_scored;
        std::tie(kl.kld_mean, kl.kld_stderr) = mean_stderr(kld, kld2, kl.n);
        std::tie(kl.dp_mean, kl.dp_stderr) = mean_stderr(dp, dp2, kl.n);
        kl.dp_rms = std::sqrt(dp2 / static_cast<double>(kl.n));
        kl.same_top = static_cast<double>(same_top) / static_cast<double>(kl.n);
        kl.base_ppl = std::exp(base_nll / static_cast<double>(kl.n));
        r.kl = kl;
    }
    return r;
}

}  // namespace pocket::tools

#include "llama2c.hpp"

#include "pocket/error.hpp"
#include "pocket/gguf_writer.hpp"
#include "pocket/output_file.hpp"

#include <cstring>
#include <filesystem>
#include <fstream>
#include <vector>

namespace pocket::tools {
namespace {

// llama2.c's legacy header: seven int32. A negative vocab_size means the classifier
// (output) weights follow instead of being shared with the embedding.
struct Llama2cConfig {
    int32_t dim, hidden_dim, n_layers, n_heads, n_kv_heads, vocab_size, seq_len;
};

std::vector<char> read_all(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    if (!in) throw Error("{}: cannot open", path);
    return std::vector<char>(std::istreambuf_iterator<char>(in), {});
}

struct Vocab {
    std::vector<std::string> tokens;
    std::vector<float> scores;
    std::vector<int32_t> types;
};

// llama2.c's tokenizer.bin: int32 max_token_length, then per token: f32 score, int32
// length, bytes. Its exporter wrote SentencePiece's '▁' as ' ' and BOS/EOS as "\n<s>\n" /
// "\n</s>\n"; undo both so the pieces are SentencePiece's again.
Vocab read_tokenizer(const std::string& path, int32_t vocab_size) {
    const auto b = read_all(path);
    size_t pos = 4;
    auto need = [&](size_t n) {
        if (n > b.size() - std::min(pos, b.size())) throw Error("{}: truncated llama2.c tokenizer file", path);
    };
    need(0);
    Vocab v;
    for (int32_t i = 0; i < vocab_size; ++i) {
        float score;
        int32_t len;
        need(8);
        std::memcpy(&score, b.data() + pos, 4);
        std::memcpy(&len, b.data() + pos + 4, 4);
        pos += 8;
        if (len < 0) throw Error("{}: token {} has a negative length", path, i);
        need(static_cast<size_t>(len));
        std::string piece(b.data() + pos, static_cast<size_t>(len));
        pos += static_cast<size_t>(len);
        int32_t type = 1;  // normal
        if (i == 0) type = 2;  // unknown
        else if (i == 1 || i == 2) {
            type = 3;  // control
            piece = i == 1 ? "<s>" : "</s>";
        } else if (piece.size() == 6 && piece.starts_with("<0x") && piece.back() == '>') {
            type = 6;  // byte
        }
        std::string spm;
        for (char c : piece) spm += c == ' ' ? std::string("\xE2\x96\x81") : std::string(1, c);
        v.tokens.push_back(std::move(spm));
        v.scores.push_back(score);
        v.types.push_back(type);
    }
    return v;
}

}  // namespace

void convert_llama2c(const Llama2cConvertOptions& o) {
    check_output_file(o.output, {o.checkpoint, o.tokenizer});  // never overwrite an input
    const auto ck = read_all(o.checkpoint);
    if (ck.size() < sizeof(Llama2cConfig)) throw Error("{}: too short for a llama2.c checkpoint", o.checkpoint);
    Llama2cConfig c;
    std::memcpy(&c, ck.data(), sizeof c);
    const bool shared = c.vocab_size > 0;
    const int64_t vocab = shared ? c.vocab_size : -static_cast<int64_t>(c.vocab_size);
    if (c.dim <= 0 || c.hidden_dim <= 0 || c.n_layers <= 0 || c.n_heads <= 0 || c.n_kv_heads <= 0 || c.seq_len <= 0 ||
        vocab <= 0 || c.dim % c.n_heads != 0 || c.n_heads % c.n_kv_heads != 0 || c.dim > (1 << 20) || c.hidden_dim > (1 << 22) ||
        c.n_layers > 4096 || vocab > (1 << 22) || c.seq_len > (1 << 24))
        throw Error("{}: not a llama2.c checkpoint (implausible header)", o.checkpoint);
    const int64_t dim = c.dim, hidden = c.hidden_dim, L = c.n_layers;
    const int64_t head = dim / c.n_heads, kv_dim = head * c.n_kv_heads;

    // Offsets of each weight array, in llama2.c's order; all f32.
    size_t pos = sizeof(Llama2cConfig);
    auto take = [&](int64_t n) {
        const size_t at = pos;
        pos += static_cast<size_t>(n) * 4;
        if (pos > ck.size()) throw Error("{}: truncated: the header promises more weights than the file holds", o.checkpoint);
        return ck.data() + at;
    };
    const char* emb = take(vocab * dim);
    const char* rms_att = take(L * dim);
    const char* wq = take(L * dim * dim);
    const char* wk = take(L * dim * kv_dim);
    const char* wv = take(L * dim * kv_dim);
    const char* wo = take(L * dim * dim);
    const char* rms_ffn = take(L * dim);
    const char* w1 = take(L * hidden * dim);
    const char* w2 = take(L * dim * hidden);
    const char* w3 = take(L * hidden * dim);
    const char* rms_final = take(dim);
    take(c.seq_len * head / 2);  // freq_cis_real: RoPE tables, recomputed at run time
    take(c.seq_len * head / 2);  // freq_cis_imag
    const char* wcls = shared ? emb : take(vocab * dim);

    const Vocab v = read_tokenizer(o.tokenizer, static_cast<int32_t>(vocab));

    GgufWriter w(o.output);
    w.set_string("general.architecture", "llama");
    w.set_string("general.name", o.name.empty() ? std::filesystem::path(o.checkpoint).stem().string() : o.name);
    w.set<uint32_t>("general.file_type", 0);
    w.set<uint32_t>("llama.context_length", static_cast<uint32_t>(c.seq_len));
    w.set<uint32_t>("llama.embedding_length", static_cast<uint32_t>(dim));
    w.set<uint32_t>("llama.block_count", static_cast<uint32_t>(L));
    w.set<uint32_t>("llama.feed_forward_length", static_cast<uint32_t>(hidden));
    w.set<uint32_t>("llama.rope.dimension_count", static_cast<uint32_t>(head));
    w.set<float>("llama.rope.freq_base", o.rope_freq_base);
    w.set<uint32_t>("llama.attention.head_count", static_cast<uint32_t>(c.n_heads));
    w.set<uint32_t>("llama.attention.head_count_kv", static_cast<uint32_t>(c.n_kv_heads));
    w.set<float>("llama.attention.layer_norm_rms_epsilon", o.rms_eps);
    w.set<uint32_t>("llama.vocab_size", static_cast<uint32_t>(vocab));
    w.set_string("tokenizer.ggml.model", "llama");
    w.set_strings("tokenizer.ggml.tokens", v.tokens);
    w.set_array<float>("tokenizer.ggml.scores", v.scores);
    w.set_array<int32_t>("tokenizer.ggml.token_type", v.types);
    w.set<uint32_t>("tokenizer.ggml.bos_token_id", 1);
    w.set<uint32_t>("tokenizer.ggml.eos_token_id", 2);
    w.set<uint32_t>("tokenizer.ggml.unknown_token_id", 0);
    w.set<bool>("tokenizer.ggml.add_bos_token", true);
    w.set<bool>("tokenizer.ggml.add_eos_token", false);

    // Tensors in llama.cpp's order; ne[0] is the input dimension (PyTorch's last).
    struct Pending { const char* data; int64_t bytes; };
    std::vector<Pending> data;
    auto add = [&](const std::string& name, std::initializer_list<int64_t> ne, const char* p) {
        w.add_tensor(name, GgmlType::F32, std::span<const int64_t>(ne.begin(), ne.size()));
        int64_t n = 1;
        for (auto x : ne) n *= x;
        data.push_back({p, n * 4});
    };
    add("token_embd.weight", {dim, vocab}, emb);
    for (int64_t l = 0; l < L; ++l) {
        const std::string b = "blk." + std::to_string(l) + ".";
        add(b + "attn_norm.weight", {dim}, rms_att + l * dim * 4);
        add(b + "attn_q.weight", {dim, dim}, wq + l * dim * dim * 4);
        add(b + "attn_k.weight", {dim, kv_dim}, wk + l * dim * kv_dim * 4);
        add(b + "attn_v.weight", {dim, kv_dim}, wv + l * dim * kv_dim * 4);
        add(b + "attn_output.weight", {dim, dim}, wo + l * dim * dim * 4);
        add(b + "ffn_norm.weight", {dim}, rms_ffn + l * dim * 4);
        add(b + "ffn_gate.weight", {dim, hidden}, w1 + l * hidden * dim * 4);
        add(b + "ffn_down.weight", {hidden, dim}, w2 + l * dim * hidden * 4);
        add(b + "ffn_up.weight", {dim, hidden}, w3 + l * hidden * dim * 4);
    }
    add("output_norm.weight", {dim}, rms_final);
    if (!o.tied) add("output.weight", {dim, vocab}, wcls);

    w.begin();
    for (const auto& d : data) w.write(d.data, static_cast<size_t>(d.bytes));
    w.finish();
}

}  // namespace pocket::tools

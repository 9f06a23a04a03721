// Bad input to the new architectures: a copy of a g_arch2 model with one key or tensor changed
// must fail at load with one line naming the file and the problem (the changes are those of
// g_arch2/README.md's "Load checks", where llama.cpp refuses the same files).
#include "pocket/error.hpp"
#include "pocket/gguf_writer.hpp"
#include "pocket/model.hpp"
#include "shared_data.hpp"

#include <gtest/gtest.h>

#include <functional>
#include <unistd.h>

using namespace pocket;
namespace fs = std::filesystem;

namespace {

// `from` copied to a temporary file, with edit() applied to the metadata and tensors whose
// name drop() accepts left out.
struct EditedCopy {
    fs::path path;
    EditedCopy(const fs::path& from, const std::function<void(GgufWriter&, const GgufFile&)>& edit,
               const std::function<bool(std::string_view)>& drop = [](std::string_view) { return false; }) {
        const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
        path = fs::temp_directory_path() / (std::string("pocket-arch-") + info->name() + "-" + std::to_string(::getpid()) + ".gguf");
        const GgufFile src = GgufFile::open(from.string());
        GgufWriter w(path.string(), src.alignment());
        for (const GgufKeyValue& kv : src.metadata()) w.set_value(kv.key, kv.value);
        edit(w, src);
        for (const GgufTensorInfo& t : src.tensors())
            if (!drop(t.name)) w.add_tensor(t.name, t.type, std::span<const int64_t>(t.ne.data(), t.n_dims));
        w.begin();
        for (const GgufTensorInfo& t : src.tensors())
            if (!drop(t.name)) w.write(t.data, t.n_bytes);
        w.finish();
    }
    ~EditedCopy() { fs::remove(path); }
};

std::string load_error(const fs::path& p) {
    try {
        Model::load(p.string());
    } catch (const Error& e) {
        return e.what();
    }
    return "";
}

void expect_error(const fs::path& p, const std::string& what) {
    const std::string err = load_error(p);
    EXPECT_NE(err.find(p.string()), std::string::npos) << err;
    EXPECT_NE(err.find(what), std::string::npos) << err;
    EXPECT_EQ(err.find('\n'), std::string::npos) << err;
}

fs::path arch2(const fs::path& shared, const char* name) { return shared / "reference" / "g_arch2" / name; }

}  // namespace

TEST(ArchLoadErrors, MoreExpertsUsedThanThereAre) {
    POCKET_REQUIRE_SHARED(shared);
    EditedCopy f(arch2(shared, "rand-qwen3moe-f32.gguf"), [](GgufWriter& w, const GgufFile&) { w.set<uint32_t>("qwen3moe.expert_used_count", 9); });
    expect_error(f.path, "qwen3moe.expert_used_count 9 must be between 1 and qwen3moe.expert_count 8");
}

TEST(ArchLoadErrors, MissingQkNorm) {
    POCKET_REQUIRE_SHARED(shared);
    EditedCopy f(arch2(shared, "rand-qwen3-f32.gguf"), [](GgufWriter&, const GgufFile&) {}, [](std::string_view n) { return n == "blk.1.attn_k_norm.weight"; });
    expect_error(f.path, "missing tensor 'blk.1.attn_k_norm.weight'");
}

// Without expert_count a llama file is dense, and the dense tensors are missing.
TEST(ArchLoadErrors, LlamaMoeWithoutExpertCount) {
    POCKET_REQUIRE_SHARED(shared);
    EditedCopy f(arch2(shared, "rand-llama-moe-f32.gguf"), [](GgufWriter& w, const GgufFile&) {
        w.remove("llama.expert_count");
        w.remove("llama.expert_used_count");
    });
    expect_error(f.path, "missing tensor 'blk.0.ffn_gate.weight'");
}

// Without expert_feed_forward_length the experts are feed_forward_length / expert_used_count
// wide (768 / 2 = 384), which the file's [256, 16, 8] is not.
TEST(ArchLoadErrors, Qwen3MoeExpertWidthFallback) {
    POCKET_REQUIRE_SHARED(shared);
    EditedCopy f(arch2(shared, "rand-qwen3moe-f32.gguf"), [](GgufWriter& w, const GgufFile&) { w.remove("qwen3moe.expert_feed_forward_length"); });
    expect_error(f.path, "tensor 'blk.0.ffn_gate_exps.weight' has shape");
    EXPECT_NE(load_error(f.path).find("384"), std::string::npos) << load_error(f.path);
}

// Without key_length the head size is n_embd / n_head, which the file's q projection does not have.
TEST(ArchLoadErrors, Qwen3WithoutKeyLength) {
    POCKET_REQUIRE_SHARED(shared);
    EditedCopy f(arch2(shared, "rand-qwen3-f32.gguf"), [](GgufWriter& w, const GgufFile&) {
        w.remove("qwen3.attention.key_length");
        w.remove("qwen3.attention.value_length");
    });
    expect_error(f.path, "tensor 'blk.0.attn_q.weight' has shape");
}

TEST(ArchLoadErrors, UnknownArchitectureListsTheSupportedOnes) {
    POCKET_REQUIRE_SHARED(shared);
    EditedCopy f(arch2(shared, "rand-qwen3-f32.gguf"), [](GgufWriter& w, const GgufFile& src) {
        w.set_string("general.architecture", "qwen9");
        for (const GgufKeyValue& kv : src.metadata())
            if (kv.key.starts_with("qwen3.")) {
                w.remove(kv.key);
                w.set_value("qwen9." + std::string(kv.key.substr(6)), kv.value);
            }
    });
    expect_error(f.path, "architecture 'qwen9' is not supported (llama, qwen2, qwen3, qwen3moe, phi3, gemma, gemma2, gemma3)");
}

// Placement (-ngl, -dev) against the copy-through test device, which runs the CPU's kernels
// on memory no other code can dereference: a layer placed there works only if its weights
// were uploaded, its KV cache lives there and every activation crossing the boundary was
// copied. Its kernels are the CPU's, so any placement must give the CPU-only logits bit for
// bit; a weight left behind, a stale copy or a KV cell in the wrong memory does not.
#include "pocket/context.hpp"
#include "pocket/device.hpp"
#include "pocket/error.hpp"
#include "pocket/model.hpp"
#include "shared_data.hpp"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <cstdlib>
#include <cstring>
#include <fstream>

using namespace pocket;
namespace fs = std::filesystem;

namespace {

// Registers TEST0 for the duration of a test (models and contexts must be gone before it goes).
struct TestDevice {
    explicit TestDevice(size_t memory = size_t{4} << 30) { register_device(make_copy_through_device("TEST0", memory)); }
    ~TestDevice() { unregister_device("TEST0"); }
};

std::vector<TokenId> reference_tokens(const fs::path& shared, size_t n) {
    std::ifstream in(shared / "reference" / "tokens" / "seq64.json");
    auto tokens = nlohmann::json::parse(in).get<std::vector<TokenId>>();
    tokens.resize(std::min(tokens.size(), n));
    return tokens;
}

struct Evaluation {
    std::vector<float> logits;         // every logit of the prompt, then of each decoded token
    std::vector<size_t> copies_per_token;
};

// A prompt in ubatches of 5 (all logits), then single tokens one at a time.
Evaluation evaluate(const Model& model, const std::vector<TokenId>& tokens, size_t n_prompt, GgmlType kv = GgmlType::F16) {
    Context ctx(model, {.n_ctx = 64, .n_batch = 64, .n_ubatch = 5, .n_threads = 2, .type_k = kv, .type_v = kv});
    Evaluation r;
    ctx.decode(std::span(tokens).first(n_prompt), /*all_logits=*/true);
    for (size_t i = 0; i < ctx.n_logits(); ++i) r.logits.insert(r.logits.end(), ctx.logits(i).begin(), ctx.logits(i).end());
    for (size_t t = n_prompt; t < tokens.size(); ++t) {
        const size_t before = ctx.copies_run();
        ctx.decode(std::span(tokens).subspan(t, 1));
        r.copies_per_token.push_back(ctx.copies_run() - before);
        r.logits.insert(r.logits.end(), ctx.last_logits().begin(), ctx.last_logits().end());
    }
    return r;
}

bool same_bits(const std::vector<float>& a, const std::vector<float>& b) {
    return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(float)) == 0;
}

// Tensors crossing a device boundary in a one-token decode with the last k of n layers on
// the device (k = n + 1: the output too): the residual stream in and out, and the inputs
// read on both sides (positions, KV write rows, mask) when layers of both kinds exist.
size_t expected_crossings(uint32_t k, uint32_t n_layer) {
    if (k == 0) return 0;
    size_t n = 1;                  // the embeddings, into the first device layer
    if (k < n_layer) n += 3;       // pos, kv_rows, kq_mask: first read on the CPU, then on the device
    if (k <= n_layer) n += 1;      // the residual stream back for the output layer
    return n;
}

std::vector<fs::path> models_to_place() {
    std::vector<fs::path> out{test::source_dir() / "models" / "stories260K.gguf"};
    if (auto shared = test::shared_dir())
        for (const auto& e : fs::directory_iterator(*shared / "reference" / "models"))
            if (e.path().extension() == ".gguf") out.push_back(e.path());
    std::sort(out.begin() + 1, out.end());
    return out;
}

class EveryModel : public ::testing::TestWithParam<fs::path> {};

TEST_P(EveryModel, AnyGpuLayerCountGivesTheCpuLogitsBitwise) {
    const fs::path path = GetParam();
    std::vector<TokenId> tokens;
    if (auto shared = test::shared_dir()) tokens = reference_tokens(*shared, 14);
    else tokens = {1, 403, 407, 261, 378, 430, 9, 336, 261, 500, 13, 43, 300, 7};
    const auto cpu_model = Model::load(path.string(), {.gpu_layers = GpuLayers::layers(0)});
    const Evaluation cpu = evaluate(*cpu_model, tokens, 11);
    const uint32_t n_layer = cpu_model->hparams().n_layer;

    TestDevice device;
    for (GpuLayers ngl : {GpuLayers::layers(0), GpuLayers::layers(1), GpuLayers::layers(n_layer / 2), GpuLayers::layers(n_layer),
                          GpuLayers::all(), GpuLayers{}}) {
        SCOPED_TRACE("-ngl " + ngl.text());
        auto model = Model::load(path.string(), {.gpu_layers = ngl});
        const uint32_t k = model->placement().n_gpu_layers;
        if (ngl.mode == GpuLayers::Mode::count) EXPECT_EQ(k, ngl.count);
        else EXPECT_EQ(k, n_layer + 1);  // all, and auto with room to spare
        const Evaluation placed = evaluate(*model, tokens, 11);
        EXPECT_TRUE(same_bits(placed.logits, cpu.logits)) << path.filename();
        for (size_t c : placed.copies_per_token) EXPECT_EQ(c, expected_crossings(k, n_layer)) << path.filename();
        if (k > 0) EXPECT_GT(model->weight_bytes_on(0), 0u);
    }
}

INSTANTIATE_TEST_SUITE_P(Placement, EveryModel, ::testing::ValuesIn(models_to_place()),
                         [](const auto& info) {
                             std::string n = info.param.stem().string();
                             for (auto& ch : n)
                                 if (!std::isalnum(static_cast<unsigned char>(ch))) ch = '_';
                             return n;
                         });

const fs::path kStories = test::source_dir() / "models" / "stories260K.gguf";

std::vector<TokenId> story_tokens(size_t n) {
    std::vector<TokenId> t{1};
    for (size_t i = 1; i < n; ++i) t.push_back(static_cast<TokenId>(3 + (i * 37) % 500));
    return t;
}

// Context shift with the KV cache on the device: the moves and the key re-rotation run there.
TEST(Placement, ContextShiftOnTheDeviceEqualsTheCpu) {
    const auto tokens = story_tokens(50);
    // The keys stay f16 or f32 (rope_shift re-rotates those only, as before placement existed).
    auto shifted_logits = [&](const Model& m, GgmlType kv) {
        const GgmlType type_k = kv == GgmlType::Q8_0 ? GgmlType::F16 : kv;
        Context ctx(m, {.n_ctx = 64, .n_ubatch = 16, .n_threads = 2, .type_k = type_k, .type_v = kv});
        ctx.decode(std::span(tokens).first(45));
        ctx.shift(4, 9);   // moves 32 cells in chunks of 9
        ctx.decode(std::span(tokens).subspan(45, 3));
        ctx.shift(0, 30);  // more dropped than moved: one chunk
        ctx.decode(std::span(tokens).subspan(48, 2));
        return std::vector<float>(ctx.last_logits().begin(), ctx.last_logits().end());
    };
    std::vector<fs::path> models{kStories};
    if (auto shared = test::shared_dir()) models.push_back(*shared / "reference" / "models" / "rand-llama-f32.gguf");
    for (const fs::path& path : models) {
        const auto cpu_model = Model::load(path.string(), {.gpu_layers = GpuLayers::layers(0)});
        for (GgmlType kv : {GgmlType::F16, GgmlType::Q8_0, GgmlType::F32}) {
            if (cpu_model->hparams().head_dim_v % ggml_type_info(kv).block_size != 0) continue;  // q8_0 needs 32-wide heads
            const auto cpu = shifted_logits(*cpu_model, kv);
            TestDevice device;
            for (GpuLayers ngl : {GpuLayers::layers(2), GpuLayers::all()}) {
                auto model = Model::load(path.string(), {.gpu_layers = ngl});
                EXPECT_TRUE(same_bits(shifted_logits(*model, kv), cpu))
                    << path.filename() << ", kv " << ggml_type_info(kv).name << ", -ngl " << ngl.text();
            }
        }
    }
}

// A shift by fewer cells than it moves copies in chunks; each must land before the next.
TEST(Placement, ContextShiftBySmallStepsEqualsTheCpu) {
    const auto tokens = story_tokens(40);
    auto logits = [&](const Model& m) {
        Context ctx(m, {.n_ctx = 64, .n_threads = 1});
        ctx.decode(std::span(tokens).first(39));
        ctx.shift(2, 3);  // moves 34 cells in 12 chunks
        ctx.decode(std::span(tokens).last(1));
        return std::vector<float>(ctx.last_logits().begin(), ctx.last_logits().end());
    };
    const auto cpu = logits(*Model::load(kStories.string(), {.gpu_layers = GpuLayers::layers(0)}));
    TestDevice device;
    EXPECT_TRUE(same_bits(logits(*Model::load(kStories.string(), {.gpu_layers = GpuLayers::all()})), cpu));
}

// The memory planner's poison mode (freed arena memory filled with NaN right after its last
// reader) on both devices at once.
TEST(Placement, PoisonModeWithTwoDevices) {
    const auto tokens = story_tokens(12);
    const Evaluation cpu = evaluate(*Model::load(kStories.string(), {.gpu_layers = GpuLayers::layers(0)}), tokens, 8);
    TestDevice device;
    ::setenv("POCKET_POISON", "1", 1);
    const Evaluation placed = evaluate(*Model::load(kStories.string(), {.gpu_layers = GpuLayers::layers(3)}), tokens, 8);
    ::unsetenv("POCKET_POISON");
    EXPECT_TRUE(same_bits(placed.logits, cpu.logits));
}

TEST(Placement, AutoFitsWhatTheFreeMemoryHolds) {
    const auto cpu_model = Model::load(kStories.string(), {.gpu_layers = GpuLayers::layers(0)});
    const uint32_t n_layer = cpu_model->hparams().n_layer;
    // 64 MiB + a 5% margin + a 2.8 MiB arena leave 1.6 MiB of 72 MiB: room for three of
    // stories260K's layers with a 4096-cell f16 cache (0.52 MiB each) but not all five.
    TestDevice device(size_t{72} << 20);
    auto model = Model::load(kStories.string(), {.n_ctx = 4096});
    const Placement& p = model->placement();
    EXPECT_GT(p.n_gpu_layers, 0u);
    EXPECT_LT(p.n_gpu_layers, n_layer + 1);
    EXPECT_NE(p.summary.find("TEST0"), std::string::npos) << p.summary;
    const auto tokens = story_tokens(10);
    EXPECT_TRUE(same_bits(evaluate(*model, tokens, 6).logits, evaluate(*cpu_model, tokens, 6).logits));
}

TEST(Placement, WithoutAGpuLayersStayOnTheCpuWithOneWarning) {
    // This machine's GPUs (lavapipe in CI) leave the registry for this test's process.
    for (Device* d : gpu_devices()) unregister_device(d->name());
    auto model = Model::load(kStories.string(), {.gpu_layers = GpuLayers::layers(4)});
    EXPECT_EQ(model->placement().devices.size(), 1u);
    EXPECT_NE(model->placement().warning.find("no GPU"), std::string::npos);
    EXPECT_TRUE(Model::load(kStories.string())->placement().warning.empty()) << "auto is silent without a GPU";
}

TEST(Placement, NglAndDeviceErrors) {
    EXPECT_EQ(GpuLayers::parse("12").count, 12u);
    EXPECT_EQ(GpuLayers::parse("all").mode, GpuLayers::Mode::all);
    EXPECT_EQ(GpuLayers::parse("auto").mode, GpuLayers::Mode::automatic);
    for (const char* bad : {"", "x", "-3", "1.5", "12a"}) {
        try {
            GpuLayers::parse(bad);
            ADD_FAILURE() << "accepted " << bad;
        } catch (const Error& e) {
            EXPECT_NE(std::string(e.what()).find("-ngl"), std::string::npos) << e.what();
        }
    }
    try {
        Model::load(kStories.string(), {.device = "Vulkan7"});
        ADD_FAILURE() << "unknown device accepted";
    } catch (const Error& e) {
        EXPECT_NE(std::string(e.what()).find("CPU"), std::string::npos) << "lists the valid names: " << e.what();
    }
    TestDevice device;
    EXPECT_EQ(&find_device("test0"), &find_device("TEST0"));
    auto model = Model::load(kStories.string(), {.gpu_layers = GpuLayers::all(), .device = "TEST0"});
    EXPECT_EQ(model->placement().devices.front()->name(), "TEST0");
}

// The memory report names each device with its weights, KV cache and compute arena.
TEST(Placement, MemoryReportPerDevice) {
    TestDevice device;
    auto model = Model::load(kStories.string(), {.gpu_layers = GpuLayers::layers(3)});
    Context ctx(*model, {.n_ctx = 128, .n_threads = 1});
    const auto use = ctx.memory_use();
    ASSERT_EQ(use.size(), 2u);
    EXPECT_EQ(use[0].device, "TEST0");
    EXPECT_EQ(use[1].device, "CPU");
    for (const auto& u : use) {
        EXPECT_GT(u.weights, 0u) << u.device;
        EXPECT_GT(u.kv_cache, 0u) << u.device;
        EXPECT_GT(u.compute, 0u) << u.device;
    }
    EXPECT_EQ(use[0].kv_cache + use[1].kv_cache, ctx.kv_bytes());
    EXPECT_NE(ctx.memory_summary().find("TEST0: "), std::string::npos) << ctx.memory_summary();
}

}  // namespace

// A Mesa Vulkan driver (libvulkan_<name>.so: lavapipe, radv, anv) mapped into this process.
static bool vulkan_driver_loaded() {
    std::ifstream maps("/proc/self/maps");
    std::string line;
    while (std::getline(maps, line))
        if (line.find("libvulkan_") != std::string::npos) return true;
    return false;
}

// -ngl 0 means the CPU: loading a model that way looks for no GPU, so no driver is loaded
// (lavapipe's costs 60 MiB of RSS and a tenth of a second in every run).
TEST(Placement, NglZeroLoadsNoGpuDriver) {
    POCKET_REQUIRE_SHARED(shared);
    if (vulkan_driver_loaded()) GTEST_SKIP() << "a Vulkan driver was loaded before this test (run it alone, as ctest does)";
    auto model = Model::load((shared / "gguf" / "stories260K-f32.gguf").string(), {.gpu_layers = GpuLayers::layers(0)});
    EXPECT_EQ(model->placement().n_gpu_layers, 0u);
    EXPECT_FALSE(vulkan_driver_loaded());
    // The check can fail: asking for the GPUs loads the driver, where this machine has a Mesa one.
    for (Device* d : gpu_devices())
        if (d->emulated()) EXPECT_TRUE(vulkan_driver_loaded()) << d->name();
}

// -ngl auto where no GPU can be (no device node: CI's machines, with lavapipe installed) loads
// no driver either; and the search, when asked for, finds no GPU there that auto would use.
TEST(Placement, AutoWithoutGpuDeviceNodesLoadsNoDriver) {
    POCKET_REQUIRE_SHARED(shared);
    if (vulkan_driver_loaded()) GTEST_SKIP() << "a Vulkan driver was loaded before this test (run it alone, as ctest does)";
    if (!no_gpu_hardware()) GTEST_SKIP() << "this machine has a GPU device node";
    auto model = Model::load((shared / "gguf" / "stories260K-f32.gguf").string());
    EXPECT_EQ(model->placement().n_gpu_layers, 0u);
    EXPECT_FALSE(vulkan_driver_loaded());
    for (Device* d : gpu_devices()) EXPECT_TRUE(d->emulated()) << d->name() << ": a real GPU without a device node";
}

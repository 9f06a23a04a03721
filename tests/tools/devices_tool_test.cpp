// -ngl, -dev, --list-devices and --no-repack in run, perplexity and bench, as a user types
// them. POCKET_TEST_DEVICE=1 adds the copy-through device (TEST0), which runs the CPU's
// kernels on its own memory: any -ngl must then print the CPU's text and figures exactly.
#include "run_tool.hpp"
#include "shared_data.hpp"

#include <gtest/gtest.h>

#include <regex>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <unistd.h>

using pocket::test::Result;
using pocket::test::run_tool;

namespace {

const std::string kTestDevice = "POCKET_TEST_DEVICE=1";

size_t lines(const std::string& s) { return static_cast<size_t>(std::count(s.begin(), s.end(), '\n')); }

}  // namespace

TEST(DevicesTool, ListDevicesPrintsEachDeviceAndExits) {
    for (const char* tool : {"run", "perplexity", "bench"}) {
        const Result plain = run_tool(tool, "--list-devices");
        ASSERT_EQ(plain.status, 0) << tool << ": " << plain.err;
        EXPECT_NE(plain.out.find("  CPU: "), std::string::npos) << plain.out;
        EXPECT_EQ(plain.out.find("TEST0"), std::string::npos) << "the test device is never listed unless asked for";
        const Result with = run_tool(tool, "--list-devices", kTestDevice);
        EXPECT_NE(with.out.find("  TEST0: "), std::string::npos) << with.out;
        EXPECT_EQ(lines(with.out), lines(plain.out) + 1);
    }
}

TEST(DevicesTool, AnyNglGivesTheCpuTextAndSaysWhereLayersWent) {
    const std::string args = "-s 7 --temp 0.8 -n 40 -t 2 -p 'Once upon a time, a dog'";
    const Result cpu = run_tool("run", args + " -ngl 0");
    ASSERT_EQ(cpu.status, 0) << cpu.err;
    EXPECT_NE(cpu.err.find("memory: CPU: "), std::string::npos) << cpu.err;
    for (const char* ngl : {"1", "3", "all", "auto", "99"}) {
        const Result r = run_tool("run", args + " -ngl " + ngl, kTestDevice);
        ASSERT_EQ(r.status, 0) << r.err;
        EXPECT_EQ(r.out, cpu.out) << "-ngl " << ngl;
        EXPECT_NE(r.err.find("on TEST0"), std::string::npos) << r.err;
        EXPECT_NE(r.err.find("TEST0: "), std::string::npos) << "memory line: " << r.err;
    }
    const Result repacked = run_tool("run", args + " -ngl 0 --no-repack");
    EXPECT_EQ(repacked.out, cpu.out);
}

// A real GPU backend (Vulkan on lavapipe in CI): the bundled model wholly on it, greedy, gives
// the CPU's text (its top-2 margins are far above the two backends' difference), and chat
// runs there too.
TEST(DevicesTool, RunAndChatWithEveryLayerOnTheGpu) {
    const Result list = run_tool("run", "--list-devices");
    if (list.out.find("  Vulkan0: ") == std::string::npos) GTEST_SKIP() << "no Vulkan device on this machine";
    const std::string args = "--temp 0 -n 40 -t 2 -p 'Once upon a time, a dog'";
    const Result cpu = run_tool("run", args + " -ngl 0");
    ASSERT_EQ(cpu.status, 0) << cpu.err;
    const Result gpu = run_tool("run", args + " -ngl all -dev Vulkan0");
    ASSERT_EQ(gpu.status, 0) << gpu.err;
    EXPECT_EQ(gpu.out, cpu.out);
    EXPECT_NE(gpu.err.find("on Vulkan0"), std::string::npos) << gpu.err;
    EXPECT_NE(gpu.err.find("memory: Vulkan0: "), std::string::npos) << gpu.err;
    const auto messages = std::filesystem::temp_directory_path() / ("pocket-gpu-chat-" + std::to_string(::getpid()) + ".txt");
    std::ofstream(messages) << "Tell me a story\nAbout a cat\n";
    const Result cpu_chat = run_tool("run", "-i --temp 0 -n 16 -t 2 --ignore-eos -ngl 0 < " + messages.string());
    const Result chat = run_tool("run", "-i --temp 0 -n 16 -t 2 --ignore-eos -ngl all -dev Vulkan0 < " + messages.string());
    std::filesystem::remove(messages);
    EXPECT_EQ(chat.status, 0) << chat.err;
    EXPECT_GT(chat.out.size(), 20u) << chat.err;
    EXPECT_EQ(chat.out, cpu_chat.out);
}

// The Vulkan matrix product ends its lane sums with subgroup shuffles where the device has
// them, else through shared memory: the same additions, so the same bits. Two runs of the
// perplexity tool, one with subgroups turned off, write the same log-probability file.
TEST(DevicesTool, SubgroupAndSharedMemoryReductionsGiveTheSameBits) {
    const Result list = run_tool("run", "--list-devices");
    if (list.out.find("with shuffles") == std::string::npos) GTEST_SKIP() << "no Vulkan device with subgroup shuffles";
    const auto dir = std::filesystem::temp_directory_path();
    const auto a = dir / ("pocket-sg-" + std::to_string(::getpid()) + ".a"), b = dir / ("pocket-sg-" + std::to_string(::getpid()) + ".b");
    const std::string args = "-m " + (pocket::test::source_dir() / "models" / "stories260K.gguf").string() + " -f " +
                             (pocket::test::source_dir() / "README.md").string() + " -c 128 --chunks 3 -ngl all -dev Vulkan0 --kl-divergence-base ";
    const Result with = run_tool("perplexity", args + a.string());
    const Result without = run_tool("perplexity", args + b.string(), "POCKET_VULKAN_NO_SUBGROUPS=1");
    ASSERT_EQ(with.status, 0) << with.err;
    ASSERT_EQ(without.status, 0) << without.err;
    std::ifstream fa(a, std::ios::binary), fb(b, std::ios::binary);
    const std::string ba((std::istreambuf_iterator<char>(fa)), {}), bb((std::istreambuf_iterator<char>(fb)), {});
    std::filesystem::remove(a);
    std::filesystem::remove(b);
    EXPECT_GT(ba.size(), 1000u);
    EXPECT_TRUE(ba == bb) << "the two reductions differ";
}

TEST(DevicesTool, NglWithoutAGpuWarnsOnceAndRuns) {
    const Result r = run_tool("run", "-n 4 -ngl 10", "POCKET_VULKAN=0");
    ASSERT_EQ(r.status, 0) << r.err;
    const std::string w = "no GPU device";
    const size_t at = r.err.find(w);
    ASSERT_NE(at, std::string::npos) << r.err;
    EXPECT_EQ(r.err.find(w, at + 1), std::string::npos) << "one warning: " << r.err;
}

TEST(DevicesTool, BadNglOrDeviceIsAOneLineError) {
    for (const char* tool : {"run", "perplexity"}) {
        const std::string model = std::string(tool) == "run" ? "" : "-m " + (pocket::test::source_dir() / "models" / "stories260K.gguf").string() +
                                                                          " -f " + (pocket::test::source_dir() / "README.md").string();
        const Result bad_ngl = run_tool(tool, model + " -ngl lots");
        EXPECT_EQ(bad_ngl.status, 1) << tool;
        EXPECT_EQ(lines(bad_ngl.err), 1u) << bad_ngl.err;
        EXPECT_NE(bad_ngl.err.find("-ngl"), std::string::npos) << bad_ngl.err;
        const Result bad_dev = run_tool(tool, model + " -dev Vulkan3");
        EXPECT_EQ(bad_dev.status, 1) << tool;
        EXPECT_EQ(lines(bad_dev.err), 1u) << bad_dev.err;
        EXPECT_NE(bad_dev.err.find("'Vulkan3'"), std::string::npos) << bad_dev.err;
        EXPECT_NE(bad_dev.err.find("CPU"), std::string::npos) << "lists the valid names: " << bad_dev.err;
    }
}

TEST(DevicesTool, PerplexityOnTheDeviceEqualsTheCpu) {
    const std::string args = "-m " + (pocket::test::source_dir() / "models" / "stories260K.gguf").string() + " -f " +
                             (pocket::test::source_dir() / "README.md").string() + " -c 64 --chunks 3 -t 2 --json";
    const Result cpu = run_tool("perplexity", args + " -ngl 0");
    ASSERT_EQ(cpu.status, 0) << cpu.err;
    const Result dev = run_tool("perplexity", args + " -ngl all -dev TEST0", kTestDevice);
    ASSERT_EQ(dev.status, 0) << dev.err;
    auto ppl = [](const std::string& json) { return json.substr(json.find("\"ppl\""), 40); };
    EXPECT_EQ(ppl(dev.out), ppl(cpu.out));
    EXPECT_NE(dev.err.find("TEST0"), std::string::npos) << dev.err;
}

TEST(DevicesTool, BenchTakesNglListsAndPrintsTheColumns) {
    const std::string model = (pocket::test::source_dir() / "models" / "stories260K.gguf").string();
    const Result r = run_tool("bench", "-m " + model + " -p 16 -n 4 -r 1 -t 1 -ngl 0,all", kTestDevice);
    ASSERT_EQ(r.status, 0) << r.err;
    EXPECT_TRUE(std::regex_search(r.out, std::regex("\\| backend +\\| ngl \\|"))) << r.out;
    EXPECT_TRUE(std::regex_search(r.out, std::regex("\\| CPU +\\| +0 \\|"))) << r.out;
    EXPECT_TRUE(std::regex_search(r.out, std::regex("\\| TEST0,CPU +\\| +6 \\|"))) << r.out;  // 5 layers and the output
    EXPECT_EQ(lines(r.out), 2u + 4u + 2u);  // the table, a blank line and the build line
    const Result json = run_tool("bench", "-m " + model + " -p 16 -n 0 -r 1 -t 1 -ngl 2 -o json", kTestDevice);
    EXPECT_NE(json.out.find("\"n_gpu_layers\": 2"), std::string::npos) << json.out;
}

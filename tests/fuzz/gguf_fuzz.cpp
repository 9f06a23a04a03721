// libFuzzer entry point: any byte string must either parse or throw pocket::Error.
// Whatever parses is then walked, so that every span and view it hands out is touched.
#include "pocket/error.hpp"
#include "pocket/gguf.hpp"

#include <cstddef>
#include <cstdint>

namespace {

uint64_t touch(const pocket::GgufValue& v) {
    uint64_t h = static_cast<uint64_t>(v.type);
    if (v.type == pocket::GgufType::STRING) h += v.as_string().size();
    for (auto s : v.strings()) h += s.size() + (s.empty() ? 0 : static_cast<unsigned char>(s.back()));
    for (const auto& item : v.items()) h += touch(item);
    if (auto b = v.array<uint8_t>(); !b.empty()) h += b.back();
    return h;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    try {
        const auto f = pocket::GgufFile::from_memory(data, size, "fuzz.gguf");
        volatile uint64_t sink = 0;
        for (const auto& kv : f.metadata()) sink = sink + kv.key.size() + touch(kv.value);
        for (const auto& t : f.tensors())
            if (t.n_bytes) sink = sink + t.data[0] + t.data[t.n_bytes - 1];
        (void)f.find_as<uint32_t>("general.alignment");
    } catch (const pocket::Error&) {
    }
    return 0;
}

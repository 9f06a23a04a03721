#pragma once
// Promises every GPU device keeps, checked the same way for each backend's devices
// (vulkan_device_test.cpp, cuda_device_test.cpp).
#include "pocket/device.hpp"
#include "pocket/error.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <numeric>
#include <string>
#include <string_view>
#include <vector>

namespace pocket::test {

// The registered GPU devices whose names start with `prefix` ("Vulkan", "CUDA").
inline std::vector<Device*> gpu_devices_named(std::string_view prefix) {
    std::vector<Device*> out;
    for (Device* d : gpu_devices())
        if (d->name().starts_with(prefix)) out.push_back(d);
    return out;
}

// Asking for more than the device has is one line naming the device and the sizes.
inline void expect_out_of_memory_is_one_line(Device& d) {
    const size_t ask = d.memory().total + (size_t{64} << 20);
    try {
        auto b = d.alloc_buffer(ask);
        ADD_FAILURE() << d.name() << " allocated " << ask << " bytes, more than it has";
    } catch (const Error& e) {
        const std::string m = e.what();
        EXPECT_TRUE(m.starts_with(std::string(d.name()) + ": out of device memory: ")) << m;
        EXPECT_NE(m.find(" MiB asked, "), std::string::npos) << m;
        EXPECT_NE(m.find(" MiB free"), std::string::npos) << m;
        EXPECT_EQ(m.find('\n'), std::string::npos) << m;
    }
}

// Bytes written through a buffer come back unchanged, at any offset and length; fill sets
// them; a read past the end is refused.
inline void expect_buffer_bytes_round_trip(Device& d) {
    auto buf = d.alloc_buffer(1 << 20);
    std::vector<uint8_t> bytes(1000);
    std::iota(bytes.begin(), bytes.end(), uint8_t{3});
    auto* at = static_cast<uint8_t*>(buf->data()) + 12345;
    buf->fill(buf->data(), 0xAB, buf->size());
    buf->write(at, bytes.data(), bytes.size());
    std::vector<uint8_t> back(bytes.size() + 2);
    buf->read(at - 1, back.data(), back.size());
    EXPECT_EQ(back.front(), 0xAB);
    EXPECT_EQ(back.back(), 0xAB);
    EXPECT_TRUE(std::equal(bytes.begin(), bytes.end(), back.begin() + 1));
    EXPECT_THROW(buf->read(static_cast<uint8_t*>(buf->data()) + buf->size() - 4, back.data(), 8), Error)
        << "a read past the buffer's end is refused";
}

}  // namespace pocket::test

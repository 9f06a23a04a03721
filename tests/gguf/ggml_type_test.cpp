#include "pocket/ggml_type.hpp"

#include <gtest/gtest.h>

using namespace pocket;

TEST(GgmlType, EveryRowIsFoundByIdAndName) {
    for (const auto& row : kGgmlTypes) {
        const GgmlTypeInfo* by_id = ggml_type_info(static_cast<uint32_t>(row.type));
        ASSERT_NE(by_id, nullptr) << row.name;
        EXPECT_EQ(by_id->name, row.name);
        EXPECT_EQ(ggml_type_from_name(row.name), row.type);
        EXPECT_GT(row.block_size, 0u);
        EXPECT_GT(row.block_bytes, 0u);
    }
}

TEST(GgmlType, RemovedAndUnknownIdsAreRejected) {
    for (uint32_t id : {4u, 5u, 31u, 32u, 33u, 36u, 37u, 38u, 40u, 1000u, 0xFFFFFFFFu}) EXPECT_EQ(ggml_type_info(id), nullptr) << id;
}

TEST(GgmlType, RowBytes) {
    EXPECT_EQ(ggml_row_bytes(GgmlType::Q4_0, 64), 36u);
    EXPECT_EQ(ggml_row_bytes(GgmlType::Q4_K, 512), 288u);
    EXPECT_EQ(ggml_row_bytes(GgmlType::F16, 3), 6u);
    EXPECT_FALSE(ggml_row_bytes(GgmlType::Q8_0, 33).has_value());
    EXPECT_EQ(ggml_type_from_name("Q6_K"), GgmlType::Q6_K);
    EXPECT_FALSE(ggml_type_from_name("q9_9").has_value());
}

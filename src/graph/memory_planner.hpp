#pragma once
// The memory planner: places tensors with known lifetimes in one arena, reusing a region
// once the tensor in it is dead. Lifetimes are in steps of the execution order; a tensor
// allocated at step s and last read at step e occupies its region during [s, e]. At each
// step, the tensors born there are placed before the ones that die there are released, so a
// node's result never shares memory with its operands.
#include <cstddef>
#include <span>

namespace pocket::detail {

struct PlanItem {
    size_t size = 0;
    int start = 0;     // step that writes it first (-1: before the first node, e.g. an input)
    int end = 0;       // last step that reads it (INT_MAX: never released, e.g. an output)
    size_t offset = 0; // result
};

// Assigns each item an offset (a multiple of `align`); returns the arena size.
size_t plan_memory(std::span<PlanItem> items, size_t align);

}  // namespace pocket::detail

#pragma once
// Internal: the CPU device (host memory, the CPU backend, the load-time weight layout).
#include "pocket/device.hpp"

namespace pocket::kernels {
struct RepackKernels;
}

namespace pocket::cpu {

std::unique_ptr<Device> make_cpu_device();

// Host memory, aligned to Buffer::kAlign.
std::unique_ptr<Buffer> make_host_buffer(Device& device, size_t bytes);

// When `w` is a weight the CPU device re-laid out at load (rows interleaved for its matrix
// kernels), the kernels that read that layout; null for a weight in the file's layout.
const kernels::RepackKernels* repacked(const Tensor& w);

}  // namespace pocket::cpu

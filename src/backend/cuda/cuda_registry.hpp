#pragma once
// Internal: what the device registry (src/backend/devices.cpp) calls, free of CUDA's headers.
#include "pocket/device.hpp"

#include <memory>
#include <string>
#include <vector>

namespace pocket::cuda {

// Finds the NVIDIA GPUs (none when POCKET_CUDA=0). Sets `problem` to a one-line reason when
// the runtime is present but unusable (no driver, a driver older than this build).
std::vector<std::unique_ptr<Device>> find_devices(std::string& problem);

}  // namespace pocket::cuda

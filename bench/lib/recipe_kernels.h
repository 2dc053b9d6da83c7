#pragma once

#include <string>
#include <vector>

#include "bench/lib/recipe.h"
#include "jit/kernel_spec.h"
#include "qgemm/device.h"

namespace qgemm::bench {

/// The JIT kernels a recipe's jit and qdq problems compile on one device, identical ones once,
/// so that they can be compiled together on every core before anything is timed.
struct RecipeKernels {
  std::vector<KernelSpec> specs;
  std::vector<std::string> skipped;   ///< "<problem> (line L): why" for problems left out
};

/// Dense problems with 16-bit activations (their planned tile, hand-off and dequantize
/// kernels) and MoE problems (the grouped tile kernels and the tile list). Dense problems with
/// quantized activations are skipped: their layers compile their few kernels when prepared.
/// A problem whose formats have no kernel contributes what it can; its layer says why.
RecipeKernels recipe_kernels(const Recipe& recipe, const DeviceInfo& device);

}  // namespace qgemm::bench

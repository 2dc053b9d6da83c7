#pragma once

#include <memory>

#include "backend/backend.h"
#include "backend/grouped_layer.h"

namespace qgemm {

/// The same layer with the 16-bit activations (the layer's input type) that a widened
/// quantized-activation layer multiplies.
LayerProblem widened_problem(const LayerProblem& problem);

/// A layer with quantized activations whose pair has no 8-bit kernel (W4A8, MXFP4 x MXFP8, NVFP4
/// x FP8 or NVFP4, ...): each run() widens the quantized activations to the layer's 16-bit input
/// type on the GPU, quantizing 16-bit input first so that the product is always that of the
/// quantized activations, and runs `weight_only` (the same weights as a 16-bit-activation layer)
/// on them.
std::unique_ptr<PreparedLayer> make_widened_act_layer(const LayerProblem& problem,
                                                      std::unique_ptr<PreparedLayer> weight_only);

/// The grouped form: an expert stack's 16-bit input rows quantized and widened back on the GPU
/// before `weight_only` (the stack's 16-bit-activation layer) runs them. Token and group scales
/// only (per-row results, whatever rows a call holds); see widened_act_grouped_support.
std::unique_ptr<PreparedGrouped> make_widened_act_grouped(
    const LayerProblem& problem, int64_t experts, std::unique_ptr<PreparedGrouped> weight_only);

/// Whether a grouped call's activations of this format may be widened: no tensor or global
/// scale (one scale over a call's rows would depend on which rows the call holds), codes of a
/// byte at most, fp16/bf16 input.
Support widened_act_grouped_support(const LayerProblem& problem);

}  // namespace qgemm

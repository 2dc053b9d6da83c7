#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "qgemm/grouped.h"
#include "qgemm/linear.h"
#include "qgemm/moe.h"
#include "qgemm/quantized.h"

namespace qgemm {

/// The result of running a layer on host data.
struct HostRun {
  std::vector<double> c;  ///< [m, n] output values
  int64_t unwritten = 0;  ///< outputs still holding the NaN poison (GPU runs)
  std::string backend;    ///< who ran it
  double prepare_ms = 0;  ///< Linear::create + prepare (JIT compile or cache load)
};

/// The 16-bit rows `stored` ([m][k], columns in a weight's stored order) in the model's order:
/// stored column c is input feature k_order[c] (act-order layers take this order).
std::vector<uint8_t> rows_in_model_order(const std::vector<uint8_t>& stored, int64_t m, int64_t k,
                                         const std::vector<int32_t>& k_order);

/// Builds a Linear for `w`, copies `a` (and `bias`, raw bytes of the output type) to the device,
/// poisons C with NaN, runs once and copies C back. device -1 runs on host memory.
/// Used by `qgemm verify`, the GPU tests and the benchmark's correctness check.
/// With `k_order` (16-bit activations), the layer is an act-order one: `a` holds the columns in
/// the weight's stored order (as the reference reads them) and the layer receives them in the
/// model's order (stored column c is input feature k_order[c]), which it gathers back.
Expected<HostRun> run_linear_on_host_data(const QuantizedWeight& w, const QuantizedActivations& a,
                                          const std::vector<uint8_t>& bias, DType out,
                                          BackendKind backend, int device,
                                          const std::vector<int32_t>& k_order = {});

/// A grouped call's routing in host memory (the layout's own fields of GroupedArgs).
struct HostGroupedCall {
  GroupedLayout layout = GroupedLayout::kRouted;
  int64_t rows = 0;
  int top_k = 1;
  std::vector<int32_t> expert_ids, expert_map, offsets, counts;
  int64_t global_experts = 0;
};

/// Builds a GroupedLinear for `stack` (options: act, input, out, backend, device), copies the
/// 16-bit input rows `a16`, the routing and `bias` ([E, N] raw bytes of the output type) to the
/// device, poisons C with NaN, runs once and copies C ([out rows, N]) back. `unwritten` counts
/// the NaN outputs of the rows the call must write (rows it leaves alone stay NaN).
Expected<HostRun> run_grouped_on_host_data(const QuantizedWeight& stack, const LinearOptions& lo,
                                           const std::vector<uint8_t>& a16,
                                           const HostGroupedCall& call,
                                           const std::vector<uint8_t>& bias);

/// The reference of a grouped call, [out rows, N]: from reference_moe over the equivalent
/// routing (contiguous and masked rows as slots of one expert each), zero for routed slots no
/// local expert takes, NaN for the rows the call does not write. `a` is A as the layer
/// multiplies it (quantized when the layer's activations are).
Expected<std::vector<double>> reference_grouped(const QuantizedActivations& a,
                                                const QuantizedWeight& stack,
                                                const HostGroupedCall& call,
                                                const std::vector<float>& bias);

/// A grouped call's outputs (run_grouped_on_host_data's c) against its reference
/// (reference_grouped): the values of the rows the call writes, side by side, and how many
/// outputs of the rows it must leave alone no longer hold the NaN poison.
struct GroupedOutputs {
  std::vector<double> want, got;
  int64_t touched = 0;
};
GroupedOutputs split_grouped_outputs(const std::vector<double>& reference,
                                     const std::vector<double>& c);

/// Top-k routing of `tokens` rows of router logits [tokens, experts] on the host, by the rule the
/// layer's GPU kernel follows (moe_math.cuh): ids and weights [tokens, top_k].
void route_on_host(const MoeOptions& options, const float* logits, const float* correction_bias,
                   int64_t tokens, int64_t experts, int32_t* ids, float* weights);

/// The reference of an MoE layer's call, [tokens, H]: each routed slot's w13 row from the
/// reference GEMM, rounded to the layer's 16-bit type (as the layer keeps it), the activation in
/// fp32 of those values, rounded, the w2 row likewise, then the weighted sum in double. `x16` is
/// [tokens, H] 16-bit; ids are global ([tokens, top_k], with `expert_map` over `global`
/// experts or local without); biases are [E, 2 I] and [E, H] values or empty.
Expected<std::vector<double>> reference_moe_layer(
    const std::vector<uint8_t>& x16, int64_t tokens, const QuantizedWeight& w13,
    const QuantizedWeight& w2, const MoeOptions& options, const std::vector<int32_t>& ids,
    const std::vector<float>& weights, const std::vector<int32_t>& expert_map, int64_t global,
    const std::vector<float>& w13_bias, const std::vector<float>& w2_bias);

/// Decodes raw output bytes of type `out` (fp32, fp16, bf16) into doubles.
std::vector<double> decode_output(DType out, const std::vector<uint8_t>& bytes);

}  // namespace qgemm

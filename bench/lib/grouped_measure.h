#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "bench/lib/runner.h"
#include "qgemm/grouped.h"
#include "qgemm/reference.h"

namespace qgemm::bench {

/// The bench's random weight [experts, n, k]: every expert quantized from fresh random values,
/// except that stacks of more than kDistinctExperts experts repeat the first kDistinctExperts
/// (expert e is expert e mod kDistinctExperts): quantizing DeepSeek-V3's 256 experts of a layer
/// (7.5 G values) takes minutes, and the timing depends on which experts a call hits, not on
/// their values. Checks still compare each slot with the reference of its own expert.
constexpr int64_t kDistinctExperts = 8;
Expected<QuantizedWeight> bench_expert_stack(int64_t experts, int64_t n, int64_t k,
                                             const WeightFormat& format, uint64_t seed);

/// One MoE problem at one token count: bf16 tokens routed to an expert stack, unreduced output
/// (one row per slot), sampled rows checked against the reference.
struct GroupedCase {
  const QuantizedWeight& w;
  const QuantizedActivations& a;  ///< [T, K] tokens, as the reference multiplies them
  /// Quantized activations: the bf16 rows [T, K] they were quantized from, which the jit layer
  /// takes (and quantizes on the GPU, bit for bit as the host did); null for 16-bit ones.
  const std::vector<uint16_t>* bf16_input = nullptr;
  const Routing& routing;
  DType out;
  std::vector<int64_t> rows;  ///< output rows (slots) compared with the reference
  int launches = 1, warmup = 3, repetitions = 15;
};

/// The reference of the sampled rows: each slot's token times its expert, in double; 0 for a
/// slot with id -1.
Expected<std::vector<double>> grouped_reference(const GroupedCase& c);

class CublasExperts;

/// What a GPU backend of `qgemm bench` runs a grouped problem with, built once per problem: the
/// jit backend's GroupedLinear (routed layout), or the cuBLAS BF16 baseline (every expert's
/// weight dequantized to bf16 on the GPU; per call one cuBLASLt GEMM per expert hit over its
/// tokens, gathered beforehand and not timed, in one graph); `skip` says why neither.
struct GroupedBackend {
  std::optional<Expected<GroupedLinear>> jit;
  std::optional<Expected<std::shared_ptr<CublasExperts>>> cublas;
  std::string skip;
};
GroupedBackend build_grouped_backend(const std::string& backend, const QuantizedWeight& w,
                                     const ActFormat& act, DType out, int64_t max_slots);

/// One case on that backend: a checked first call, then graph replays; `ref` gives the
/// reference of the sampled rows (computed once, shared by the backends).
Status measure_grouped(const GroupedCase& c, const GroupedBackend& backend,
                       const std::function<Expected<std::vector<double>>()>& ref, ResultRow& row);

}  // namespace qgemm::bench

#pragma once

#include <cstdint>
#include <string>

namespace qgemm::cli {

struct VerifyOptions {
  int64_t m = 0, n = 0, k = 0;
  std::string weight, act = "bf16", out = "bf16", backend = "auto";
  int64_t experts = 0;
  int top_k = 0;
  /// MoE rows: "routed" (tokens and top-k ids), "contiguous" (rows sorted by expert, cut at
  /// random points) or "masked" ([experts, m, k] blocks with random counts).
  std::string layout = "routed";
  bool reduce = false;
  bool bias = false;
  uint64_t seed = 1;
  int64_t check_rows = 0;
  bool quiet = false;  ///< one summary line instead of the table
  /// A checkpoint directory and one of its layers (qgemm inspect lists them): the weight (and
  /// bias) come from there instead of --weight, --n and --k; the activations stay random.
  std::string checkpoint, layer;
};

/// Runs one verify problem; returns the process exit code (0 = within tolerance).
int run_verify(const VerifyOptions& options);

}  // namespace qgemm::cli

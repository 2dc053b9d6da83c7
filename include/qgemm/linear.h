#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "qgemm/format.h"
#include "qgemm/quantized.h"
#include "qgemm/status.h"

// The driver's stream type (cuda.h declares it the same way).
struct CUstream_st;

namespace qgemm {

/// Who runs a layer.
enum class BackendKind {
  kAuto,  ///< the router picks: jit, then qdq, then cpu
  kJit,   ///< NVRTC-compiled fused kernels
  kQdq,   ///< dequantize to fp16/bf16 on the GPU, then cuBLASLt
  kCpu,   ///< the CPU reference (host memory, or copies to and from the GPU)
};

Expected<BackendKind> parse_backend(std::string_view name);
const char* backend_name(BackendKind kind);

/// How a Linear layer is built.
struct LinearOptions {
  ActFormat act;  ///< format of the activations the layer multiplies
  /// Quantized `act` only: the type of 16-bit activations passed to run() without scales,
  /// which the layer then quantizes itself (bf16 or fp16).
  DType input = DType::bf16();
  DType out = DType::bf16();  ///< output type: bf16, fp16 or fp32
  BackendKind backend = BackendKind::kAuto;
  int device = 0;  ///< GPU ordinal; -1 = host memory (cpu backend only)
  /// Tuning table (`qgemm tune`) for the jit backend's kernel choice: a path, "" for the
  /// default search path ($QGEMM_TUNING_DIR, else the cache directory's tuning/ folder) or
  /// "none" for the built-in heuristics. A table measured on another GPU is ignored (explain()
  /// says so).
  std::string tuning_table;
  /// On Hopper, jit kernels launch programmatically (programmatic dependent launch): a run()
  /// may start while the kernel before it on the stream finishes, streaming its first weights
  /// (which only create() writes), and waits for that kernel before it reads the activations
  /// or writes anything. False (or QGEMM_NO_PDL=1) launches plainly.
  bool programmatic_launch = true;
  /// Act-order weights (GPTQ desc_act, imported with their K permuted so that groups are
  /// contiguous): stored column c multiplies input feature k_order[c]. run() takes activations
  /// in the model's order and gathers their columns into the stored order first (a pass over
  /// the activations into the workspace). Empty: K is in order. With quantized `act`, run()
  /// takes 16-bit activations only (the layer quantizes the gathered ones).
  std::vector<int32_t> k_order;
};

/// A CUDA stream: the pointer type of both CUstream and cudaStream_t, so either passes as it is
/// (no CUDA header needed here). Null is the default stream.
using Stream = ::CUstream_st*;

/// The scales of quantized activations as run() receives them. Their granularity must be the
/// one LinearOptions::act describes; fp16/bf16 activations take none. A layer with quantized
/// activations also runs on 16-bit ones (LinearOptions::input) passed without scales: it
/// quantizes them itself.
///
///   token:  [m] values, one per row        group:  [m][K / group_k], row-major
///   tensor: [1] value                      global: [1] value (formats with /global only)
struct ActScales {
  const void* data = nullptr;               ///< device pointer (host pointer on a host layer)
  DType type = DType::fp32();               ///< element type of the array (fp32)
  ActScaleKind kind = ActScaleKind::kNone;  ///< per token, per group of K, or per tensor
  int group_k = 0;                          ///< kGroup: elements of K per scale
  const float* global = nullptr;            ///< the /global scale (NVFP4), else null

  /// fp32 scales laid out as `format` describes them (QuantizedActivations::scales/global).
  static ActScales of(const ActFormat& format, const float* data, const float* global = nullptr) {
    return {data, DType::fp32(), format.scale_kind, format.group_k, global};
  }
};

/// One call of a Linear layer: C[m, N] = A[m, K] . W^T (+ bias). Pointers are device pointers
/// on a GPU layer and host pointers on a host layer (device -1).
struct LinearArgs {
  int64_t m = 0;
  const void* a = nullptr;     ///< [m, K] row-major: codes of LinearOptions::act, or
                               ///< 16-bit values of LinearOptions::input (no a_scales)
  ActScales a_scales;          ///< quantized activations only
  const void* bias = nullptr;  ///< optional [N] in the output type
  void* c = nullptr;           ///< [m, N] row-major, output type
  void* workspace = nullptr;   ///< at least workspace_bytes(m) bytes, or null if that is 0
  size_t workspace_bytes = 0;
  Stream stream = nullptr;
};

namespace detail {
class LinearImpl;
}

/// A quantized linear layer: owns the weights in the chosen backend's layout and a plan.
///
///   auto layer = Linear::create(quantized_weight, options);   // validates, routes, packs
///   layer->prepare(max_tokens);                                // compiles every kernel needed
///   layer->run(args);                                          // no compile, no allocation
class Linear {
 public:
  static Expected<Linear> create(const QuantizedWeight& weight, const LinearOptions& options);

  /// Compiles (or loads from the cache) every kernel the plan needs for m <= max_tokens, and
  /// allocates the layer's own split-K state (jit: arrival counters, and the 16-token kernel's
  /// partial sums at 9-32 tokens: 0.5 MB for an 8192 x 8192 int4 layer, 0.8 MB for 4096 x
  /// 4096, which splits K more).
  Status prepare(int64_t max_tokens);
  /// Scratch bytes run() needs for m tokens (split-K partials, padded activations); 0 for m = 0.
  size_t workspace_bytes(int64_t m) const;
  /// Runs one call. Never compiles or allocates; safe to capture in a CUDA graph (jit, qdq).
  /// m = 0 is an empty call: it returns at once, touching no pointer.
  /// Calls on one Linear must not overlap on the GPU: issue them on one stream, or order them
  /// with events. The jit backend's split-K kernels count their arrivals (or pass their
  /// partial sums) in the layer's own device memory; overlapping calls would mix them (wrong
  /// results or a hang). Distinct Linear objects, even of the same weight, may run at the same
  /// time. The jit backend's own kernels add their split-K partial sums in split order,
  /// whichever split finishes last, so the same call on the same data gives the same bits every
  /// time (a programmatic and a plain launch may plan different splits, and so round
  /// differently); the cuBLASLt hand-off at large M is as reproducible as cuBLASLt is.
  Status run(const LinearArgs& args) const;

  int64_t n() const;
  int64_t k() const;
  const LinearOptions& options() const;
  /// The backend that runs this layer ("jit", "qdq" or "cpu").
  std::string backend() const;
  /// Why that backend was chosen, with every backend's answer and the kernels per M bucket.
  std::string explain() const;

 private:
  explicit Linear(std::shared_ptr<detail::LinearImpl> impl) : impl_(std::move(impl)) {}
  static Expected<Linear> create_checked(const QuantizedWeight& weight,
                                         const LinearOptions& options);
  std::shared_ptr<detail::LinearImpl> impl_;
};

}  // namespace qgemm

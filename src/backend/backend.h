#pragma once

#include <memory>
#include <string>

#include "qgemm/device.h"
#include "qgemm/linear.h"
#include "qgemm/quantized.h"

namespace qgemm {

/// Everything a backend needs to decide whether it can run a layer.
struct LayerProblem {
  int64_t n = 0;
  int64_t k = 0;
  int64_t experts = 1;
  WeightFormat weight;
  ActFormat act;
  /// Quantized act only: the 16-bit type of activations run() receives without scales.
  DType input = DType::bf16();
  DType out = DType::bf16();
  int device = 0;          ///< GPU ordinal, -1 = host memory
  DeviceInfo device_info;  ///< the GPU (or a preset); sm() == 0 when there is none
  /// False when planning for a described device (`qgemm plan --arch`): backends then answer on
  /// capability and skip checks that need the real GPU (cuBLASLt needs one to start).
  bool runtime_checks = true;
  /// Tuning table for the jit plan: a path, "" for the default search path, "none" for none.
  std::string tuning_table;
  /// LinearOptions::programmatic_launch.
  bool programmatic_launch = true;
  /// A kernel of the layer's own runs right before each GEMM and lets it start early (the
  /// act-order gather, launched programmatically): the decode tiles copy the weights of every
  /// stage they fill ahead while it runs (MmaGemmConfig::early_weights).
  bool early_weights = false;
  /// An act-order layer on a GPU: its column order on the device as 16-bit indices
  /// (ActOrder::device_order16), for the decode tiles that stage the rows themselves; null
  /// otherwise (and for K past 16-bit indices).
  const uint16_t* k_order = nullptr;

  std::string to_string() const;
};

/// A backend's answer to "can you run this?": yes, or no and why.
struct Support {
  bool ok = false;
  std::string reason;
  static Support yes() { return {true, ""}; }
  static Support no(std::string why) { return {false, std::move(why)}; }
};

/// A layer built by a backend: weights in its layout, kernels planned.
class PreparedLayer {
 public:
  virtual ~PreparedLayer() = default;
  virtual Status prepare(int64_t max_tokens) = 0;
  virtual size_t workspace_bytes(int64_t m) const = 0;
  virtual Status run(const LinearArgs& args) const = 0;
  /// Act-order layers (LayerProblem::k_order): whether run(args) reads the activations in the
  /// model's order and gathers their columns itself, so the caller must not gather them first.
  virtual bool gathers_columns(const LinearArgs& /*args*/) const { return false; }
  /// One line per M bucket: which kernel runs it.
  virtual std::string describe() const = 0;
};

/// One way of running a layer. supports() must only reject what this backend itself cannot do.
class Backend {
 public:
  virtual ~Backend() = default;
  virtual BackendKind kind() const = 0;
  virtual Support supports(const LayerProblem& problem) const = 0;
  virtual Expected<std::unique_ptr<PreparedLayer>> build(const QuantizedWeight& weight,
                                                         const LayerProblem& problem) const = 0;
};

/// The checks a GPU backend of a single (non-expert) layer starts with: the layer is on a GPU
/// and has one expert.
Support single_gpu_layer_support(const LayerProblem& p);

/// The 16-bit type a layer with activations `act` multiplies in when it expands them: the
/// activations' own type, or for quantized ones the 16-bit input type.
DType act_compute_type(const LayerProblem& p);

const Backend& cpu_backend();
const Backend& jit_backend();
const Backend& qdq_backend();

/// Writes reference values rounded to the output type (fp32, or 16-bit codes) to host memory.
void store_output(DType out, const double* values, size_t count, void* dst);

/// Bytes of activation scales for m rows of format `act` (0 for fp16/bf16).
int64_t act_scale_count(const ActFormat& act, int64_t m, int64_t k);

}  // namespace qgemm

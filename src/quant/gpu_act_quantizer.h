#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include "act_quant/act_quant_params.cuh"
#include "jit/cuda_driver.h"
#include "jit/kernel_loader.h"
#include "jit/kernel_spec.h"
#include "qgemm/format.h"
#include "qgemm/linear.h"

namespace qgemm {

/// Quantized activations in device memory: codes [m][ldq], one byte each, and their scales as
/// QuantizedActivations lays them out (fp32), with the global scale of formats that have one.
struct DeviceActs {
  uint8_t* q = nullptr;
  int64_t ldq = 0;
  float* scales = nullptr;
  float* global = nullptr;

  /// The quantized activations a run() received (codes in rows of k, a_scales set).
  static DeviceActs of(const LinearArgs& args, int64_t k) {
    return {static_cast<uint8_t*>(const_cast<void*>(args.a)), k,
            static_cast<float*>(const_cast<void*>(args.a_scales.data)),
            const_cast<float*>(args.a_scales.global)};
  }
};

/// One of the activation quantizer's kernels (kernels/act_quant/act_quant.cuh) for a format,
/// 16-bit input type and GPU.
struct ActQuantConfig {
  enum class Kernel { kQuantize, kAmax, kDequantize };
  ActFormat format;
  DType input = DType::bf16();
  std::string arch = "sm_80";
  Kernel kernel = Kernel::kQuantize;

  std::string to_string() const;
  KernelSpec spec() const;
};

/// The GPU activation quantizer of one format: bit-identical to quantize_activations (both
/// follow kernels/act_quant/act_quant_math.cuh), graph-safe, no allocation when it runs.
class GpuActQuantizer {
 public:
  /// Compiles (or loads from the kernel cache) the kernels for `format` with fp16/bf16 `input`
  /// activations on `arch`, in the current context.
  static Expected<GpuActQuantizer> create(const ActFormat& format, DType input,
                                          const std::string& arch);

  /// Device scratch bytes quantize() needs (the tensor's amax for tensor and global scales).
  static size_t scratch_bytes(const ActFormat& format);

  /// Quantizes a [m][lda] (input type) into `out` on `stream`; `scratch` holds scratch_bytes().
  Status quantize(const void* a, int64_t lda, int64_t m, int64_t k, const DeviceActs& out,
                  void* scratch, CUstream stream) const;
  /// Quantizes gathered rows into `out`'s m rows: row r from row src_rows[r] / src_div of a
  /// (device memory, filled on the stream before), rows whose entry is negative left as they
  /// are. Each row quantizes as it would in place (token and group scales only).
  Status quantize_rows(const void* a, int64_t lda, const int32_t* src_rows, int src_div, int64_t m,
                       int64_t k, const DeviceActs& out, void* scratch, CUstream stream) const;
  /// The input-type values of quantized activations, into out [m][ldo].
  Status dequantize(const DeviceActs& in, int64_t m, int64_t k, void* out, int64_t ldo,
                    CUstream stream) const;

  const ActFormat& format() const { return format_; }

 private:
  /// The arguments both kernels share: the quantized side `acts`, rows of m x k, 16-bit rows
  /// `ld16` apart.
  ActQuantParams params(const DeviceActs& acts, int64_t m, int64_t k, int64_t ld16) const;

  ActFormat format_;
  DType input_;
  LoadedKernel quantize_, amax_, dequantize_;
};

/// Device bytes for m rows of K activations quantized by a layer itself: the codes (rows padded
/// to 16 bytes, as TMA reads them), scales, global scale and the quantizer's scratch.
size_t act_workspace_bytes(const ActFormat& format, int64_t m, int64_t k);

/// The parts of such a workspace at `base`; `scratch` gets the quantizer's scratch.
DeviceActs carve_act_workspace(void* base, const ActFormat& format, int64_t m, int64_t k,
                               void** scratch);

}  // namespace qgemm

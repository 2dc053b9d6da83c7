#include "quant/gpu_act_quantizer.h"

#include <algorithm>
#include <limits>

#include "backend/backend.h"
#include "quant/scale_recipe.h"
#include "util/error.h"
#include "util/memory.h"

namespace qgemm {
namespace {

// Grid sizes: enough CTAs to fill any current GPU several times over; the kernels stride.
constexpr int64_t kMaxRowCtas = 4096;
constexpr int64_t kMaxFlatCtas = 2048;

std::string code_fields(const char* prefix, const ActCode& c) {
  return str("  static constexpr int k", prefix, "Kind = ", c.kind, ";\n  static constexpr int k",
             prefix, "Bits = ", c.bits, ";\n  static constexpr int k", prefix, "Exp = ", c.exp_bits,
             ";\n  static constexpr int k", prefix, "Man = ", c.man_bits,
             ";\n  static constexpr int k", prefix, "Flavor = ", c.flavor, ";\n");
}

const char* kernel_name(ActQuantConfig::Kernel k) {
  switch (k) {
    case ActQuantConfig::Kernel::kQuantize:
      return "act_quantize_kernel";
    case ActQuantConfig::Kernel::kAmax:
      return "act_amax_kernel";
    case ActQuantConfig::Kernel::kDequantize:
      return "act_dequantize_kernel";
  }
  return "?";
}

bool needs_amax(const ActFormat& f) {
  return f.scale_kind == ActScaleKind::kTensor || f.global_scale;
}

}  // namespace

std::string ActQuantConfig::to_string() const {
  return str(kernel_name(kernel), " ", input.name(), " -> ", format.to_string(), " ", arch);
}

KernelSpec ActQuantConfig::spec() const {
  const int granularity = format.scale_kind == ActScaleKind::kToken   ? 1
                          : format.scale_kind == ActScaleKind::kGroup ? 2
                                                                      : 3;
  KernelSpec s;
  s.family = "act_quant";
  s.config = to_string();
  s.arch = arch;
  s.threads = 256;
  s.source = str("#include \"act_quant/act_quant.cuh\"\nstruct Cfg {\n",
                 "  static constexpr qgemm::Elem kIn = ",
                 input == DType::bf16() ? "qgemm::Elem::kBf16" : "qgemm::Elem::kFp16", ";\n",
                 code_fields("Code", act_code(format.type)),
                 code_fields("Scale", act_code(format.scale_type)),
                 "  static constexpr int kGranularity = ", granularity,
                 ";\n  static constexpr int kGroup = ", std::max(format.group_k, 1),
                 ";\n  static constexpr bool kGlobal = ", format.global_scale ? "true" : "false",
                 ";\n};\ntemplate __global__ void qgemm::", kernel_name(kernel),
                 "<Cfg>(const qgemm::ActQuantParams);\n");
  s.name_expression = str("&qgemm::", kernel_name(kernel), "<Cfg>");
  return s;
}

Expected<GpuActQuantizer> GpuActQuantizer::create(const ActFormat& format, DType input,
                                                  const std::string& arch) {
  if (!format.is_quantized())
    return invalid_argument(str("GpuActQuantizer: ", format.to_string(), " is not quantized"));
  if (!(input == DType::bf16() || input == DType::fp16()))
    return invalid_argument(str("GpuActQuantizer: input type ", input.name(),
                                " is not supported; accepted: bf16, fp16"));
  if (format.type.bits > 8)
    return invalid_argument(str("GpuActQuantizer: ", format.type.name(), " codes are not 1 byte"));
  GpuActQuantizer q;
  q.format_ = format;
  q.input_ = input;
  ActQuantConfig c{format, input, arch, ActQuantConfig::Kernel::kQuantize};
  auto quantize = get_kernel(c.spec());
  if (!quantize) return quantize.status();
  q.quantize_ = *quantize;
  c.kernel = ActQuantConfig::Kernel::kDequantize;
  auto dequantize = get_kernel(c.spec());
  if (!dequantize) return dequantize.status();
  q.dequantize_ = *dequantize;
  if (needs_amax(format)) {
    c.kernel = ActQuantConfig::Kernel::kAmax;
    auto amax = get_kernel(c.spec());
    if (!amax) return amax.status();
    q.amax_ = *amax;
  }
  return q;
}

size_t GpuActQuantizer::scratch_bytes(const ActFormat& format) {
  return needs_amax(format) ? 16 : 0;
}

ActQuantParams GpuActQuantizer::params(const DeviceActs& acts, int64_t m, int64_t k,
                                       int64_t ld16) const {
  ActQuantParams p{};
  p.q = acts.q;
  p.scales = acts.scales;
  p.global = acts.global;
  p.m = static_cast<i32>(m);
  p.k = static_cast<i32>(k);
  p.lda = static_cast<i32>(ld16);
  p.ldq = static_cast<i32>(acts.ldq);
  p.scale_cols = static_cast<i32>(std::max<int64_t>(format_.scale_cols(k), 1));
  return p;
}

Status GpuActQuantizer::quantize(const void* a, int64_t lda, int64_t m, int64_t k,
                                 const DeviceActs& out, void* scratch, CUstream stream) const {
  return quantize_rows(a, lda, nullptr, 1, m, k, out, scratch, stream);
}

Status GpuActQuantizer::quantize_rows(const void* a, int64_t lda, const int32_t* src_rows,
                                      int src_div, int64_t m, int64_t k, const DeviceActs& out,
                                      void* scratch, CUstream stream) const {
  if (m <= 0) return Status();
  if (src_rows != nullptr && (needs_amax(format_) || src_div < 1))
    return invalid_argument(
        str("GpuActQuantizer: gathered rows take token or group scales and a "
            "divisor of 1 or more, not ",
            format_.to_string(), " with divisor ", src_div));
  ActQuantParams p = params(out, m, k, lda);
  p.a = static_cast<const u16*>(a);
  p.src_rows = src_rows;
  p.src_div = src_div;
  p.amax = static_cast<u32*>(scratch);
  p.vec = k % 8 == 0 && lda % 8 == 0 && out.ldq % 8 == 0 &&
          reinterpret_cast<uintptr_t>(a) % 16 == 0 && reinterpret_cast<uintptr_t>(out.q) % 8 == 0;
  const int64_t flat_ctas = std::clamp<int64_t>((m * k / 8 + 255) / 256, 1, kMaxFlatCtas);
  if (needs_amax(format_)) {
    auto driver = cuda_driver();
    if (!driver) return driver.status();
    QGEMM_CU(*driver, cuMemsetD32Async, reinterpret_cast<CUdeviceptr>(scratch), 0, 1, stream);
    const int64_t chunks = m * (p.vec ? k / 8 : k);
    const int64_t per_cta = 256 * kAmaxChunksPerThread;
    const int64_t amax_ctas = (chunks + per_cta - 1) / per_cta;
    if (amax_ctas > std::numeric_limits<int32_t>::max())
      return invalid_argument(str("GpuActQuantizer: ", m, " x ", k, " activations are too many"));
    QGEMM_RETURN_IF_ERROR(launch(amax_, static_cast<unsigned>(amax_ctas), 1, 1, p, stream));
  }
  const int64_t ctas =
      format_.scale_kind == ActScaleKind::kGroup ? flat_ctas : std::min<int64_t>(m, kMaxRowCtas);
  return launch(quantize_, static_cast<unsigned>(ctas), 1, 1, p, stream);
}

Status GpuActQuantizer::dequantize(const DeviceActs& in, int64_t m, int64_t k, void* out,
                                   int64_t ldo, CUstream stream) const {
  if (m <= 0) return Status();
  ActQuantParams p = params(in, m, k, ldo);
  p.out = static_cast<u16*>(out);
  p.vec = k % 8 == 0 && ldo % 8 == 0 && in.ldq % 8 == 0 &&
          reinterpret_cast<uintptr_t>(out) % 16 == 0 && reinterpret_cast<uintptr_t>(in.q) % 8 == 0;
  const int64_t ctas = std::clamp<int64_t>((m * k / (p.vec ? 8 : 1) + 255) / 256, 1, kMaxFlatCtas);
  return launch(dequantize_, static_cast<unsigned>(ctas), 1, 1, p, stream);
}

namespace {

// Byte offsets of a layer's own quantized activations in its workspace (act_workspace_bytes).
struct ActWorkspaceLayout {
  int64_t ldq, scales, global, scratch, end;

  ActWorkspaceLayout(const ActFormat& format, int64_t m, int64_t k) {
    ldq = align16(k);
    scales = align16(m * ldq);
    global = scales + align16(act_scale_count(format, m, k) * 4);
    scratch = global + 16;
    end = scratch + static_cast<int64_t>(GpuActQuantizer::scratch_bytes(format));
  }
};

}  // namespace

size_t act_workspace_bytes(const ActFormat& format, int64_t m, int64_t k) {
  if (!format.is_quantized() || m <= 0) return 0;
  return static_cast<size_t>(ActWorkspaceLayout(format, m, k).end);
}

DeviceActs carve_act_workspace(void* base, const ActFormat& format, int64_t m, int64_t k,
                               void** scratch) {
  auto* p = static_cast<uint8_t*>(base);
  const ActWorkspaceLayout l(format, m, k);
  *scratch = p + l.scratch;
  return {p, l.ldq, reinterpret_cast<float*>(p + l.scales),
          format.global_scale ? reinterpret_cast<float*>(p + l.global) : nullptr};
}

}  // namespace qgemm

#pragma once

#include <cstdint>
#include <string_view>
#include <vector>

#include "backend/backend.h"
#include "jit/kernel_spec.h"
#include "jit/mma_gemm.h"
#include "qgemm/device.h"
#include "qgemm/format.h"

namespace qgemm {

/// One dense layer on one GPU, as a kernel family sees it.
struct GemmProblem {
  int64_t n = 0;
  int64_t k = 0;
  WeightFormat weight;
  DType act = DType::bf16();  ///< fp16 or bf16 activations
  DType out = DType::bf16();
  DeviceInfo device;
  /// cuBLASLt is loaded: a family that expands the weight may hand the product to it.
  bool cublas = false;

  std::string to_string() const;
};

/// A family's kernel for the tokens up to `max_m` (from the bucket before it on).
struct FamilyBucket {
  int64_t max_m = INT64_MAX;
  MmaGemmConfig config;
  /// Where the planner may drop the bucket to keep a layer within its kernel budget (the next
  /// bucket's kernel then runs its tokens): the most its tokens were measured to run slower so,
  /// as a fraction. 0: the bucket stays whatever the budget.
  double droppable_loss = 0;
};

/// What a family offers a layer: its kernels from `from_m` tokens on, smallest M first; the
/// last covers every M.
struct FamilyProposal {
  int64_t from_m = 1;
  std::vector<FamilyBucket> buckets;
};

/// A kernel family: device templates under kernels/<name>/, this host side under
/// src/families/<name>.cpp (its policy: which kernels for which layer and GPU), tests named
/// after it. The dense families read one packed layout (pack/mma_pack.h) and share the
/// launcher (backend/jit_layer.h), so a layer may mix their kernels by M.
class KernelFamily {
 public:
  virtual ~KernelFamily() = default;
  /// The stem every part of the family is named by.
  virtual std::string_view name() const = 0;
  /// Whether the family has kernels for this layer on this GPU; why not when it has none.
  virtual Support supports(const GemmProblem& problem) const = 0;
  /// The family's choice of kernels for the layer (called only where supports() said yes).
  virtual Expected<FamilyProposal> propose(const GemmProblem& problem) const = 0;
  /// The kernel one of its configs compiles to (the tile kernel of its family by default).
  virtual KernelSpec spec(const MmaGemmConfig& config) const { return config.spec(); }
  /// Whether its kernel expands the packed weight for cuBLASLt to multiply, instead of
  /// computing the product itself.
  virtual bool expands() const { return false; }
};

/// Every registered family, in the order the planner composes them: a family takes over the
/// tokens from its proposal's from_m on from the families before it.
const std::vector<const KernelFamily*>& kernel_families();

/// The registered family of this name, or nullptr.
const KernelFamily* find_family(std::string_view name);

}  // namespace qgemm

#include "families/dense_expand.h"
#include "families/dense_mma.h"
#include "families/dense_wgmma.h"
#include "families/family.h"
#include "util/error.h"

namespace qgemm {

const std::vector<const KernelFamily*>& kernel_families() {
  // Composition order: each family takes the tokens from its proposal's from_m on.
  static const std::vector<const KernelFamily*> families = {
      &dense_mma_family(),
      &dense_wgmma_family(),
      &dense_expand_family(),
  };
  return families;
}

const KernelFamily* find_family(std::string_view name) {
  for (const KernelFamily* f : kernel_families())
    if (f->name() == name) return f;
  return nullptr;
}

std::string GemmProblem::to_string() const {
  return str("N=", n, " K=", k, " weight ", weight.to_string(), " ", act.name(), "->", out.name(),
             " on ", device.arch());
}

}  // namespace qgemm

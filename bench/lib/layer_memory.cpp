#include "bench/lib/layer_memory.h"

#include <algorithm>
#include <string>

#include "util/error.h"
#include "util/memory.h"

namespace qgemm {

Status check_layer_fits(int64_t m, int64_t n, int64_t k, int64_t experts,
                        int64_t generated_experts) {
  const std::string what = str("a random layer of M=", m, ", N=", n, ", K=", k,
                               experts > 1 ? str(", E=", experts) : std::string());
  // fp32 weights and activations as generated, their quantized copies (at most 2 bytes each),
  // and per output value its bytes, a double decoded and a double of the reference.
  auto generated = byte_count(what, {std::min(generated_experts, experts), n, k}, 4);
  auto quantized = byte_count(what, {experts, n, k}, 2);
  auto acts = byte_count(what, {m, k}, 6);
  auto outputs = byte_count(what, {m, n}, 20);
  for (const auto* b : {&generated, &quantized, &acts, &outputs})
    if (!*b) return b->status();
  const double total = double(*generated) + double(*quantized) + double(*acts) + double(*outputs);
  return check_host_memory(what, static_cast<int64_t>(std::min(total, 9e18)));
}

}  // namespace qgemm

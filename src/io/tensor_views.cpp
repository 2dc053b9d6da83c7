#include "io/tensor_views.h"

#include <algorithm>
#include <cstring>

#include "format/half.h"
#include "util/error.h"

namespace qgemm {

Expected<const SafetensorsTensor*> checkpoint_tensor(const SafetensorsCheckpoint& c,
                                                     const char* producer, const std::string& name,
                                                     std::initializer_list<const char*> dtypes,
                                                     size_t rank, bool required) {
  const SafetensorsTensor* t = c.find(name);
  if (t == nullptr) {
    if (!required) return static_cast<const SafetensorsTensor*>(nullptr);
    return invalid_argument(str(producer, " layer: tensor '", name, "' is missing"));
  }
  if (std::none_of(dtypes.begin(), dtypes.end(), [&](const char* d) { return t->dtype == d; })) {
    std::string accepted;
    for (const char* d : dtypes) accepted += (accepted.empty() ? "" : ", ") + std::string(d);
    return invalid_argument(
        str(producer, " layer: tensor '", name, "' is ", t->dtype, "; expected ", accepted));
  }
  if (t->shape.size() != rank)
    return invalid_argument(str(producer, " layer: tensor '", name, "' has ", t->shape.size(),
                                " dimensions; expected ", rank));
  return t;
}

uint32_t word_at(const SafetensorsTensor& t, int64_t i) {
  uint32_t w;
  std::memcpy(&w, t.data + 4 * i, 4);
  return w;
}

float value_at(const SafetensorsTensor& t, int64_t i) {
  if (t.dtype == "F32") {
    float f;
    std::memcpy(&f, t.data + 4 * i, 4);
    return f;
  }
  uint16_t h;
  std::memcpy(&h, t.data + 2 * i, 2);
  return t.dtype == "BF16" ? bf16_to_float(h) : fp16_to_float(h);
}

Status read_bias(const SafetensorsCheckpoint& c, const char* producer, const std::string& prefix,
                 int64_t n, std::vector<float>& out) {
  auto bias = checkpoint_tensor(c, producer, prefix + ".bias", {"F16", "BF16", "F32"}, 1, false);
  if (!bias) return bias.status();
  if (*bias == nullptr) return Status();
  if ((**bias).shape[0] != n)
    return invalid_argument(str(producer, " layer: tensor '", prefix, ".bias' has ",
                                (**bias).shape[0], " values; expected N=", n));
  for (int64_t i = 0; i < n; ++i) out.push_back(value_at(**bias, i));
  return Status();
}

}  // namespace qgemm

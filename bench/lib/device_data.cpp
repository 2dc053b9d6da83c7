#include "bench/lib/device_data.h"

#include <cstring>

#include "format/half.h"
#include "qgemm/quantized.h"
#include "util/parallel.h"
#include "util/random.h"

namespace qgemm::bench {

std::vector<uint8_t> encode_values(const std::vector<float>& values, DType type) {
  const size_t width = (type.bits + 7) / 8;
  std::vector<uint8_t> out(values.size() * width);
  parallel_for(int64_t(values.size()), 1 << 16, [&](int64_t begin, int64_t end) {
    for (int64_t i = begin; i < end; ++i) {
      uint32_t code;
      if (type == DType::fp16() || type == DType::bf16())
        code = float_to_half_code(type, values[i]);
      else
        code = encode(type, values[i]);
      std::memcpy(&out[i * width], &code, width);
    }
  });
  return out;
}

Expected<DeviceBuffer> random_device_values(DType type, int64_t count, uint64_t seed,
                                            float stddev) {
  const auto bytes = encode_values(random_normal(count, seed, stddev), type);
  return DeviceBuffer::upload(bytes.data(), bytes.size());
}

}  // namespace qgemm::bench

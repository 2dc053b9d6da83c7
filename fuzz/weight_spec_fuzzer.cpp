// WeightFormat::parse on each line of arbitrary bytes: it must return an error or a valid format
// whose canonical spec parses back to the same format and prints unchanged.
#include "fuzz/fuzz_check.h"

namespace {

void check_spec(std::string_view spec) {
  using qgemm::fuzz::check;
  const auto format = qgemm::fuzz::check_spec_round_trip<qgemm::WeightFormat>(spec);
  // Scale shapes divide by the group sizes the parser accepted.
  if (format) check(format->scale_rows(4096) >= 0 && format->scale_cols(4096) >= 0);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  qgemm::fuzz::for_each_line(data, size, check_spec);
  return 0;
}

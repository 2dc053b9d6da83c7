// WeightFormat::parse on arbitrary bytes: it must return an error or a valid format whose
// canonical spec parses back to the same format and prints unchanged.
#include "fuzz/fuzz_check.h"
#include "qgemm/format.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using qgemm::fuzz::check;
  auto format = qgemm::WeightFormat::parse(qgemm::fuzz::as_text(data, size));
  if (!format) return 0;
  check(format->validate().ok());
  const std::string canonical = format->to_string();
  auto again = qgemm::WeightFormat::parse(canonical);
  check(again.ok() && *again == *format && again->to_string() == canonical);
  // Scale shapes divide by the group sizes the parser accepted.
  check(format->scale_rows(4096) >= 0 && format->scale_cols(4096) >= 0);
  return 0;
}

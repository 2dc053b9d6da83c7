// parse_tuning_table on arbitrary bytes: it must return an error or a table that holds what the
// planner relies on, and that writes and reads back unchanged.
#include <cstdint>
#include <string>

#include "fuzz/fuzz_check.h"
#include "plan/tuning_table.h"

namespace {

constexpr const char* kSource = "fuzz.json";

// What the planner assumes of every layer it looks up.
void check_layer(const qgemm::TunedLayer& layer) {
  using qgemm::fuzz::check;
  check(layer.n >= 1 && layer.k >= 1);
  check(!layer.buckets.empty() && layer.buckets.back().max_m == INT64_MAX);
  check(!layer.buckets.front().expand);
  for (size_t i = 1; i < layer.buckets.size(); ++i)
    check(layer.buckets[i].max_m > layer.buckets[i - 1].max_m);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using qgemm::fuzz::check;
  const std::string text(qgemm::fuzz::as_text(data, size));
  auto table = qgemm::parse_tuning_table(text, kSource);
  if (!table) {
    check(table.status().message().find(kSource) != std::string::npos);
    return 0;
  }
  for (const qgemm::TunedLayer& layer : table->layers) {
    check_layer(layer);
    check(table->find(layer.n, layer.k, layer.weight, layer.act, layer.out) != nullptr);
  }
  auto again = qgemm::parse_tuning_table(qgemm::tuning_table_text(*table), kSource);
  check(again.ok() && *again == *table);
  return 0;
}

#include "layer_formats.h"

#include "util/error.h"

namespace qgemm::cli {

Expected<LayerFormats> parse_layer_formats(const std::string& weight, const std::string& act,
                                           const std::string& out) {
  auto wf = WeightFormat::parse(weight);
  if (!wf) return wf.status();
  auto af = ActFormat::parse(act);
  if (!af) return af.status();
  auto out_type = parse_dtype(out);
  if (!out_type) return out_type.status();
  return LayerFormats{*wf, *af, *out_type};
}


Status check_positive_nk(int64_t n, int64_t k) {
  if (n <= 0 || k <= 0)
    return invalid_argument(str("--n and --k must be positive (got n=", n, ", k=", k, ")"));
  return Status();
}

}  // namespace qgemm::cli

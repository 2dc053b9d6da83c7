#pragma once

#include <cstdint>
#include <string>

#include "qgemm/format.h"
#include "qgemm/status.h"

namespace qgemm::cli {

/// A layer's formats, as the commands take them from --weight, --act and the output type.
struct LayerFormats {
  WeightFormat weight;
  ActFormat act;
  DType out;
};

/// Parses the three specs; the first that does not parse gives the error.
Expected<LayerFormats> parse_layer_formats(const std::string& weight, const std::string& act,
                                           const std::string& out);

/// An error naming --n and --k unless both are positive.
Status check_positive_nk(int64_t n, int64_t k);

}  // namespace qgemm::cli

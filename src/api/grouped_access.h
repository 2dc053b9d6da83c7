// What the MoE layer needs of its grouped GEMMs beyond the public GroupedLinear: its second
// GEMM runs on the tile list the first one built (the same routing), one kernel fewer per call.
#pragma once

#include "qgemm/grouped.h"

namespace qgemm::detail {

struct GroupedAccess {
  /// Rows per tile of the tile list g.run(args) builds (0: it builds none).
  static int tile_rows(const GroupedLinear& g, const GroupedArgs& args);
  /// g.run(args) without building the tile list: the workspace holds one an earlier call built
  /// on the same stream for the same routing and tile rows (PreparedGrouped::run_on_built_tiles).
  static Status run_on_built_tiles(const GroupedLinear& g, const GroupedArgs& args);
};

}  // namespace qgemm::detail

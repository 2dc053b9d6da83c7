#pragma once

#include <cuda.h>

#include <functional>
#include <vector>

#include "qgemm/status.h"

namespace qgemm::bench {

/// Captures `launches` calls of `launch(i, stream)` into one CUDA graph, replays it `warmup`
/// times untimed and `repetitions` times timed with device events, and returns the time per
/// launch of each timed replay, in microseconds. Launch gaps vanish inside the graph.
Expected<std::vector<double>> time_graph_replays(const std::function<Status(int, CUstream)>& launch,
                                                 int launches, int warmup, int repetitions);

}  // namespace qgemm::bench

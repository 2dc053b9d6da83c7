#include "bench/lib/gpu_timer.h"

#include "jit/cuda_driver.h"
#include "util/error.h"

namespace qgemm::bench {

Expected<std::vector<double>> time_graph_replays(const std::function<Status(int, CUstream)>& launch,
                                                 int launches, int warmup, int repetitions) {
  auto driver = cuda_driver();
  if (!driver) return driver.status();
  const CudaDriver* d = *driver;
  CUstream stream = nullptr;
  CUgraph graph = nullptr;
  CUgraphExec exec = nullptr;
  CUevent start = nullptr, stop = nullptr;
  // Releases whatever was created, on every path out.
  struct Cleanup {
    const CudaDriver* d;
    CUstream* stream;
    CUgraph* graph;
    CUgraphExec* exec;
    CUevent *start, *stop;
    ~Cleanup() {
      if (*exec) d->cuGraphExecDestroy(*exec);
      if (*graph) d->cuGraphDestroy(*graph);
      if (*start) d->cuEventDestroy(*start);
      if (*stop) d->cuEventDestroy(*stop);
      if (*stream) d->cuStreamDestroy(*stream);
    }
  } cleanup{d, &stream, &graph, &exec, &start, &stop};

  QGEMM_CU(d, cuStreamCreate, &stream, CU_STREAM_NON_BLOCKING);
  QGEMM_CU(d, cuStreamBeginCapture, stream, CU_STREAM_CAPTURE_MODE_THREAD_LOCAL);
  Status captured;
  for (int i = 0; i < launches && captured.ok(); ++i) captured = launch(i, stream);
  const CUresult ended = d->cuStreamEndCapture(stream, &graph);
  QGEMM_RETURN_IF_ERROR(captured);
  QGEMM_RETURN_IF_ERROR(cuda_status(ended, "cuStreamEndCapture"));
  QGEMM_CU(d, cuGraphInstantiateWithFlags, &exec, graph, 0);
  QGEMM_CU(d, cuEventCreate, &start, CU_EVENT_DEFAULT);
  QGEMM_CU(d, cuEventCreate, &stop, CU_EVENT_DEFAULT);
  for (int i = 0; i < warmup; ++i) QGEMM_CU(d, cuGraphLaunch, exec, stream);
  QGEMM_CU(d, cuStreamSynchronize, stream);
  std::vector<double> per_launch_us;
  for (int r = 0; r < repetitions; ++r) {
    QGEMM_CU(d, cuEventRecord, start, stream);
    QGEMM_CU(d, cuGraphLaunch, exec, stream);
    QGEMM_CU(d, cuEventRecord, stop, stream);
    QGEMM_CU(d, cuEventSynchronize, stop);
    float ms = 0;
    QGEMM_CU(d, cuEventElapsedTime, &ms, start, stop);
    per_launch_us.push_back(1000.0 * ms / launches);
  }
  return per_launch_us;
}

}  // namespace qgemm::bench

#pragma once

#include <map>
#include <string>
#include <vector>

#include "backend/backend.h"

namespace qgemm {

/// One backend's answer during routing.
struct BackendAnswer {
  BackendKind kind;
  Support support;
};

/// The router's decision: every backend's answer, in the order asked, and the chosen one.
struct Route {
  std::vector<BackendAnswer> answers;
  const Backend* chosen = nullptr;
  std::string explain() const;
};

/// Asks jit, then qdq, then cpu (or only `requested`) and picks the first that says yes.
/// `declined` holds backends that said yes but then failed to build the layer, with the reason.
/// Fails only when no backend can run the problem, with every backend's reason.
Expected<Route> route(const LayerProblem& problem, BackendKind requested,
                      const std::map<BackendKind, std::string>& declined = {});

}  // namespace qgemm

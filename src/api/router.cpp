#include "api/router.h"
#include "util/error.h"

namespace qgemm {
namespace {

std::vector<const Backend*> backends_in_order() {
  return {&jit_backend(), &qdq_backend(), &cpu_backend()};
}

}  // namespace

std::string Route::explain() const {
  std::string s;
  for (const BackendAnswer& a : answers) {
    s += str("  ", backend_name(a.kind), ": ", a.support.ok ? "yes" : "no, " + a.support.reason,
             chosen && chosen->kind() == a.kind ? "   <- chosen" : "", "\n");
  }
  return s;
}

Expected<Route> route(const LayerProblem& problem, BackendKind requested,
                      const std::map<BackendKind, std::string>& declined) {
  Route r;
  for (const Backend* b : backends_in_order()) {
    if (requested != BackendKind::kAuto && b->kind() != requested) continue;
    auto it = declined.find(b->kind());
    Support s = it != declined.end() ? Support::no(it->second) : b->supports(problem);
    r.answers.push_back({b->kind(), s});
    if (s.ok && r.chosen == nullptr) r.chosen = b;
  }
  if (r.chosen == nullptr)
    return unsupported(str("no backend can run ", problem.to_string(), ":\n", r.explain()));
  return r;
}

}  // namespace qgemm

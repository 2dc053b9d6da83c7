#include "plan/tuning_table.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <mutex>
#include <nlohmann/json.hpp>
#include <optional>
#include <sstream>
#include <stdexcept>

#include "jit/kernel_cache.h"
#include "util/error.h"
#include "util/settings.h"

namespace qgemm {
namespace {

using nlohmann::json;
namespace fs = std::filesystem;

constexpr const char* kSchema = "qgemm-tuning/1";

// A value of the wrong kind, which nlohmann's get<>() would convert instead of rejecting.
struct BadValue : std::runtime_error {
  using std::runtime_error::runtime_error;
};

std::string describe(const json& v) { return v.is_number() ? v.dump() : v.type_name(); }

// j[key] as an int64. NOTE: get<int64_t>() also converts floats (undefined behavior beyond the
// int64 range), booleans and unsigned values above INT64_MAX; tables hold JSON integers only.
int64_t get_int(const json& j, const char* key) {
  const json& v = j.at(key);
  if (v.is_number_integer() && !(v.is_number_unsigned() && v.get<uint64_t>() > INT64_MAX))
    return v.get<int64_t>();
  throw BadValue(str("\"", key, "\" must be an integer in the int64 range, got ", describe(v)));
}

json bucket_json(const TunedBucket& b) {
  json j;
  j["max_m"] = b.max_m == INT64_MAX ? json(nullptr) : json(b.max_m);
  j["kernel"] = b.expand ? "expand+cublaslt" : "mma_gemm";
  if (!b.expand) j["tile"] = b.tile.to_string();
  return j;
}

Expected<TunedBucket> bucket_from(const json& j, const std::string& where) {
  TunedBucket b;
  if (!j.contains("max_m") || !j.contains("kernel"))
    return invalid_argument(str(where, ": a bucket needs \"max_m\" and \"kernel\""));
  b.max_m = j["max_m"].is_null() ? INT64_MAX : get_int(j, "max_m");
  const std::string kernel = j["kernel"].get<std::string>();
  if (kernel == "expand+cublaslt") {
    b.expand = true;
  } else if (kernel == "mma_gemm") {
    if (!j.contains("tile"))
      return invalid_argument(str(where, ": an mma_gemm bucket needs a tile"));
    auto t = MmaTile::parse(j["tile"].get<std::string>());
    if (!t) return invalid_argument(str(where, ": ", t.status().message()));
    b.tile = *t;
  } else {
    return invalid_argument(
        str(where, ": unknown kernel '", kernel, "'; accepted: mma_gemm, expand+cublaslt"));
  }
  return b;
}

}  // namespace

Expected<TuningTable> parse_tuning_table(const std::string& text, const std::string& source) {
  TuningTable t;
  try {
    const json j = json::parse(text);
    if (j.value("schema", "") != kSchema)
      return invalid_argument(
          str("tuning table ", source, ": schema '", j.value("schema", ""), "' is not ", kSchema));
    t.device = j.at("device").get<std::string>();
    t.arch = j.value("arch", "");
    t.created = j.value("created", "");
    for (const json& l : j.at("layers")) {
      TunedLayer layer;
      layer.n = get_int(l, "n");
      layer.k = get_int(l, "k");
      layer.weight = l.at("weight").get<std::string>();
      layer.act = l.at("act").get<std::string>();
      layer.out = l.at("out").get<std::string>();
      const std::string where =
          str("tuning table ", source, ", layer n=", layer.n, " k=", layer.k, " ", layer.weight);
      // The planner's nearest-shape fallback takes logarithms of n and k.
      if (layer.n < 1 || layer.k < 1)
        return invalid_argument(str(where, ": n and k must be positive"));
      for (const json& b : l.at("buckets")) {
        auto bucket = bucket_from(b, where);
        if (!bucket) return bucket.status();
        layer.buckets.push_back(*bucket);
      }
      if (layer.buckets.empty() || layer.buckets.back().max_m != INT64_MAX)
        return invalid_argument(str(where, ": the last bucket must cover every M (max_m null)"));
      for (size_t i = 1; i < layer.buckets.size(); ++i)
        if (layer.buckets[i].max_m <= layer.buckets[i - 1].max_m)
          return invalid_argument(str(where, ": bucket max_m must increase"));
      if (layer.buckets.front().expand)
        return invalid_argument(str(where, ": the first bucket must be an mma_gemm tile"));
      if (l.contains("measured"))
        for (const json& m : l["measured"])
          layer.measured.push_back(
              {get_int(m, "m"), m.at("best").get<std::string>(), m.at("chosen").get<std::string>(),
               m.at("best_us").get<double>(), m.at("chosen_us").get<double>()});
      t.layers.push_back(std::move(layer));
    }
  } catch (const json::exception& e) {
    return invalid_argument(str("tuning table ", source, ": ", e.what()));
  } catch (const BadValue& e) {
    return invalid_argument(str("tuning table ", source, ": ", e.what()));
  }
  return t;
}

const TunedLayer* TuningTable::find(int64_t n, int64_t k, const std::string& weight,
                                    const std::string& act, const std::string& out) const {
  for (const TunedLayer& l : layers)
    if (l.n == n && l.k == k && l.weight == weight && l.act == act && l.out == out) return &l;
  return nullptr;
}

void TuningTable::put(TunedLayer layer) {
  for (TunedLayer& l : layers)
    if (l.n == layer.n && l.k == layer.k && l.weight == layer.weight && l.act == layer.act &&
        l.out == layer.out) {
      l = std::move(layer);
      return;
    }
  layers.push_back(std::move(layer));
}

Expected<TuningTable> read_tuning_table(const std::string& path) {
  std::ifstream in(path);
  if (!in) return Status(ErrorCode::kNotFound, str("tuning table ", path, ": cannot open"));
  std::stringstream text;
  text << in.rdbuf();
  return parse_tuning_table(text.str(), path);
}

std::string tuning_table_text(const TuningTable& t) {
  json j;
  j["schema"] = kSchema;
  j["device"] = t.device;
  j["arch"] = t.arch;
  j["created"] = t.created;
  j["layers"] = json::array();
  for (const TunedLayer& l : t.layers) {
    json lj;
    lj["n"] = l.n;
    lj["k"] = l.k;
    lj["weight"] = l.weight;
    lj["act"] = l.act;
    lj["out"] = l.out;
    lj["buckets"] = json::array();
    for (const TunedBucket& b : l.buckets) lj["buckets"].push_back(bucket_json(b));
    lj["measured"] = json::array();
    for (const TunedMeasurement& m : l.measured)
      lj["measured"].push_back({{"m", m.m},
                                {"best", m.best},
                                {"best_us", m.best_us},
                                {"chosen", m.chosen},
                                {"chosen_us", m.chosen_us}});
    j["layers"].push_back(lj);
  }
  return j.dump(2) + "\n";
}

Status write_tuning_table(const TuningTable& t, const std::string& path) {
  std::error_code ec;
  const fs::path p(path);
  if (p.has_parent_path()) fs::create_directories(p.parent_path(), ec);
  // Written beside and renamed, so a reader never sees half a table.
  const std::string tmp = path + ".tmp";
  {
    std::ofstream out(tmp);
    if (!out) return Status(ErrorCode::kInternal, str("tuning table ", path, ": cannot write"));
    out << tuning_table_text(t);
    if (!out) return Status(ErrorCode::kInternal, str("tuning table ", path, ": write failed"));
  }
  fs::rename(tmp, p, ec);
  if (ec) return Status(ErrorCode::kInternal, str("tuning table ", path, ": ", ec.message()));
  return Status();
}

std::string default_tuning_path(const DeviceInfo& device) {
  std::string name = device.name.empty() ? "device" : device.name;
  for (char& c : name)
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '-' && c != '_') c = '_';
  return tuning_dir() + "/" + name + ".json";
}

TuningLookup find_tuning(const std::string& path, const DeviceInfo& device, int64_t n, int64_t k,
                         const std::string& weight, const std::string& act,
                         const std::string& out) {
  // Parsed tables by path, re-read when the file's time stamp or size changes.
  struct Cached {
    fs::file_time_type stamp;
    uintmax_t size;
    Expected<TuningTable> table;
  };
  static std::mutex mutex;
  static std::map<std::string, Cached> cache;

  TuningLookup r;
  std::vector<std::string> paths;
  std::error_code ec;
  if (!path.empty()) {
    paths.push_back(path);
  } else {
    for (const auto& e : fs::directory_iterator(tuning_dir(), ec))
      if (e.path().extension() == ".json") paths.push_back(e.path().string());
    std::sort(paths.begin(), paths.end());
  }
  std::lock_guard<std::mutex> lock(mutex);
  std::optional<TunedLayer> nearest;
  double nearest_distance = 0;
  std::string nearest_path;
  for (const std::string& p : paths) {
    const auto stamp = fs::last_write_time(p, ec);
    if (ec) {
      r.notes.push_back(str("tuning table ", p, ": not found (heuristics used)"));
      continue;
    }
    const uintmax_t size = fs::file_size(p, ec);
    auto it = cache.find(p);
    if (it == cache.end() || it->second.stamp != stamp || it->second.size != size)
      it = cache.insert_or_assign(p, Cached{stamp, size, read_tuning_table(p)}).first;
    const Expected<TuningTable>& t = it->second.table;
    if (!t) {
      r.notes.push_back(str(t.status().message(), " (ignored)"));
      continue;
    }
    const TunedLayer* layer = t->find(n, k, weight, act, out);
    if (t->device != device.name) {
      // Only worth a note when the table would otherwise have served this layer.
      if (layer != nullptr || !path.empty())
        r.notes.push_back(str("tuning table ", p, " was measured on ", t->device, ", not on ",
                              device.name, ": ignored"));
      continue;
    }
    if (layer != nullptr) {
      r.found = true;
      r.layer = *layer;
      r.source = p;
      return r;
    }
    // NOTE: tiles do not depend on the layer's shape (splits are recomputed per shape), so a
    // layer of the same formats tuned at another N, K is a better guess than the heuristics:
    // the nearest one in log(N) + log(K) serves, with a note.
    for (const TunedLayer& l : t->layers) {
      if (l.weight != weight || l.act != act || l.out != out) continue;
      const double d =
          std::abs(std::log(double(l.n) / double(n))) + std::abs(std::log(double(l.k) / double(k)));
      if (!nearest || d < nearest_distance) {
        nearest = l;
        nearest_distance = d;
        nearest_path = p;
      }
    }
  }
  if (nearest) {
    r.found = true;
    r.layer = *nearest;
    r.source = nearest_path;
    r.notes.push_back(str("tuning table ", nearest_path, " has no entry for N=", n, " K=", k,
                          "; using the one tuned at N=", nearest->n, " K=", nearest->k,
                          " (same formats)"));
  } else if (!path.empty() && r.notes.empty()) {
    r.notes.push_back(str("tuning table ", path, " has no entry for this layer (heuristics used)"));
  }
  return r;
}

}  // namespace qgemm

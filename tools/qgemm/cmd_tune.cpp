#include <cmath>
#include <cstdio>
#include <ctime>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "bench/lib/autotune.h"
#include "bench/lib/layer_memory.h"
#include "commands.h"
#include "layer_formats.h"
#include "plan/tuning_table.h"
#include "util/error.h"

namespace qgemm::cli {
namespace {

struct TuneCliOptions {
  std::vector<int64_t> m = {1, 16, 64, 256, 1024, 4096};
  int64_t n = 0, k = 0;
  std::string weight, act = "bf16", out_type = "bf16", table, tiles;
  size_t max_kernels = 4;
  double tolerance = 0.05;
  int repetitions = 15;
};

int fail(const Status& s) {
  std::fprintf(stderr, "qgemm tune: %s\n", s.message().c_str());
  return 2;
}

std::string utc_now() {
  char buf[32];
  const std::time_t t = std::time(nullptr);
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", std::gmtime(&t));
  return buf;
}

int run_tune(const TuneCliOptions& o) {
  bench::TuneOptions t;
  auto formats = parse_layer_formats(o.weight, o.act, o.out_type);
  if (!formats) return fail(formats.status());
  const auto& [wf, af, out] = *formats;
  if (Status nk = check_positive_nk(o.n, o.k); !nk.ok()) return fail(nk);
  if (o.max_kernels < 1)
    return fail(
        invalid_argument(str("--max-kernels must be at least 1 (got ", o.max_kernels, ")")));
  for (int64_t m : o.m)
    if (Status fits = check_layer_fits(m, o.n, o.k, 1, 1); !fits.ok()) return fail(fits);
  t.m = o.m;
  t.n = o.n;
  t.k = o.k;
  t.weight = wf;
  t.act = af;
  t.out = out;
  t.max_kernels = o.max_kernels;
  t.tolerance = o.tolerance;
  t.repetitions = o.repetitions;
  if (!o.tiles.empty()) {
    std::stringstream list(o.tiles);
    std::string item;
    while (std::getline(list, item, ';')) {
      auto tile = MmaTile::parse(item);
      if (!tile) return fail(tile.status());
      t.tiles.push_back(*tile);
    }
  }

  std::printf("tuning   N=%lld K=%lld weight=%s act=%s out=%s\n", (long long)o.n, (long long)o.k,
              wf.to_string().c_str(), af.to_string().c_str(), out.name().c_str());
  auto r = bench::autotune(t);
  if (!r) return fail(r.status());
  std::printf("device   %s (%s), %d weight copies rotated, median of %d graph replays\n",
              r->device.name.c_str(), r->device.arch().c_str(), r->copies, t.repetitions);
  for (const std::string& e : r->errors) std::printf("  skipped: %s\n", e.c_str());

  // Every candidate's median per M.
  std::printf("\n%-40s", "candidate (median us)");
  for (int64_t m : r->ms) std::printf(" %9s", str("M=", m).c_str());
  std::printf("\n");
  for (const auto& c : r->candidates) {
    std::printf("%-40s", c.name.c_str());
    for (double us : c.us) std::isfinite(us) ? std::printf(" %9.2f", us) : std::printf(" %9s", "-");
    std::printf("\n");
  }

  std::printf("\n%-7s %-40s %9s  %-40s %9s %6s  %9s %6s\n", "M", "best", "us", "chosen", "us",
              "loss", "heuristic", "loss");
  double heuristic_worst = 0;
  for (size_t i = 0; i < r->ms.size(); ++i) {
    const TunedMeasurement& m = r->layer.measured[i];
    const double h_loss = r->heuristic_us[i] / m.best_us - 1.0;
    heuristic_worst = std::max(heuristic_worst, std::isfinite(h_loss) ? h_loss : INFINITY);
    std::printf("%-7lld %-40s %9.2f  %-40s %9.2f %5.1f%%  %9.2f %5.1f%%\n", (long long)m.m,
                m.best.c_str(), m.best_us, m.chosen.c_str(), m.chosen_us,
                100.0 * (m.chosen_us / m.best_us - 1.0), r->heuristic_us[i], 100.0 * h_loss);
  }
  std::printf(
      "\nchosen   %zu kernels (limit %zu), worst loss %.1f%% against the best candidate per M "
      "(tolerance %.0f%%); built-in heuristics: worst loss %.1f%%\n",
      r->selection.kernels, o.max_kernels, 100.0 * r->selection.max_loss, 100.0 * o.tolerance,
      100.0 * heuristic_worst);
  int64_t lo = 1;
  for (const TunedBucket& b : r->layer.buckets) {
    const std::string range = b.max_m == INT64_MAX ? str(lo, "+") : str(lo, "-", b.max_m);
    std::printf("  M %-12s %s\n", range.c_str(),
                b.expand ? "expand the packed weight, then cuBLASLt"
                         : str("mma_gemm ", b.tile.to_string()).c_str());
    lo = b.max_m == INT64_MAX ? lo : b.max_m + 1;
  }

  // The table: merged into an existing one for the same device.
  const std::string path = o.table.empty() ? default_tuning_path(r->device) : o.table;
  TuningTable table;
  if (auto existing = read_tuning_table(path); existing.ok()) {
    if (existing->device != r->device.name)
      return fail(
          invalid_argument(str(path, " holds tunings for ", existing->device, ", not this GPU (",
                               r->device.name, "); write to another file with --out")));
    table = std::move(*existing);
  } else if (existing.status().code() != ErrorCode::kNotFound) {
    return fail(existing.status());
  }
  table.device = r->device.name;
  table.arch = r->device.arch();
  table.created = utc_now();
  table.put(r->layer);
  Status s = write_tuning_table(table, path);
  if (!s.ok()) return fail(s);
  std::printf("table    %s (%zu layers; plans on this GPU read it%s)\n", path.c_str(),
              table.layers.size(),
              o.table.empty() ? " by default" : ": pass it as LinearOptions::tuning_table");
  std::printf("took     %.1f s\n", r->seconds);
  return 0;
}

}  // namespace

void add_tune_command(CLI::App& app) {
  auto* cmd = app.add_subcommand(
      "tune", "Time kernel candidates for one layer on this GPU and write a tuning table");
  auto o = std::make_shared<TuneCliOptions>();
  cmd->add_option("--m", o->m, "Token counts to tune, e.g. 1,16,64,256,1024,4096")->delimiter(',');
  cmd->add_option("--n", o->n, "Output features")->required();
  cmd->add_option("--k", o->k, "Input features")->required();
  cmd->add_option("--weight", o->weight, "Weight spec or alias")->required();
  cmd->add_option("--act", o->act, "Activation spec (fp16 or bf16)")->default_val("bf16");
  cmd->add_option("--out-type", o->out_type, "Output type")->default_val("bf16");
  cmd->add_option("--out", o->table,
                  "Tuning table to write or update (default: <tuning dir>/<GPU name>.json)");
  cmd->add_option("--max-kernels", o->max_kernels, "Kernels the layer may keep")->default_val(4);
  cmd->add_option("--tolerance", o->tolerance, "Accepted loss per M against the best candidate")
      ->default_val(0.05);
  cmd->add_option("--repetitions", o->repetitions, "Timed graph replays per candidate")
      ->default_val(15);
  cmd->add_option(
      "--tiles", o->tiles,
      "Candidate tiles instead of the defaults (a fixed list plus the tiles of the layer's "
      "built-in plan), ';'-separated, e.g. "
      "\"w4x1 t1 f1 s6 k256 waves2;w4x2 t2 f4 s4 k128 waves2\"");
  cmd->callback([o] {
    const int rc = run_tune(*o);
    if (rc != 0) throw CLI::RuntimeError(rc);
  });
}

}  // namespace qgemm::cli

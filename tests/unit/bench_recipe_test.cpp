#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <initializer_list>
#include <map>
#include <string>

#include "bench/lib/recipe.h"
#include "unit_test_util.h"

namespace qgemm::bench {
namespace {

Expected<Recipe> parse(const std::string& yaml) { return parse_recipe(yaml, "test.yaml"); }

// Passes when `yaml` is rejected as kInvalidArgument with `fragment` in the message.
::testing::AssertionResult rejects(const std::string& yaml, const std::string& fragment) {
  Expected<Recipe> r = parse(yaml);
  if (r.ok()) return ::testing::AssertionFailure() << "parsed, expected error '" << fragment << "'";
  if (r.status().code() != ErrorCode::kInvalidArgument)
    return ::testing::AssertionFailure() << "wrong code: " << r.status().to_string();
  if (r.status().message().find(fragment) == std::string::npos)
    return ::testing::AssertionFailure()
           << "message '" << r.status().message() << "' lacks '" << fragment << "'";
  return ::testing::AssertionSuccess();
}

// A recipe that must not load, and a fragment of the error it must give.
struct BadRecipe {
  const char* yaml;
  const char* error;
};

void expect_all_rejected(std::initializer_list<BadRecipe> recipes) {
  for (const BadRecipe& r : recipes) EXPECT_TRUE(rejects(r.yaml, r.error)) << r.yaml;
}

constexpr const char* kMinimal = R"(name: minimal
backends: [jit]
problems:
  - {m: [1, 16], n: 256, k: 512, weight: int4/g128/bf16}
)";

TEST(BenchRecipeTest, MinimalRecipeTakesDefaults) {
  Expected<Recipe> r = parse(kMinimal);
  ASSERT_TRUE(r.ok()) << r.status().to_string();
  EXPECT_EQ(r->name, "minimal");
  EXPECT_EQ(r->description, "");
  EXPECT_EQ(r->repetitions, 21);
  EXPECT_EQ(r->warmup, 3);
  EXPECT_EQ(r->seed, 1u);
  EXPECT_EQ(r->rotate_bytes, 0);
  EXPECT_EQ(r->source, "test.yaml");
  ASSERT_EQ(r->problems.size(), 1u);
  const BenchProblem& p = r->problems[0];
  EXPECT_EQ(p.name, "int4/g128/bf16 x bf16 N=256 K=512");
  EXPECT_EQ(p.m, (std::vector<int64_t>{1, 16}));
  EXPECT_EQ(p.n, 256);
  EXPECT_EQ(p.k, 512);
  EXPECT_EQ(p.experts, 0);
  EXPECT_EQ(p.top_k, 0);
  EXPECT_EQ(p.weight, "int4/g128/bf16");
  EXPECT_EQ(p.act, "bf16");
  EXPECT_EQ(p.out, "bf16");
  EXPECT_EQ(p.backends, (std::vector<std::string>{"jit"}));
  EXPECT_EQ(p.line, 4);
}

TEST(BenchRecipeTest, FullRecipeReadsEveryKey) {
  Expected<Recipe> r = parse(R"(name: full
description: every key set
repetitions: 31
warmup: 0
seed: 18446744073709551615
rotate_mb: 512
backends: [jit, cublas-bf16]
problems:
  - name: dense fp8
    m: 7
    n: 4096
    k: 7168
    weight: e4m3/b128x128/fp32
    act: e4m3/g128/fp32
    out: fp32
    backends: [qdq, cpu, cublas-fp8, jit-pdl]
  - name: moe
    m: [1, 64]
    n: 2048
    k: 7168
    experts: 256
    top_k: 8
    weight: mxfp4
    act: mxfp8
)");
  ASSERT_TRUE(r.ok()) << r.status().to_string();
  EXPECT_EQ(r->description, "every key set");
  EXPECT_EQ(r->repetitions, 31);
  EXPECT_EQ(r->warmup, 0);
  EXPECT_EQ(r->seed, 18446744073709551615ull);
  EXPECT_EQ(r->rotate_bytes, int64_t{512} << 20);
  ASSERT_EQ(r->problems.size(), 2u);
  const BenchProblem& dense = r->problems[0];
  EXPECT_EQ(dense.name, "dense fp8");
  EXPECT_EQ(dense.m, (std::vector<int64_t>{7}));
  EXPECT_EQ(dense.out, "fp32");
  EXPECT_EQ(dense.backends, (std::vector<std::string>{"qdq", "cpu", "cublas-fp8", "jit-pdl"}));
  EXPECT_EQ(dense.line, 9);
  const BenchProblem& moe = r->problems[1];
  EXPECT_EQ(moe.experts, 256);
  EXPECT_EQ(moe.top_k, 8);
  EXPECT_EQ(moe.weight, "mxfp4");
  EXPECT_EQ(moe.act, "mxfp8");
  EXPECT_EQ(moe.backends, (std::vector<std::string>{"jit", "cublas-bf16"}));
  EXPECT_EQ(moe.line, 17);
}

TEST(BenchRecipeTest, WeightAndActListsExpandWeightMajor) {
  Expected<Recipe> r = parse(R"(name: lists
backends: [jit]
problems:
  - m: [1]
    n: 256
    k: 512
    weights: [int4/g128/bf16, uint4/g128/bf16/zp]
    acts: [bf16, e4m3/token]
  - name: named
    m: [1]
    n: 256
    k: 512
    experts: 4
    top_k: 2
    weights: [int4/g128/bf16, int8/channel/bf16]
    out: fp16
)");
  ASSERT_TRUE(r.ok()) << r.status().to_string();
  ASSERT_EQ(r->problems.size(), 6u);
  EXPECT_EQ(r->problems[0].name, "int4/g128/bf16 x bf16 N=256 K=512");
  EXPECT_EQ(r->problems[1].name, "int4/g128/bf16 x e4m3/token N=256 K=512");
  EXPECT_EQ(r->problems[2].name, "uint4/g128/bf16/zp x bf16 N=256 K=512");
  EXPECT_EQ(r->problems[3].act, "e4m3/token");
  EXPECT_EQ(r->problems[3].weight, "uint4/g128/bf16/zp");
  EXPECT_EQ(r->problems[4].name, "named: int4/g128/bf16 x bf16 N=256 K=512 E=4 top_k=2 out=fp16");
  EXPECT_EQ(r->problems[5].weight, "int8/channel/bf16");
  EXPECT_EQ(r->problems[5].top_k, 2);
  for (const BenchProblem& p : r->problems) EXPECT_EQ(p.m, (std::vector<int64_t>{1}));
}

TEST(BenchRecipeTest, ShapeSetsExpandIntoOneProblemPerShape) {
  Expected<Recipe> r = parse(R"(name: shapes
backends: [jit, qdq]
shapes:
  llama70b:
    - {name: qkv, n: 10240, k: 8192}
    - {name: o, n: 8192, k: 8192}
    - {name: gate_up, n: 57344, k: 8192}
    - {name: down, n: 8192, k: 28672}
  tiny: [[256, 512], [128, 256]]
problems:
  - m: [1, 16]
    shapes: llama70b
    weight: int4/g128/bf16
  - m: [1]
    shapes: [tiny]
    weights: [int4/g128/bf16, int2/g128/bf16]
)");
  ASSERT_TRUE(r.ok()) << r.status().to_string();
  ASSERT_EQ(r->problems.size(), 8u);
  const int64_t nk[4][2] = {{10240, 8192}, {8192, 8192}, {57344, 8192}, {8192, 28672}};
  for (int i = 0; i < 4; ++i) {
    EXPECT_EQ(r->problems[i].n, nk[i][0]);
    EXPECT_EQ(r->problems[i].k, nk[i][1]);
    EXPECT_EQ(r->problems[i].backends.size(), 2u);
  }
  EXPECT_EQ(r->problems[0].name, "int4/g128/bf16 x bf16 N=10240 K=8192 (qkv)");
  EXPECT_EQ(r->problems[3].name, "int4/g128/bf16 x bf16 N=8192 K=28672 (down)");
  EXPECT_EQ(r->problems[4].name, "int4/g128/bf16 x bf16 N=256 K=512");
  EXPECT_EQ(r->problems[5].n, 128);
  EXPECT_EQ(r->problems[6].weight, "int2/g128/bf16");
}

TEST(BenchRecipeTest, CommittedRecipesParse) {
  const std::filesystem::path root = testing::repo_root();
  ASSERT_FALSE(root.empty()) << "no bench/recipes at or above " << std::filesystem::current_path();
  Expected<Recipe> smoke = load_recipe((root / "bench/recipes/smoke.yaml").string());
  ASSERT_TRUE(smoke.ok()) << smoke.status().to_string();
  EXPECT_EQ(smoke->repetitions, 21);
  EXPECT_EQ(smoke->warmup, 3);
  ASSERT_EQ(smoke->problems.size(), 4u);
  EXPECT_EQ(smoke->problems[2].weight, "e2m1/g32/ue8m0");
  EXPECT_EQ(smoke->problems[3].experts, 4);
  EXPECT_EQ(smoke->problems[3].top_k, 2);
  EXPECT_EQ(smoke->problems[3].backends,
            (std::vector<std::string>{"jit", "qdq", "cpu", "cublas-bf16"}));

  Expected<Recipe> dense = load_recipe((root / "bench/recipes/dense_w4a16.yaml").string());
  ASSERT_TRUE(dense.ok()) << dense.status().to_string();
  ASSERT_EQ(dense->problems.size(), 13u);
  EXPECT_EQ(dense->problems[0].m, (std::vector<int64_t>{1, 16, 64, 256, 1024, 4096}));
  EXPECT_EQ(dense->problems[5].act, "fp16");
  EXPECT_EQ(dense->problems[6].n, 28672);
  EXPECT_EQ(dense->problems[12].k, 28672);
  for (const BenchProblem& p : dense->problems) {
    EXPECT_EQ(p.backends, (std::vector<std::string>{"jit", "jit-pdl", "qdq", "cublas-bf16"}))
        << p.name;
  }

  // The MoE recipe: each model's two grouped GEMMs (DeepSeek-V3 also in two FP8 forms and
  // W4A8), w13 with N = 2 x w2's K.
  Expected<Recipe> moe = load_recipe((root / "bench/recipes/moe.yaml").string());
  ASSERT_TRUE(moe.ok()) << moe.status().to_string();
  ASSERT_EQ(moe->problems.size(), 14u);
  for (size_t i = 0; i < moe->problems.size(); i += 2) {
    const BenchProblem& w13 = moe->problems[i];
    const BenchProblem& w2 = moe->problems[i + 1];
    EXPECT_EQ(w13.n, 2 * w2.k) << w13.name;
    EXPECT_EQ(w13.k, w2.n) << w13.name;
    EXPECT_EQ(w13.experts, w2.experts) << w13.name;
    EXPECT_EQ(w13.weight, w2.weight) << w13.name;
    EXPECT_EQ(w13.m, (std::vector<int64_t>{1, 4, 16, 64, 256, 1024, 4096})) << w13.name;
  }
  EXPECT_EQ(moe->problems[0].experts, 256);
  EXPECT_EQ(moe->problems[0].top_k, 8);
  EXPECT_EQ(moe->problems[12].act, "e4m3/token") << "W4A8";
}

// The grid recipe samples the grid by a fixed rule: every format sees every M value once, on one
// layer of each of three models, with at least 15 repetitions.
TEST(BenchRecipeTest, GridRecipeCoversEveryFormatAndM) {
  const std::filesystem::path root = testing::repo_root();
  ASSERT_FALSE(root.empty());
  Expected<Recipe> grid = load_recipe((root / "bench/recipes/dense_grid.yaml").string());
  ASSERT_TRUE(grid.ok()) << grid.status().to_string();
  EXPECT_GE(grid->repetitions, 15);
  ASSERT_EQ(grid->problems.size(), 33u);
  std::map<std::string, std::vector<int64_t>> ms;
  std::map<std::string, int> layers;
  for (const BenchProblem& p : grid->problems) {
    ms[p.weight].insert(ms[p.weight].end(), p.m.begin(), p.m.end());
    ++layers[p.weight];
  }
  ASSERT_EQ(ms.size(), 11u);
  const std::vector<int64_t> all = {1,   2,   4,   8,   16,  24,  32,   48,   64,   96,   128, 160,
                                    200, 256, 320, 384, 512, 768, 1024, 1536, 2048, 3072, 4096};
  for (auto& [weight, list] : ms) {
    std::sort(list.begin(), list.end());
    EXPECT_EQ(list, all) << weight;
    EXPECT_EQ(layers[weight], 3) << weight;
  }
  Expected<Recipe> act = load_recipe((root / "bench/recipes/quantized_act.yaml").string());
  ASSERT_TRUE(act.ok()) << act.status().to_string();
  // Act-order layers are timed against the same layers launched the same way.
  Expected<Recipe> order = load_recipe((root / "bench/recipes/act_order.yaml").string());
  ASSERT_TRUE(order.ok()) << order.status().to_string();
  EXPECT_EQ(order->backends, (std::vector<std::string>{"jit-pdl", "jit-act-order", "cublas-bf16"}));
}

TEST(BenchRecipeTest, LoadRecipeReportsMissingFile) {
  Expected<Recipe> r = load_recipe("/nonexistent/dir/recipe.yaml");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), ErrorCode::kNotFound);
  EXPECT_NE(r.status().message().find("/nonexistent/dir/recipe.yaml"), std::string::npos);
}

TEST(BenchRecipeTest, RejectsUnknownKeysWithLine) {
  expect_all_rejected({
      {"name: x\nrepetitons: 21\nbackends: [jit]\n",
       "test.yaml:2: key 'repetitons' is not known; accepted: name, description"},
      {"name: x\nrepetitons: 21\n", "did you mean 'repetitions'?"},
      {"name: x\nbackends: [jit]\nproblems:\n  - m: [1]\n    nn: 4\n",
       "test.yaml:5: key 'nn' is not known; accepted: name, m, n, k"},
      {"name: x\nname: y\n", "test.yaml:2: key 'name' appears twice"},
  });
}

TEST(BenchRecipeTest, RejectsBadTopLevelValues) {
  expect_all_rejected({
      {"name: x\nwarmup: 1\nrepetitions: 20\n", "test.yaml:3: key 'repetitions' must be odd"},
      {"name: x\nrepetitions: 0\n", "test.yaml:2: key 'repetitions' must be in"},
      {"name: x\nwarmup: -1\n", "test.yaml:2: key 'warmup' must be in [0,"},
      {"name: x\nseed: -3\n", "test.yaml:2: key 'seed' must be an unsigned"},
      {"name: x\nrotate_mb: 1.5\n", "test.yaml:2: key 'rotate_mb' must be an"},
      {"name: [a]\n", "test.yaml:1: key 'name' must be a string, got a list"},
      {"name: x\nbackends: [jit, cublas]\n",
       "test.yaml:2: backend 'cublas' is not known; accepted: jit, jit-pdl, jit-q16, "
       "jit-act-order, act-quant, "
       "qdq, cpu, cublas-bf16, cublas-fp8"},
      {"name: x\nbackends: jit\n", "test.yaml:2: key 'backends' must be a"},
      {"name: x\nbackends: [jit, jit]\n", "test.yaml:2: key 'backends' lists"},
  });
}

TEST(BenchRecipeTest, RejectsStructuralProblems) {
  expect_all_rejected({
      {"", "test.yaml: the recipe is empty"},
      {"- a\n- b\n", "test.yaml:1: a recipe must be a map"},
      {"backends: [jit]\n", "test.yaml:1: the recipe is missing key 'name'"},
      {"name: x\n", "the recipe is missing key 'problems'"},
      {"name: x\nproblems: []\n", "test.yaml:2: key 'problems' must be a non"},
      {"name: x\nproblems: [1]\n", "test.yaml:2: a problem must be a map"},
      {"name: x\nproblems:\n  - {m: [1], n: 8\n",
       "test.yaml:4: YAML error: end of map flow not found"},
      {"name: x\n  bad: indent\n", "test.yaml:2: YAML error"},
  });
}

// A recipe whose single problem is `problem` (lines 4+), with jit as the default backend.
std::string with_problem(const std::string& problem) {
  return "name: x\nbackends: [jit]\nproblems:\n" + problem;
}

TEST(BenchRecipeTest, RejectsBadProblemValues) {
  EXPECT_TRUE(rejects(with_problem("  - m: [1, 0]\n    n: 8\n"),
                      "test.yaml:4: key 'm' entry 2 must be in [1,"));
  EXPECT_TRUE(rejects(with_problem("  - m: []\n"), "test.yaml:4: key 'm' must be an integer or"));
  EXPECT_TRUE(rejects(with_problem("  - m: [1, 1]\n"), "test.yaml:4: key 'm' lists 1 twice"));
  EXPECT_TRUE(rejects(with_problem("  - n: 8\n"), "test.yaml:4: problem is missing key 'm'"));
  EXPECT_TRUE(
      rejects(with_problem("  - m: 1\n    k: 8\n"), "test.yaml:4: problem is missing key 'n'"));
  EXPECT_TRUE(rejects(with_problem("  - m: 1\n    n: 8\n    k: eight\n"),
                      "test.yaml:6: key 'k' must be an integer in [1, 2147483647], got 'eight'"));
  EXPECT_TRUE(rejects(with_problem("  - m: 1\n    n: 0\n    k: 8\n"),
                      "test.yaml:5: key 'n' must be in [1, 2147483647], got 0"));
  EXPECT_TRUE(rejects(with_problem("  - m: 1\n    n: 8\n    k: 128\n"),
                      "test.yaml:4: problem is missing key 'weight'"));
  EXPECT_TRUE(rejects(with_problem("  - {m: 1, n: 8, k: 128, weight: int4/g128/bf16, out: int8}\n"),
                      "test.yaml:4: output type 'int8' is not supported; accepted: bf16, fp16"));
}

TEST(BenchRecipeTest, RejectsBadFormats) {
  EXPECT_TRUE(
      rejects(with_problem("  - m: 1\n    n: 8\n    k: 128\n    weight: int4/g999x\n"),
              "test.yaml:7: key 'weight': weight spec 'int4/g999x': group size must be a positive "
              "integer, got 'g999x'"));
  EXPECT_TRUE(rejects(with_problem("  - m: 1\n    n: 8\n    k: 128\n"
                                   "    weights: [int4/g128/bf16, int4/q128/bf16]\n"),
                      "test.yaml:7: key 'weights': weight spec 'int4/q128/bf16': unknown part"));
  EXPECT_TRUE(rejects(with_problem("  - m: 1\n    n: 8\n    k: 100\n    weight: int4/g128/bf16\n"),
                      "test.yaml:7: weight 'int4/g128/bf16' does not fit N=8 K=100: K=100 is not "
                      "a multiple of the group size 128"));
  EXPECT_TRUE(
      rejects(with_problem("  - m: 1\n    n: 8\n    k: 128\n    weight: int4/g128/bf16\n"
                           "    act: e4m3\n"),
              "test.yaml:8: key 'act': activation spec 'e4m3': e4m3 activations need a scale"));
  EXPECT_TRUE(rejects(with_problem("  - m: 1\n    n: 8\n    k: 128\n    weight: int4/g128/bf16\n"
                                   "    weights: [int4/g128/bf16]\n"),
                      "test.yaml:8: give either 'weight' or 'weights', not both"));
}

TEST(BenchRecipeTest, RejectsBadMoeAndBackends) {
  const std::string base = "  - m: 1\n    n: 8\n    k: 128\n    weight: int4/g128/bf16\n";
  EXPECT_TRUE(rejects(with_problem(base + "    experts: 4\n"),
                      "test.yaml:4: problem is missing key 'top_k'"));
  EXPECT_TRUE(rejects(with_problem(base + "    top_k: 2\n"),
                      "test.yaml:8: key 'top_k' is only for MoE problems"));
  EXPECT_TRUE(rejects(with_problem(base + "    experts: 4\n    top_k: 5\n"),
                      "test.yaml:9: key 'top_k' must be in [1, 4], got 5"));
  EXPECT_TRUE(rejects(with_problem(base + "    experts: -1\n"),
                      "test.yaml:8: key 'experts' must be in [0,"));
  EXPECT_TRUE(rejects(with_problem(base + "    backends: [jit, tensorrt]\n"),
                      "test.yaml:8: backend 'tensorrt' is not known"));
  EXPECT_TRUE(rejects("name: x\nproblems:\n" + base,
                      "test.yaml:3: problem has no backends: list them under 'backends:'"));
}

TEST(BenchRecipeTest, RejectsBadShapesAndDuplicateNames) {
  EXPECT_TRUE(rejects(with_problem("  - {m: 1, shapes: llama, weight: int4/g128/bf16}\n"),
                      "test.yaml:4: shape set 'llama' is not defined under the top-level "
                      "'shapes:'; defined: none"));
  EXPECT_TRUE(
      rejects("name: x\nbackends: [jit]\nshapes:\n  s: [[8, 128]]\nproblems:\n"
              "  - {m: 1, shapes: s, n: 8, weight: int4/g128/bf16}\n",
              "test.yaml:6: give either n and k or shapes, not both"));
  EXPECT_TRUE(rejects("name: x\nshapes:\n  s:\n    - [8]\n",
                      "test.yaml:4: shape 1 of set 's' must be [n, k], got 1 values"));
  EXPECT_TRUE(rejects("name: x\nshapes:\n  s:\n    - {n: 8}\n",
                      "test.yaml:4: shape 1 of set 's' is missing key 'k'"));
  EXPECT_TRUE(rejects(with_problem("  - {m: 1, n: 8, k: 128, weight: int4/g128/bf16}\n"
                                   "  - {m: 2, n: 8, k: 128, weight: int4/g128/bf16}\n"),
                      "test.yaml:5: problem name 'int4/g128/bf16 x bf16 N=8 K=128' is used twice "
                      "(first at line 4)"));
}

}  // namespace
}  // namespace qgemm::bench

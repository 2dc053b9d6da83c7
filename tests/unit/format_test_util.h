#pragma once

#include <gtest/gtest.h>

#include <initializer_list>
#include <string>
#include <utility>
#include <vector>

#include "qgemm/format.h"

namespace qgemm::testing {

/// Expects each {alias, spec} of `expected` to parse to the format of `spec`, print as `spec`
/// and report `alias` back; and every alias of `registered` (weight_aliases(), act_aliases())
/// to stand for its spec both ways.
template <typename Format>
void expect_aliases_round_trip(std::initializer_list<std::pair<const char*, const char*>> expected,
                               const std::vector<FormatAlias>& registered) {
  for (const auto& [alias, spec] : expected) {
    auto f = Format::parse(alias);
    ASSERT_TRUE(f.ok()) << alias << ": " << f.status().to_string();
    EXPECT_EQ(spec, f->to_string()) << alias;
    EXPECT_EQ(alias, f->alias()) << spec;
    EXPECT_EQ(*f, *Format::parse(spec)) << alias;
  }
  for (const FormatAlias& a : registered) {
    auto f = Format::parse(a.name);
    ASSERT_TRUE(f.ok()) << a.name;
    EXPECT_EQ(a.spec, f->to_string()) << a.name;
    EXPECT_EQ(a.name, Format::parse(a.spec)->alias()) << a.spec;
  }
}

/// Expects `spec` not to parse, as an invalid argument whose message contains `part`.
template <typename Format>
void expect_rejected(const std::string& spec, const std::string& part) {
  auto f = Format::parse(spec);
  ASSERT_FALSE(f.ok()) << "'" << spec << "' parsed as " << f->to_string();
  EXPECT_EQ(ErrorCode::kInvalidArgument, f.status().code()) << spec;
  EXPECT_NE(std::string::npos, f.status().message().find(part))
      << "spec '" << spec << "': message '" << f.status().message() << "' lacks '" << part << "'";
}

}  // namespace qgemm::testing

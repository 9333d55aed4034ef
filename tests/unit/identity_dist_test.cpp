// --identity-dist: the parser, the flag as the command line takes it, and its refusals.
#include <doctest/doctest.h>

#include <string>

#include <nlohmann/json.hpp>

#include "command_line_support.hpp"
#include "config/identity_dist.hpp"
#include "coord/fingerprint.hpp"
#include "judging/judgement.hpp"
#include "report/human_report.hpp"
#include "report/json_report.hpp"
#include "runner/shared_test.hpp"
#include "targets/target_kind.hpp"

using rlcheck::config::format_identity_dist;
using rlcheck::config::IdentityDist;
using rlcheck::config::IdentityShape;
using rlcheck::config::parse_identity_dist;
using rlcheck::testing::mentions;
using rlcheck::testing::parse_arguments;
using rlcheck::testing::usage_error;

TEST_CASE("identity dist: uniform, zipf:S and hot:P parse, and format back") {
  CHECK(*parse_identity_dist("uniform") == IdentityDist{});
  CHECK(*parse_identity_dist("zipf:1.1") == IdentityDist{IdentityShape::zipf, 1.1});
  CHECK(*parse_identity_dist("zipf:10") == IdentityDist{IdentityShape::zipf, 10});
  CHECK(*parse_identity_dist("hot:0.3") == IdentityDist{IdentityShape::hot, 0.3});
  CHECK(*parse_identity_dist("hot:.5") == IdentityDist{IdentityShape::hot, 0.5});
  for (const char* text : {"uniform", "zipf:1.1", "zipf:0.5", "hot:0.3", "hot:0.00001"}) {
    CHECK(format_identity_dist(*parse_identity_dist(text)) == text);
    CHECK(*parse_identity_dist(format_identity_dist(*parse_identity_dist(text))) ==
          *parse_identity_dist(text));
  }
}

TEST_CASE("identity dist: malformed specs and values out of range are refused, saying why") {
  for (const char* text :
       {"", "Uniform", "zipf", "zipf:", "hot", "hot:", "pareto:1", "zipf:1:2", "zipf:1e1",
        "zipf:-1", "zipf:+1", "zipf:nan", "zipf:inf", "hot:0.3x", "hot:1..2", "hot:."}) {
    CAPTURE(text);
    CHECK_FALSE(parse_identity_dist(text).has_value());
  }
  CHECK(mentions(parse_identity_dist("pareto:1").error(), "uniform, zipf:S or hot:P"));
  CHECK(mentions(parse_identity_dist("zipf:0").error(), "above 0 and at most 10"));
  CHECK(mentions(parse_identity_dist("zipf:10.5").error(), "above 0 and at most 10"));
  CHECK(mentions(parse_identity_dist("hot:0").error(), "above 0 and below 1"));
  CHECK(mentions(parse_identity_dist("hot:1").error(), "above 0 and below 1"));
  CHECK(mentions(parse_identity_dist("hot:x").error(), "'x'"));
}

TEST_CASE("--identity-dist reaches the load; --seed seeds its draws") {
  const auto load =
      parse_arguments({"redis", "--identities", "10", "--identity-dist", "hot:0.3", "--seed", "99"})
          .config.load;
  CHECK(load.identity_dist == IdentityDist{IdentityShape::hot, 0.3});
  CHECK(load.identity_seed == 99);
  const auto defaults = parse_arguments({"redis"}).config.load;
  CHECK(defaults.identity_dist.uniform());
  CHECK(defaults.identity_seed == rlcheck::config::k_identity_seed);
  CHECK_FALSE(defaults.only_identity.has_value());
  CHECK(parse_arguments({"http", "http://127.0.0.1:1/", "--identity-dist", "zipf:1.1"})
            .config.load.identity_dist.shape == IdentityShape::zipf);
  CHECK(parse_arguments({"compare", "--identity-dist", "zipf:2"}).config.load.identity_dist ==
        IdentityDist{IdentityShape::zipf, 2});
}

TEST_CASE("--identity-dist refusals exit 64 naming the flag") {
  CHECK(mentions(usage_error({"redis", "--identity-dist", "pareto"}), "--identity-dist: expected"));
  CHECK(mentions(usage_error({"redis", "--identities", "5", "--identity-dist", "zipf:11"}),
                 "--identity-dist: zipf:S needs S above 0"));
  CHECK(mentions(usage_error({"redis", "--identities", "5", "--identity-dist", "hot:1.5"}),
                 "--identity-dist: hot:P needs P above 0 and below 1"));
  CHECK(mentions(usage_error({"redis", "--identity-dist", "hot:0.5"}),
                 "--identity-dist: hot:0.5 needs at least 2 identities"));
  const std::string virtual_clock =
      usage_error({"http", "http://127.0.0.1:1/?t={now_ms}", "--rate", "10/s", "--duration", "1s",
                   "--virtual-clock", "--identities", "4", "--identity-dist", "zipf:1.1"});
  CHECK(mentions(virtual_clock, "--identity-dist: zipf:1.1 is not yet on the virtual clock"));
  // uniform is what the virtual clock walks anyway.
  CHECK(
      parse_arguments({"http", "http://127.0.0.1:1/?t={now_ms}", "--rate", "10/s", "--duration",
                       "1s", "--virtual-clock", "--identities", "4", "--identity-dist", "uniform"})
          .config.load.virtual_clock);
  // probe has no --identities to spread over.
  CHECK(mentions(usage_error({"probe", "--identity-dist", "zipf:1.1"}), "--identity-dist"));
}

TEST_CASE("many hosts: workers with another distribution or seed are not one test") {
  const auto fingerprint = [](std::vector<const char*> args) {
    return rlcheck::targets::test_fingerprint(parse_arguments(std::move(args)).config);
  };
  const std::string uniform = fingerprint({"redis", "--identities", "10"});
  CHECK(mentions(uniform, "identity_dist=uniform\n"));
  CHECK_FALSE(mentions(uniform, "identity_seed"));
  const std::string hot =
      fingerprint({"redis", "--identities", "10", "--identity-dist", "hot:0.5"});
  CHECK(rlcheck::coord::first_difference(uniform, hot) ==
        "identity_dist=uniform there, identity_dist=hot:0.5 here");
  const std::string seeded =
      fingerprint({"redis", "--identities", "10", "--identity-dist", "hot:0.5", "--seed", "3"});
  CHECK(mentions(*rlcheck::coord::first_difference(hot, seeded), "identity_seed=3 here"));
}

TEST_CASE("reports: params.identity_dist always in the JSON, in the human header when skewed") {
  rlcheck::report::Report report;
  report.target.url = "redis://127.0.0.1:6379";
  report.target.strategy = "lua";
  report.params.identities = 10;
  const auto header = [&report] {
    const std::string text = rlcheck::report::render_human(report, {false, false});
    return text.substr(0, text.find('\n'));
  };
  CHECK(rlcheck::report::to_json(report).at("params").at("identity_dist") == "uniform");
  CHECK(mentions(header(), "10 identities"));
  CHECK_FALSE(mentions(header(), "uniform"));
  report.params.identity_dist = "hot:0.5";
  CHECK(rlcheck::report::to_json(report).at("params").at("identity_dist") == "hot:0.5");
  CHECK(mentions(header(), "10 identities (hot:0.5)"));
  // The judged params name the flag's distribution as it parses again.
  const auto config =
      parse_arguments({"redis", "--identities", "10", "--identity-dist", "zipf:1.10"}).config;
  CHECK(rlcheck::judging::configured_params(config, {}).identity_dist == "zipf:1.1");
}

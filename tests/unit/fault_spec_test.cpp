#include <doctest/doctest.h>

#include "config/fault_spec.hpp"

using namespace std::chrono_literals;
using rlcheck::config::FaultKind;
using rlcheck::config::parse_fault;

TEST_CASE("parse_fault reads every kind, its time and what it carries") {
  const auto pause = parse_fault("pause@1s+500ms");
  REQUIRE(pause);
  CHECK(pause->kind == FaultKind::pause);
  CHECK(pause->at == 1s);
  CHECK(pause->duration == 500ms);
  CHECK(pause->text == "pause@1s+500ms");

  const auto kill = parse_fault("kill-clients@2.5s");
  REQUIRE(kill);
  CHECK(kill->kind == FaultKind::kill_clients);
  CHECK(kill->at == 2500ms);
  CHECK(kill->duration == 0s);

  CHECK(parse_fault("flush-scripts@0s").value().kind == FaultKind::flush_scripts);
  CHECK(parse_fault("restart@1m").value().at == 1min);
  CHECK(parse_fault("failover@300ms").value().kind == FaultKind::failover);

  const auto shell = parse_fault("shell@1s:docker pause redis && echo a:b+c");
  REQUIRE(shell);
  CHECK(shell->kind == FaultKind::shell);
  CHECK(shell->at == 1s);
  CHECK(shell->command == "docker pause redis && echo a:b+c");
}

TEST_CASE("parse_fault names what is wrong with a spec") {
  auto error_of = [](std::string_view spec) {
    const auto parsed = parse_fault(spec);
    REQUIRE_FALSE(parsed);
    return parsed.error();
  };
  CHECK(error_of("pause@1s") == "'pause@1s' needs a duration: pause@T+D");
  CHECK(error_of("pause").find("is not a fault; expected pause@T+D") != std::string::npos);
  CHECK(error_of("stall@1s").find("unknown fault 'stall'") != std::string::npos);
  CHECK(error_of("shell@1s") == "'shell@1s' needs a command: shell@T:CMD");
  CHECK(error_of("shell@1s:") == "'shell@1s:' needs a command: shell@T:CMD");
  CHECK(error_of("kill-clients@1s+2s").find("only pause takes a duration") != std::string::npos);
  CHECK(error_of("restart@2").find("needs a unit") != std::string::npos);
  CHECK(error_of("pause@1s+2").find("the duration") != std::string::npos);
  CHECK(error_of("pause@1s+0s").find("at least 1ms") != std::string::npos);
  CHECK(error_of("flush-scripts@").find("the time") != std::string::npos);
}

TEST_CASE("fault_kind_name spells each kind as the spec does") {
  CHECK(std::string(rlcheck::config::fault_kind_name(FaultKind::kill_clients)) == "kill-clients");
  CHECK(std::string(rlcheck::config::fault_kind_name(FaultKind::flush_scripts)) == "flush-scripts");
  CHECK(std::string(rlcheck::config::fault_kind_name(FaultKind::shell)) == "shell");
}

#include "app/suite_command.hpp"

#include <algorithm>
#include <fstream>
#include <iostream>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "app/check_runner.hpp"
#include "app/hook.hpp"
#include "app/hook_budget.hpp"
#include "base/build_info.hpp"
#include "cli/command_line.hpp"
#include "config/count_text.hpp"
#include "engine/interrupt.hpp"
#include "report/html_report.hpp"
#include "report/human_report.hpp"
#include "report/json_report.hpp"
#include "report/junit_report.hpp"
#include "report/report_file.hpp"
#include "report/summary_markdown.hpp"
#include "runner/run_preflight.hpp"
#include "suite/scenario.hpp"
#include "suite/scenario_server.hpp"

namespace rlcheck::app {

using suite::load_scenario;
using suite::Scenario;
using suite::scenario_files;
using suite::ScenarioServer;
using suite::with_serve_url;
namespace {

struct ScenarioOutcome {
  Scenario scenario;
  std::vector<report::Report> reports;
  checks::Verdict verdict = checks::Verdict::pass;
  std::string detail;  // why it failed or could not run; empty on pass
  // Ctrl-C came while it ran: its verdict is interrupted, and it is never ok.
  bool interrupted = false;
  bool ok() const {
    return !interrupted && ((scenario.expect_pass && verdict == checks::Verdict::pass) ||
                            (!scenario.expect_pass && verdict == checks::Verdict::fail));
  }
};

// The scenario's configuration, with {serve} standing for `serve_url` and
// {serve-redis} for `serve_redis`.
config::Config config_of(const Scenario& scenario, const std::string& serve_url,
                         const std::string& serve_redis) {
  std::vector<std::string> args;
  for (const std::string& arg : scenario.argv)
    args.push_back(with_serve_url(arg, serve_url, serve_redis));
  std::vector<const char*> argv;
  for (const std::string& arg : args)
    argv.push_back(arg.c_str());
  try {
    return cli::parse_command_line(static_cast<int>(argv.size()), argv.data()).config;
  } catch (const base::FatalError& error) {
    throw base::usage_error(fmt::format("{}: {}", scenario.file, error.what()));
  }
}

ScenarioOutcome run_scenario(const Scenario& scenario, config::Config config) {
  ScenarioOutcome outcome;
  outcome.scenario = scenario;
  try {
    std::unique_ptr<ScenarioServer> server;
    if (scenario.serve_args) {
      auto started = ScenarioServer::start(*scenario.serve_args);
      if (!started)
        throw base::cannot_test(started.error());
      server = std::move(*started);
      const config::OutputConfig output = config.output;
      config = config_of(scenario, server->url(), server->redis_url());
      config.output = output;
    }
    outcome.reports = run_checks(config);
  } catch (const base::FatalError& error) {
    outcome.interrupted = engine::interrupted();  // e.g. its server's start cut short
    outcome.verdict = outcome.interrupted ? checks::Verdict::interrupted : checks::Verdict::error;
    outcome.detail = error.what();
    return outcome;
  }
  for (const report::Report& report : outcome.reports) {
    if (report.interrupted) {
      outcome.interrupted = true;
      outcome.verdict = checks::Verdict::interrupted;
      outcome.detail = report::verdict_line(report);
    } else if (!outcome.interrupted && (report.verdict == checks::Verdict::error ||
                                        (report.verdict == checks::Verdict::fail &&
                                         outcome.verdict == checks::Verdict::pass))) {
      outcome.verdict = report.verdict;
      outcome.detail = report::verdict_line(report);
    }
  }
  return outcome;
}

// What an interrupted suite did not get to: the files of the scenarios after
// the last that ran.
std::vector<std::string> files_not_run(
    const std::vector<std::pair<Scenario, config::Config>>& scenarios, size_t ran) {
  std::vector<std::string> files;
  for (size_t i = ran; i < scenarios.size(); ++i)
    files.push_back(scenarios[i].first.file);
  return files;
}

const char* verdict_word(checks::Verdict verdict) {
  return checks::verdict_name(verdict);
}

nlohmann::json suite_json(const std::vector<ScenarioOutcome>& outcomes,
                          const std::vector<std::string>& not_run, int exit_code) {
  nlohmann::json scenarios = nlohmann::json::array();
  size_t as_expected = 0;
  for (const ScenarioOutcome& outcome : outcomes) {
    as_expected += outcome.ok();
    nlohmann::json reports = nlohmann::json::array();
    for (const report::Report& report : outcome.reports)
      reports.push_back(report::to_json(report));
    std::vector<std::string> command(outcome.scenario.argv);
    scenarios.push_back({{"name", outcome.scenario.name},
                         {"file", outcome.scenario.file},
                         {"expect", outcome.scenario.expect_pass ? "pass" : "fail"},
                         {"verdict", verdict_word(outcome.verdict)},
                         {"ok", outcome.ok()},
                         {"detail", outcome.detail},
                         {"command", reproduce_command(command)},
                         {"reports", reports}});
  }
  nlohmann::json suite = {{"schema", "rlcheck.suite/v1"},
                          {"tool", {{"name", "rlcheck"}, {"version", base::version()}}},
                          {"scenarios", scenarios},
                          {"summary",
                           {{"scenarios", outcomes.size() + not_run.size()},
                            {"ran", outcomes.size()},
                            {"as_expected", as_expected}}},
                          {"exit_code", exit_code}};
  if (exit_code == static_cast<int>(base::ExitCode::interrupted)) {
    suite["interrupted"] = true;
    suite["not_run"] = not_run;
  }
  return suite;
}

std::string suite_table(const std::vector<ScenarioOutcome>& outcomes,
                        const std::vector<std::string>& not_run, bool interrupted) {
  const auto total = static_cast<int64_t>(outcomes.size() + not_run.size());
  std::string out = interrupted
                        ? fmt::format("rlcheck run  {} of {} ran, interrupted\n", outcomes.size(),
                                      config::counted(total, "scenario"))
                        : fmt::format("rlcheck run  {}\n", config::counted(total, "scenario"));
  out += fmt::format(" {:<2} {:<6} {:<11} {}\n", "ok", "expect", "got", "scenario");
  size_t as_expected = 0;
  for (const ScenarioOutcome& outcome : outcomes) {
    as_expected += outcome.ok();
    // An interrupted scenario is neither right nor wrong: it did not finish.
    const char* mark = outcome.interrupted ? "-" : outcome.ok() ? "✓" : "✗";
    out += fmt::format(" {:<2} {:<6} {:<11} {}\n", mark,
                       outcome.scenario.expect_pass ? "pass" : "fail",
                       verdict_word(outcome.verdict), outcome.scenario.name);
    if (!outcome.ok() && !outcome.detail.empty()) {
      out += fmt::format("                  {}\n", outcome.detail);
    }
  }
  for (const std::string& file : not_run)
    out += fmt::format(" {:<2} {:<6} {:<11} {}\n", "-", "", "not run", file);
  if (interrupted) {
    out += fmt::format("{} of {} scenarios that ran behaved as expected; {} not run\n", as_expected,
                       outcomes.size(), not_run.size());
  } else {
    out += fmt::format("{} of {} scenarios behaved as expected\n", as_expected, outcomes.size());
  }
  return out;
}

// -q: one line per scenario, as the verdict line is for one check.
std::string suite_lines(const std::vector<ScenarioOutcome>& outcomes,
                        const std::vector<std::string>& not_run) {
  std::string out;
  for (const ScenarioOutcome& outcome : outcomes) {
    out += fmt::format("{} {}: expected {}, got {}{}\n", outcome.ok() ? "✓" : "✗",
                       outcome.scenario.name, outcome.scenario.expect_pass ? "pass" : "fail",
                       verdict_word(outcome.verdict),
                       outcome.ok() || outcome.detail.empty() ? "" : ": " + outcome.detail);
  }
  for (const std::string& path : not_run)
    out += fmt::format("- {}: not run (interrupted)\n", path);
  return out;
}

// --summary-md: a section per scenario (per target of a scenario that
// compares), headed by whether it behaved as expected; the failures of those
// that did not, with their command.
std::string suite_summary(const std::vector<ScenarioOutcome>& outcomes,
                          const std::vector<std::string>& not_run, base::ExitCode code,
                          const std::string& program) {
  report::MarkdownSummary summary;
  summary.title = "rlcheck run";
  size_t as_expected = 0;
  for (const ScenarioOutcome& outcome : outcomes) {
    as_expected += outcome.ok();
    const std::string expectation =
        fmt::format("expected {}, got {}", outcome.scenario.expect_pass ? "pass" : "fail",
                    verdict_word(outcome.verdict));
    std::vector<std::string> command = outcome.scenario.argv;
    if (!program.empty() && !command.empty())
      command[0] = program;
    std::vector<report::SummarySection> sections;
    for (const report::Report& report : outcome.reports) {
      // A scenario that compares: each target by its endpoint, script or strategy.
      const std::string& target = report.target.name;
      sections.push_back(report::summary_section(
          report, outcome.reports.size() == 1
                      ? outcome.scenario.name
                      : fmt::format("{}: {}", outcome.scenario.name, target)));
    }
    if (sections.empty()) {  // it could not run
      sections.emplace_back();
      sections.back().name = outcome.scenario.name;
    }
    for (report::SummarySection& section : sections) {
      section.ok = outcome.ok();
      section.outcome = expectation;
      if (!outcome.ok()) {
        // The failing checks are listed with it: the detail is needed only without them.
        const bool failed_check = std::ranges::any_of(
            section.checks,
            [](const checks::CheckResult& check) { return check.status == checks::Status::fail; });
        section.problem =
            expectation + (outcome.detail.empty() || failed_check ? "" : ": " + outcome.detail);
        section.reproduce = reproduce_command(command);
      }
      summary.sections.push_back(std::move(section));
    }
  }
  for (const std::string& file : not_run) {
    report::SummarySection section;
    section.name = file;
    section.outcome = "not run";
    section.ok = false;
    section.problem = "not run: interrupted before it started";
    summary.sections.push_back(std::move(section));
  }
  const char* word = code == base::ExitCode::ok            ? "PASS"
                     : code == base::ExitCode::interrupted ? "INTERRUPTED"
                     : code == base::ExitCode::cannot_test ? "ERROR"
                                                           : "FAIL";
  summary.verdict = fmt::format(
      "{} ({} of {} behaved as expected)", word, as_expected,
      config::counted(static_cast<int64_t>(outcomes.size() + not_run.size()), "scenario"));
  summary.ok = code == base::ExitCode::ok;
  return report::render_summary_markdown(summary);
}

std::vector<report::JunitSuite> suite_junit(const std::vector<ScenarioOutcome>& outcomes,
                                            const std::vector<std::string>& not_run,
                                            bool with_skipped) {
  std::vector<report::JunitSuite> suites;
  for (const ScenarioOutcome& outcome : outcomes) {
    report::JunitSuite suite;
    suite.name = outcome.scenario.name;
    for (const report::Report& report : outcome.reports) {
      report::JunitSuite checks =
          report::junit_suite_of(report, outcome.scenario.name, with_skipped);
      suite.time_s += checks.time_s;
      for (report::JunitCase& testcase : checks.cases) {
        // A scenario that expects a broken limiter wants these checks to fail.
        if (!outcome.scenario.expect_pass && testcase.status == report::JunitCase::Status::fail) {
          testcase.status = report::JunitCase::Status::pass;
          testcase.output = "failed, as the scenario expects: " + testcase.message;
          testcase.message.clear();
        }
        suite.cases.push_back(std::move(testcase));
      }
    }
    // Untimed: it reads the checks' outcome, and the checks hold the runs' time.
    report::JunitCase expectation;
    expectation.name = "expectation";
    expectation.classname = "rlcheck.run";
    if (outcome.ok()) {
      expectation.output =
          fmt::format("expected {}, got {}", outcome.scenario.expect_pass ? "pass" : "fail",
                      verdict_word(outcome.verdict));
    } else {
      expectation.status = report::JunitCase::Status::fail;
      expectation.message = fmt::format(
          "expected {}, got {}{}", outcome.scenario.expect_pass ? "pass" : "fail",
          verdict_word(outcome.verdict), outcome.detail.empty() ? "" : ": " + outcome.detail);
    }
    suite.cases.push_back(std::move(expectation));
    suites.push_back(std::move(suite));
  }
  for (const std::string& file : not_run) {
    report::JunitCase expectation;
    expectation.name = "expectation";
    expectation.classname = "rlcheck.run";
    expectation.status = report::JunitCase::Status::skip;
    expectation.message = "not run: interrupted before it started";
    suites.push_back({file, 0, {expectation}});
  }
  return suites;
}

void write_file(const std::string& flag, const std::string& path, const std::string& text) {
  if (auto written = report::write_whole_file(path, text); !written)
    throw base::cannot_test(fmt::format("{}: {}", flag, written.error()));
}

std::vector<std::pair<Scenario, config::Config>> load_suite(const config::Config& config) {
  auto files = scenario_files(config.scenario_paths);
  if (!files)
    throw base::usage_error(files.error());
  std::vector<std::pair<Scenario, config::Config>> scenarios;
  // Every file is checked before anything runs, and every problem of every file
  // is reported together, one line each, so that one edit fixes them all.
  std::string problems;
  for (const std::string& file : *files) {
    auto scenario = load_scenario(file);
    try {
      if (!scenario)
        throw base::usage_error(scenario.error());
      // {serve} gets its real port, and {serve-redis} its Redis, when the
      // scenario runs.
      config::Config scenario_config =
          config_of(*scenario, "http://127.0.0.1:1", "redis://127.0.0.1:1");
      scenario_config.output.hook = config.output.hook;  // no notices on stderr in hook mode
      scenario_config.output.quiet = true;
      scenario_config.output.html_path = config.output.html_path;  // records the timelines
      scenarios.emplace_back(std::move(*scenario), std::move(scenario_config));
    } catch (const base::FatalError& error) {
      problems += fmt::format("{}{}", problems.empty() ? "" : "\n", error.what());
    }
  }
  if (!problems.empty())
    throw base::usage_error(problems);
  return scenarios;
}

}  // namespace

std::vector<config::Config> check_suite(const config::Config& config) {
  std::vector<config::Config> configs;
  for (auto& [scenario, scenario_config] : load_suite(config))
    configs.push_back(std::move(scenario_config));
  return configs;
}

int run_suite(const config::Config& config, const HookContext& hook) {
  const auto scenarios = load_suite(config);
  runner::check_report_paths(config.output);

  std::vector<ScenarioOutcome> outcomes;
  for (const auto& [scenario, scenario_config] : scenarios) {
    if (engine::interrupted())
      break;  // Ctrl-C between two scenarios: the next one is not started
    outcomes.push_back(run_scenario(scenario, scenario_config));
    if (outcomes.back().interrupted)
      break;
  }
  const bool interrupted = engine::interrupted();
  const std::vector<std::string> not_run = files_not_run(scenarios, outcomes.size());

  base::ExitCode code = interrupted ? base::ExitCode::interrupted : base::ExitCode::ok;
  for (const ScenarioOutcome& outcome : outcomes) {
    if (outcome.interrupted)
      code = base::ExitCode::interrupted;
    if (code == base::ExitCode::interrupted)
      break;
    if (outcome.verdict == checks::Verdict::error)
      code = base::ExitCode::cannot_test;
    if (!outcome.ok() && code == base::ExitCode::ok)
      code = base::ExitCode::check_failed;
  }
  const bool out_of_time = hook.deadline != nullptr && hook.deadline->passed();
  if (config.output.hook && code != base::ExitCode::ok &&
      (code != base::ExitCode::interrupted || out_of_time)) {
    code = base::ExitCode::hook_blocked;
  }
  const nlohmann::json json = suite_json(outcomes, not_run, static_cast<int>(code));
  if (!config.output.report_path.empty()) {
    write_file("--report", config.output.report_path, json.dump(2) + "\n");
  }
  if (!config.output.junit_path.empty()) {
    write_file("--junit", config.output.junit_path,
               report::render_junit(suite_junit(outcomes, not_run, config.output.junit_skipped)));
  }
  if (!config.output.summary_md_path.empty()) {
    const std::string text =
        suite_summary(outcomes, not_run, code,
                      config.command_line.empty() ? std::string() : config.command_line[0]);
    auto written = config.output.summary_md_append
                       ? report::append_to_file(config.output.summary_md_path, text)
                       : report::write_whole_file(config.output.summary_md_path, text);
    if (!written)
      throw base::cannot_test(fmt::format("--summary-md: {}", written.error()));
  }
  if (!config.output.html_path.empty()) {
    std::vector<report::Report> reports;
    for (const ScenarioOutcome& outcome : outcomes)
      reports.insert(reports.end(), outcome.reports.begin(), outcome.reports.end());
    write_file("--html", config.output.html_path, report::render_html(reports));
  }
  if (config.output.hook) {
    std::string err = out_of_time ? deadline_line(*hook.deadline) : "";
    if (code != base::ExitCode::ok) {
      for (const ScenarioOutcome& outcome : outcomes) {
        if (outcome.ok())
          continue;
        err += fmt::format("rlcheck: scenario '{}' ({}) expected {}, got {}: {}\n",
                           outcome.scenario.name, outcome.scenario.file,
                           outcome.scenario.expect_pass ? "pass" : "fail",
                           verdict_word(outcome.verdict), outcome.detail);
        // The program as this one was started (run_main made it pasteable).
        std::vector<std::string> command = outcome.scenario.argv;
        if (!config.command_line.empty())
          command[0] = config.command_line[0];
        err += fmt::format("  reproduce: {}\n", reproduce_command(command));
      }
    }
    if (config.output.hook_max_blocks) {
      BlockCounter counter(hook.input, reproduce_command(config.command_line),
                           BlockCounter::default_dir());
      code = static_cast<base::ExitCode>(
          cap_blocks(config.output.hook_max_blocks, counter, static_cast<int>(code), err));
    }
    std::cerr << err;
  } else if (config.output.json) {
    std::cout << json.dump(2) << "\n";
  } else {
    std::cout << (config.output.quiet
                      ? suite_lines(outcomes, not_run)
                      : suite_table(outcomes, not_run, code == base::ExitCode::interrupted));
  }
  return static_cast<int>(code);
}

}  // namespace rlcheck::app

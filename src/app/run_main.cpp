#include "app/run_main.hpp"

#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <memory>

#include <unistd.h>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "app/check_runner.hpp"
#include "app/exit_code.hpp"
#include "app/hook.hpp"
#include "app/hook_config.hpp"
#include "app/probe_command.hpp"
#include "app/run_preflight.hpp"
#include "app/serve_command.hpp"
#include "app/suite_command.hpp"
#include "cli/command_line.hpp"
#include "config/strategy_name.hpp"
#include "engine/interrupt.hpp"
#include "report/html_report.hpp"
#include "report/human_report.hpp"
#include "report/json_report.hpp"
#include "report/junit_report.hpp"
#include "report/records_writer.hpp"
#include "report/report_file.hpp"

namespace rlcheck::app {
namespace {

bool use_color(config::ColorMode mode) {
  if (mode == config::ColorMode::always)
    return true;
  if (mode == config::ColorMode::never)
    return false;
  const char* no_color = std::getenv("NO_COLOR");
  const char* term = std::getenv("TERM");
  return isatty(STDOUT_FILENO) && (no_color == nullptr || *no_color == '\0') &&
         (term == nullptr || std::string_view(term) != "dumb");
}

// compare cut short by Ctrl-C: the strategies or endpoints it did not get to.
std::vector<std::string> compare_not_run(const config::Config& config, size_t ran) {
  std::vector<std::string> names;
  if (config.compare_urls) {
    for (size_t i = ran; i < config.http.urls.size(); ++i)
      names.push_back(config.http.urls[i]);
  } else {
    for (size_t i = ran; i < config.compare_strategies.size(); ++i)
      names.emplace_back(config::strategy_name(config.compare_strategies[i]));
  }
  return names;
}

void write_report_file(const std::string& flag, const std::string& path, std::string_view text) {
  if (auto written = report::write_whole_file(path, text); !written)
    throw cannot_test(fmt::format("{}: {}", flag, written.error()));
}

// `cut_short`: why compare could not go on to the strategies left (Redis gone); empty when
// it did not stop, or stopped for Ctrl-C.
int deliver(const config::Config& config, std::vector<report::Report>& reports,
            const std::string& cut_short) {
  const bool hook = config.output.hook;
  for (report::Report& report : reports)
    report.exit_code = static_cast<int>(exit_code_of(report, hook));
  ExitCode overall = overall_exit_code(reports);
  if (!cut_short.empty() && overall != ExitCode::interrupted)
    overall = hook ? ExitCode::hook_blocked : ExitCode::cannot_test;
  const bool compare = config.command == config::Command::compare;
  const std::vector<std::string> not_run =
      compare ? compare_not_run(config, reports.size()) : std::vector<std::string>{};
  nlohmann::json json = compare ? report::compare_to_json(reports, static_cast<int>(overall))
                                : report::to_json(reports.front());
  if (!not_run.empty())
    json["not_run"] = not_run;
  if (!cut_short.empty()) {
    json["not_run_reason"] = cut_short;
    if (overall != ExitCode::interrupted)
      json["verdict"] = checks::verdict_name(checks::Verdict::error);
  }

  if (!config.output.report_path.empty())
    write_report_file("--report", config.output.report_path, json.dump(2) + "\n");
  if (!config.output.junit_path.empty()) {
    std::vector<report::JunitSuite> suites;
    for (const report::Report& report : reports) {
      const std::string subject = report.mode == "http"          ? report.target.url
                                  : report.target.script.empty() ? report.target.strategy
                                                                 : report.target.script;
      suites.push_back(
          report::junit_suite_of(report, fmt::format("rlcheck {} {}", report.mode, subject)));
    }
    write_report_file("--junit", config.output.junit_path, report::render_junit(suites));
  }
  if (!config.output.html_path.empty())
    write_report_file("--html", config.output.html_path, report::render_html(reports));
  const std::string not_run_line =
      cut_short.empty()
          ? ""
          : fmt::format("rlcheck: could not test {}: {}\n", fmt::join(not_run, ", "), cut_short);
  // A fault that could not be applied is why the test could not be done as asked.
  std::string fault_lines;
  for (const report::Report& report : reports) {
    if (auto failure = fault_failure(report))
      fault_lines += fmt::format("rlcheck: {}\n", *failure);
  }
  if (hook) {
    if (overall != ExitCode::ok)
      std::cerr << hook_reason(reports, config.command_line) << not_run_line << fault_lines;
    return static_cast<int>(overall);
  }
  std::cerr << not_run_line << fault_lines;
  // A run drowned in errors says why on stderr too, where scripts and CI logs look.
  for (const report::Report& report : reports) {
    if (report.verdict == checks::Verdict::error) {
      std::cerr << "rlcheck: could not test " << report.target.url << ": "
                << report::verdict_line(report) << "\n";
    }
  }
  if (config.output.json) {
    std::cout << json.dump(2) << "\n";
  } else {
    const report::TextStyle style{use_color(config.output.color), config.output.quiet};
    if (compare) {
      std::cout << report::render_compare(reports, style);
      if (!not_run.empty()) {
        std::cout << fmt::format("not run ({}): {}\n",
                                 cut_short.empty() ? "interrupted" : cut_short,
                                 fmt::join(not_run, ", "));
      }
    } else {
      for (const report::Report& report : reports)
        std::cout << report::render_human(report, style);
    }
  }
  std::cout.flush();
  return static_cast<int>(overall);
}

}  // namespace

int run_main(int argc, const char* const* argv) {
  engine::install_interrupt_handler();
  // A reader that went away (`rlcheck ... | head -1`) makes writes to stdout fail (EPIPE)
  // rather than kill rlcheck: the report files are written first, and the exit code is the
  // verdict's. Children get the default action back (process/child_process).
  std::signal(SIGPIPE, SIG_IGN);
  const std::vector<std::string> command_line(argv, argv + argc);
  bool hook = false;
  try {
    cli::ParsedCommandLine parsed = cli::parse_command_line(argc, argv);
    if (parsed.immediate_output) {
      std::cout << *parsed.immediate_output;
      return static_cast<int>(ExitCode::ok);
    }
    const config::Config& config = parsed.config;
    hook = config.output.hook;
    if (hook)
      read_hook_input();
    if (config.command == config::Command::serve)
      return run_serve(config);
    if (config.command == config::Command::run)
      return run_suite(config);
    if (config.command == config::Command::hook_config)
      return run_hook_config(config.hook_args, config.merge_settings);
    if (config.command == config::Command::probe)
      return run_probe(config);
    // Opened before the first request: a path that cannot be written is known before the run.
    std::unique_ptr<report::RecordsWriter> records;
    if (!config.output.records_path.empty()) {
      auto opened = report::RecordsWriter::open_file(config.output.records_path,
                                                     config.command == config::Command::compare);
      if (!opened)
        throw cannot_test(fmt::format("--records: {}", opened.error()));
      records = std::move(*opened);
    }
    check_report_paths(config.output);
    std::string cut_short;
    std::vector<report::Report> reports = run_checks(config, records.get(), &cut_short);
    if (records && !records->finish()) {
      throw cannot_test(fmt::format("--records: cannot write {}", config.output.records_path));
    }
    return deliver(config, reports, cut_short);
  } catch (const FatalError& error) {
    if (hook && error.code() != ExitCode::usage) {
      std::cerr << fmt::format("rlcheck: could not test the rate limiter: {}\n  reproduce: {}\n",
                               error.what(), reproduce_command(command_line));
      return static_cast<int>(ExitCode::hook_blocked);
    }
    // One line per problem (a suite lists every bad key of every file), each marked.
    std::string message = error.what();
    for (size_t at = message.find('\n'); at != std::string::npos; at = message.find('\n', at + 1))
      message.insert(at + 1, "rlcheck: ");
    std::cerr << "rlcheck: " << message << "\n";
    return static_cast<int>(error.code());
  }
}

}  // namespace rlcheck::app

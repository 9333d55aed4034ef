#include "app/run_main.hpp"

#include <algorithm>
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
#include "app/delivery.hpp"
#include "app/explain_command.hpp"
#include "app/hook.hpp"
#include "app/hook_budget.hpp"
#include "app/hook_config.hpp"
#include "app/probe_command.hpp"
#include "app/serve_command.hpp"
#include "app/suite_command.hpp"
#include "base/exit_code.hpp"
#include "cli/command_line.hpp"
#include "config/clock_skew.hpp"
#include "config/strategy_name.hpp"
#include "engine/interrupt.hpp"
#include "report/html_report.hpp"
#include "report/human_report.hpp"
#include "report/json_report.hpp"
#include "report/junit_report.hpp"
#include "report/records_writer.hpp"
#include "report/summary_markdown.hpp"
#include "runner/run_preflight.hpp"
#include "runner/shared_test.hpp"
#include "targets/target_kind.hpp"

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
    const size_t strategies = config.compare_strategies.size();
    for (size_t i = std::max(ran, strategies); i < strategies + config.compare_scripts.size(); ++i)
      names.push_back(config.compare_scripts[i - strategies].path);
  }
  return names;
}

// --hook-max-blocks: a block past the cap lets the stop go (app/hook.hpp).
void cap_hook(std::optional<int64_t> max_blocks, const HookInput& input,
              const std::vector<std::string>& command_line, Delivery& delivery) {
  if (!max_blocks)
    return;
  BlockCounter counter(input, reproduce_command(command_line), BlockCounter::default_dir());
  delivery.exit_code = cap_blocks(max_blocks, counter, delivery.exit_code, delivery.err);
}

// A target as the JUnit suites and the Markdown summary name it: an endpoint by its URL, a
// Redis limiter by its script or strategy.
std::string subject_of(const report::Report& report) {
  return report.target.name;
}

// --summary-md: a section per target (and per target compare did not get to), under the
// verdict the exit code tells; the command line reproduces it.
std::string summary_markdown(const config::Config& config,
                             const std::vector<report::Report>& reports,
                             const std::vector<std::string>& not_run,
                             const std::string& cut_short) {
  report::MarkdownSummary summary;
  const bool compare = config.command == config::Command::compare;
  summary.title = fmt::format("rlcheck {}", compare ? "compare" : reports.front().mode);
  checks::Verdict verdict = cut_short.empty() ? checks::Verdict::pass : checks::Verdict::error;
  for (const report::Report& report : reports) {
    report::SummarySection section = report::summary_section(report, subject_of(report));
    checks::Verdict own = report.interrupted ? checks::Verdict::interrupted : report.verdict;
    if (auto failure = fault_failure(report)) {
      own = checks::worst_verdict(own, checks::Verdict::error);
      section.ok = false;
      section.outcome = report::verdict_heading(own);
      section.problem += (section.problem.empty() ? "" : "\n") + *failure;
    }
    verdict = checks::worst_verdict(verdict, own);
    summary.sections.push_back(std::move(section));
  }
  for (const std::string& name : not_run) {
    report::SummarySection section;
    section.name = name;
    section.ok = false;
    section.outcome = "NOT RUN";
    section.problem = fmt::format("not run: {}", cut_short.empty() ? "interrupted" : cut_short);
    summary.sections.push_back(std::move(section));
  }
  summary.verdict = report::verdict_heading(verdict);
  summary.ok = verdict == checks::Verdict::pass;
  summary.reproduce = reproduce_command(config.command_line);
  return report::render_summary_markdown(summary);
}

// `cut_short`: why compare could not go on to the strategies left (Redis gone); empty when
// it did not stop, or stopped for Ctrl-C.
Delivery deliver(const config::Config& config, std::vector<report::Report>& reports,
                 const std::string& cut_short, const HookContext& hook_context) {
  Delivery delivery;
  const bool hook = config.output.hook;
  for (report::Report& report : reports)
    report.exit_code = static_cast<int>(exit_code_of(report, hook));
  base::ExitCode overall = overall_exit_code(reports);
  if (!cut_short.empty() && overall != base::ExitCode::interrupted)
    overall = hook ? base::ExitCode::hook_blocked : base::ExitCode::cannot_test;
  // Stopped by the hook's deadline, not by Ctrl-C: the stop is blocked with what was measured.
  const bool out_of_time = hook && hook_context.deadline && hook_context.deadline->passed();
  if (out_of_time)
    overall = base::ExitCode::hook_blocked;
  delivery.exit_code = static_cast<int>(overall);
  const bool compare = config.command == config::Command::compare;
  const std::vector<std::string> not_run =
      compare ? compare_not_run(config, reports.size()) : std::vector<std::string>{};
  nlohmann::json json = compare ? report::compare_to_json(reports, static_cast<int>(overall))
                                : report::to_json(reports.front());
  if (!not_run.empty())
    json["not_run"] = not_run;
  if (!cut_short.empty()) {
    json["not_run_reason"] = cut_short;
    if (overall != base::ExitCode::interrupted)
      json["verdict"] = checks::verdict_name(checks::Verdict::error);
  }

  // Many hosts: every kind is rendered, and each worker writes those its own command line
  // names, where it names them; this worker writes its own (a path left empty is not written).
  const bool every_kind = config.workers.distributed();
  if (every_kind || !config.output.report_path.empty())
    delivery.files.push_back({"--report", config.output.report_path, json.dump(2) + "\n"});
  if (every_kind || !config.output.junit_path.empty()) {
    std::vector<report::JunitSuite> suites;
    for (const report::Report& report : reports) {
      suites.push_back(report::junit_suite_of(
          report, fmt::format("rlcheck {} {}", report.mode, subject_of(report)),
          config.output.junit_skipped));
    }
    delivery.files.push_back({"--junit", config.output.junit_path, report::render_junit(suites)});
  }
  if (every_kind || !config.output.summary_md_path.empty()) {
    delivery.files.push_back({"--summary-md", config.output.summary_md_path,
                              summary_markdown(config, reports, not_run, cut_short),
                              config.output.summary_md_append});
  }
  if (every_kind || !config.output.html_path.empty())
    delivery.files.push_back(
        {"--html", config.output.html_path,
         compare ? report::render_compare_html(reports) : report::render_html(reports)});
  const std::string not_run_line =
      cut_short.empty()
          ? ""
          : fmt::format("rlcheck: could not test {}: {}\n", fmt::join(not_run, ", "), cut_short);
  // A fault that could not be applied is why the test could not be done as asked; so is a
  // worker lost from a shared test.
  std::string fault_lines;
  for (const report::Report& report : reports) {
    if (auto failure = fault_failure(report))
      fault_lines += fmt::format("rlcheck: {}\n", *failure);
    if (report.workers && !report.workers->lost.empty()) {
      fault_lines += fmt::format(
          "rlcheck: session {}: {}; the report holds the other workers' "
          "requests only\n",
          report.workers->session, report.workers->lost);
    }
  }
  if (hook) {
    if (overall != base::ExitCode::ok) {
      delivery.err = (out_of_time ? deadline_line(*hook_context.deadline) : "") +
                     hook_reason(reports, config.command_line) + not_run_line + fault_lines;
    }
    cap_hook(config.output.hook_max_blocks, hook_context.input, config.command_line, delivery);
    return delivery;
  }
  delivery.err = not_run_line + fault_lines;
  // A run drowned in errors says why on stderr too, where scripts and CI logs look.
  for (const report::Report& report : reports) {
    if (report.verdict == checks::Verdict::error &&
        (!report.workers || report.workers->lost.empty())) {
      delivery.err += fmt::format("rlcheck: could not test {}: {}\n", report.target.url,
                                  report::verdict_line(report));
    }
  }
  if (config.output.json) {
    delivery.out = json.dump(2) + "\n";
  } else {
    const report::TextStyle style{use_color(config.output.color), config.output.quiet};
    if (compare) {
      delivery.out = report::render_compare(reports, style);
      if (!not_run.empty()) {
        delivery.out +=
            fmt::format("not run ({}): {}\n", cut_short.empty() ? "interrupted" : cut_short,
                        fmt::join(not_run, ", "));
      }
    } else {
      for (const report::Report& report : reports)
        delivery.out += report::render_human(report, style);
    }
  }
  return delivery;
}

// Many hosts, a worker other than 0: the report worker 0 (or the worker that took its place)
// published, emitted here too, its files at the paths this worker was given.
int deliver_published(coord::Session& session, const config::OutputConfig& output) {
  auto published = session.await_outputs();
  if (!published)
    throw base::cannot_test(published.error());
  auto read = delivery_from_json(*published);
  auto delivery = read ? addressed_to(std::move(*read), output) : read;
  if (!delivery)
    throw base::cannot_test(fmt::format("session {}: {}", session.id(), delivery.error()));
  return emit(*delivery);
}

// Many hosts, worker 0 (or the worker that took its place): the others print what it prints;
// failing to tell them is said, and they find out that it is gone.
void publish(coord::Session* session, const Delivery& delivery) {
  if (session == nullptr || !session->publishes())
    return;
  if (auto published = session->publish(delivery_to_json(delivery)); !published) {
    std::cerr << fmt::format("rlcheck: session {}: could not publish the report: {}\n",
                             session->id(), published.error());
  }
}

}  // namespace

int run_main(int argc, const char* const* argv) {
  targets::install_kinds();
  engine::install_interrupt_handler();
  // A reader that went away (`rlcheck ... | head -1`) makes writes to stdout fail (EPIPE)
  // rather than kill rlcheck: the report files are written first, and the exit code is the
  // verdict's. Children get the default action back (process/child_process).
  std::signal(SIGPIPE, SIG_IGN);
  const std::vector<std::string> command_line(argv, argv + argc);
  bool hook = false;
  HookContext hook_context;
  std::unique_ptr<HookDeadline> deadline;   // --hook: ends the runs before the hook's timeout
  std::optional<int64_t> max_blocks;        // --hook-max-blocks
  std::unique_ptr<coord::Session> session;  // many hosts: this worker's place in the session
  try {
    cli::ParsedCommandLine parsed = cli::parse_command_line(argc, argv);
    if (parsed.immediate_output) {
      std::cout << *parsed.immediate_output;
      return static_cast<int>(base::ExitCode::ok);
    }
    hook = parsed.config.output.hook;
    if (hook) {
      // The reproduce lines run as pasted: the program by the path that started it.
      parsed.config.command_line[0] = this_program(parsed.config.command_line[0]);
      hook_context.input = parse_hook_input(read_hook_input());
      max_blocks = parsed.config.output.hook_max_blocks;
    }
    const config::Config& config = parsed.config;
    if (hook && config.command != config::Command::probe) {
      const auto timeout = config.command == config::Command::run
                               ? hook_timeout_s(check_suite(config))
                               : hook_timeout_s(config);
      if (timeout) {
        deadline = std::make_unique<HookDeadline>(std::chrono::seconds(*timeout));
        hook_context.deadline = deadline.get();
      }
    }
    if (config.command == config::Command::serve)
      return run_serve(config);
    if (config.command == config::Command::run)
      return run_suite(config, hook_context);
    if (config.command == config::Command::explain) {
      std::cout << explain_text(config.explain_id) << std::flush;
      return static_cast<int>(base::ExitCode::ok);
    }
    if (config.command == config::Command::hook_config)
      return run_hook_config(config.hook_args, config.merge_settings);
    if (config.command == config::Command::probe)
      return run_probe(config);
    // Opened before the first request: a path that cannot be written is known before the run.
    std::unique_ptr<report::RecordsWriter> records;
    // Many hosts: worker 0 writes the merged records; the others none.
    const bool writes_records = !config.workers.distributed() || config.workers.index == 0;
    if (!config.output.records_path.empty() && writes_records) {
      auto opened = report::RecordsWriter::open_file(
          config.output.records_path, config.command == config::Command::compare,
          config::clock_skews_ms(config.load.clock_skews), config.load.costs.weighted());
      if (!opened)
        throw base::cannot_test(fmt::format("--records: {}", opened.error()));
      records = std::move(*opened);
    }
    runner::check_report_paths(config.output);
    if (config.workers.distributed()) {
      // Many hosts: what this host already knows is said before the other workers wait for it.
      const targets::TargetKind& kind = targets::kind_of(config);
      runner::ensure_descriptors(runner::descriptors_needed(runner::connections_needed(
                                     config, kind.identity_per_source_address)),
                                 fmt::format("-p {}", config.load.concurrency));
      runner::check_source_addresses(config.load.source_addresses);
      targets::check_shared_test(config, &std::getenv);
    }
    // --metrics-listen binds here: a port in use is known before the first run.
    observe::Monitor monitor(config);
    session = runner::join_session(config, targets::kind_of(config).fingerprint(config));
    std::string cut_short;
    std::vector<report::Report> reports =
        run_checks(config, records.get(), &cut_short, session.get(), &monitor);
    if (session && !session->publishes()) {
      const int exit_code = deliver_published(*session, config.output);
      monitor.linger();
      return exit_code;
    }
    if (records && !records->finish()) {
      throw base::cannot_test(
          fmt::format("--records: cannot write {}", config.output.records_path));
    }
    const Delivery delivery = deliver(config, reports, cut_short, hook_context);
    publish(session.get(), delivery);
    const int exit_code = emit(delivery);
    monitor.linger();
    return exit_code;
  } catch (const base::FatalError& error) {
    Delivery failed;
    if (hook && error.code() != base::ExitCode::usage) {
      std::vector<std::string> pasteable = command_line;
      pasteable[0] = this_program(pasteable[0]);
      failed.err = fmt::format("rlcheck: could not test the rate limiter: {}\n  reproduce: {}\n",
                               error.what(), reproduce_command(pasteable));
      failed.exit_code = static_cast<int>(base::ExitCode::hook_blocked);
      cap_hook(max_blocks, hook_context.input, pasteable, failed);
    } else {
      // One line per problem (a suite lists every bad key of every file), each marked.
      std::string message = error.what();
      for (size_t at = message.find('\n'); at != std::string::npos; at = message.find('\n', at + 1))
        message.insert(at + 1, "rlcheck: ");
      failed.err = "rlcheck: " + message + "\n";
      failed.exit_code = static_cast<int>(error.code());
    }
    // Worker 0 could not finish: the others exit as it does, with its reason.
    publish(session.get(), failed);
    std::cerr << failed.err;
    return failed.exit_code;
  }
}

}  // namespace rlcheck::app

#include "cli/command_line.hpp"

#include <fmt/format.h>
#include <CLI/CLI.hpp>

#include "base/build_info.hpp"
#include "base/exit_code.hpp"
#include "cli/argument_checks.hpp"
#include "cli/kind_command.hpp"
#include "cli/option_groups.hpp"
#include "cli/parse_errors.hpp"
#include "cli/raw_options.hpp"
#include "http/curl_library.hpp"

namespace rlcheck::cli {
namespace {

// Every subcommand and option, bound to `raw`.
struct Apps {
  std::unique_ptr<CLI::App> app;
  std::vector<std::pair<CLI::App*, const KindCommand*>> kinds;  // a command per target kind
  CLI::App* compare = nullptr;
  CLI::App* serve = nullptr;
  CLI::App* run = nullptr;
  CLI::App* hook_config = nullptr;
  CLI::App* probe = nullptr;
  CLI::App* explain = nullptr;
};

// What each kind adds to a command that takes URLs of any kind.
void add_url_options(CLI::App& command, RawOptions& raw) {
  for (const KindCommand& kind : kind_commands()) {
    if (kind.add_url_options != nullptr)
      kind.add_url_options(command, raw);
  }
}

// Every command, each with its options; with `only` naming one, the others come without their
// options (named and described for --help, never parsed into): building every command's options
// is most of the start-up's CPU, and a hook runs rlcheck often.
Apps build_apps(RawOptions& raw, std::string_view only = {}) {
  Apps apps;
  apps.app = std::make_unique<CLI::App>("rlcheck: load-test and verify rate limiters", "rlcheck");
  CLI::App& app = *apps.app;
  app.require_subcommand(0, 1);
  app.add_flag("--version", raw.show_version, "version, git revision, library versions");
  const auto full = [only](std::string_view name) { return only.empty() || only == name; };

  for (const KindCommand& kind : kind_commands()) {
    CLI::App* command = app.add_subcommand(std::string(kind.name), std::string(kind.summary));
    apps.kinds.emplace_back(command, &kind);
    if (full(kind.name)) {
      add_load_options(
          command, raw,
          kind.limits_from_replies ? LoadCommand::advertised : LoadCommand::configured);
      kind.add_options(*command, raw);
    }
  }

  apps.compare = app.add_subcommand(
      "compare", "strategies, your scripts or HTTP endpoints side by side under the same load");
  if (full("compare")) {
    add_load_options(apps.compare, raw, LoadCommand::compare);
    add_redis_options(apps.compare, raw);
    add_hint_resolution_option(apps.compare, raw);
    apps.compare->add_option_function<std::string>(
        "--strategies",
        [&raw](const std::string& value) {
          raw.strategies = value;
          raw.strategies_given = true;
        },
        "comma-separated strategies (default naive,lua; none with --script unless given)");
    apps.compare->add_option("--url", raw.compare_urls,
                             "an HTTP endpoint to compare, repeatable (instead of --strategies)");
    add_http_options(apps.compare, raw);
    add_redis_connection_options(apps.compare, raw);
    add_url_options(*apps.compare, raw);
  }

  apps.serve = app.add_subcommand(
      "serve", "a reference rate-limited HTTP server backed by Redis (demo and test target)");
  if (full("serve")) {
    add_serve_options(apps.serve, raw);
    add_cluster_options(apps.serve, raw);
    add_tls_options(apps.serve, raw);
  }

  apps.run = app.add_subcommand("run", "run scenario files (or every *.json in a folder)");
  if (full("run")) {
    apps.run->add_option("FILES", raw.scenario_paths, "scenario files or folders")->required();
    add_output_options(apps.run, raw);
  }

  apps.hook_config = app.add_subcommand(
      "hook-config", "print the Claude Code settings.json block for: -- <rlcheck arguments>");
  if (full("hook-config")) {
    apps.hook_config->add_option("ARGS", raw.hook_args, "the rlcheck command line, after --")
        ->required();
    optional_option(apps.hook_config, "--merge", raw.merge_settings,
                    "an existing settings.json to merge the hook into (printed, not written)");
  }

  apps.probe = app.add_subcommand(
      "probe", "infer a limiter's contract (algorithm, limit and window, or burst and refill)");
  if (full("probe")) {
    add_probe_options(apps.probe, raw);
    add_source_address_option(apps.probe, raw);
    add_cluster_options(apps.probe, raw);
    add_tls_options(apps.probe, raw);
    add_url_options(*apps.probe, raw);
  }
  apps.explain = app.add_subcommand(
      "explain", "what a check proves, why it fails and how to fix the limiter: explain CHECK_ID");
  if (full("explain")) {
    apps.explain->add_option("CHECK_ID", raw.explain_id,
                             "a check id as reports print it (limit, key-ttl, ...); none: list "
                             "every check");
  }
  return apps;
}

CLI::App* subcommand_of(Apps& apps, std::string_view subcommand) {
  for (CLI::App* candidate : apps.app->get_subcommands({})) {
    if (candidate->get_name() == subcommand)
      return candidate;
  }
  return nullptr;
}

}  // namespace

std::vector<std::string> option_names(std::string_view subcommand) {
  RawOptions raw;
  Apps apps = build_apps(raw, subcommand);
  std::vector<std::string> names;
  if (CLI::App* sub = subcommand_of(apps, subcommand)) {
    for (const CLI::Option* option : sub->get_options()) {
      for (const std::string& name : option->get_lnames())
        names.push_back(name);
    }
  }
  return names;
}

bool names_a_file(std::string_view long_name) {
  return long_name == "script" || long_name == "report" || long_name == "junit" ||
         long_name == "summary-md" || long_name == "html" || long_name == "records" ||
         long_name == "merge" || long_name == "tls-ca" || long_name == "tls-cert" ||
         long_name == "tls-key";
}

OptionKind option_kind(std::string_view subcommand, std::string_view long_name) {
  RawOptions raw;
  Apps apps = build_apps(raw, subcommand);
  CLI::App* sub = subcommand_of(apps, subcommand);
  if (sub == nullptr)
    return OptionKind::none;
  const CLI::Option* option = sub->get_option_no_throw("--" + std::string(long_name));
  if (option == nullptr || !option->nonpositional())
    return OptionKind::none;
  return option->get_expected_max() == 0 || option->get_type_size() == 0 ? OptionKind::flag
                                                                         : OptionKind::value;
}

namespace {

// The command a command line names first, where it names one: only its options are built.
std::string_view named_command(int argc, const char* const* argv) {
  static constexpr std::string_view k_commands[] = {"compare", "serve",       "run",
                                                    "probe",   "hook-config", "explain"};
  if (argc < 2 || argv[1] == nullptr)
    return {};
  const std::string_view first = argv[1];
  for (std::string_view command : k_commands) {
    if (first == command)
      return command;
  }
  if (const KindCommand* kind = kind_command_named(first))
    return kind->name;
  return {};
}

// Parses again with every command's options built, to name what is wrong (an option of
// another command says where it belongs), and throws that as the usage error.
[[noreturn]] void refuse_command_line(int argc, const char* const* argv,
                                      const CLI::ParseError& first) {
  RawOptions raw;
  Apps apps = build_apps(raw);
  try {
    apps.app->parse(argc, argv);
  } catch (const CLI::ParseError& error) {
    // An unknown flag or command left over is the likelier cause than what CLI11 noticed.
    throw base::usage_error(
        explain_leftover(*apps.app).value_or(parse_error_message(*apps.app, error)));
  }
  throw base::usage_error(parse_error_message(*apps.app, first));
}

// --script given once is the script of redis, probe and serve; compare takes several, and each
// --arg goes to the --script before it (those before the first, to every script).
void take_script_args(CLI::App& command, RawOptions& raw) {
  if (raw.scripts.empty())
    return;
  if (raw.command != config::Command::compare) {
    if (raw.scripts.size() > 1) {
      throw base::usage_error(fmt::format(
          "--script: given {} times; rlcheck {} tests one script (compare several with rlcheck "
          "compare --script A --script B)",
          raw.scripts.size(), command.get_name()));
    }
    raw.script = raw.scripts.front();
    return;
  }
  const CLI::Option* script_option = command.get_option_no_throw("--script");
  const CLI::Option* arg_option = command.get_option_no_throw("--arg");
  std::vector<std::string> shared;
  raw.compare_scripts.clear();
  size_t next_arg = 0;
  for (const CLI::Option* option : command.parse_order()) {
    if (option == script_option) {
      raw.compare_scripts.push_back({raw.scripts[raw.compare_scripts.size()], shared});
    } else if (option == arg_option && next_arg < raw.args.size()) {
      const std::string& value = raw.args[next_arg++];
      if (raw.compare_scripts.empty())
        shared.push_back(value);
      else
        raw.compare_scripts.back().args.push_back(value);
    }
  }
  raw.args.clear();
}

}  // namespace

ParsedCommandLine parse_command_line(int argc, const char* const* argv) {
  RawOptions raw;
  Apps apps = build_apps(raw, named_command(argc, argv));
  ParsedCommandLine parsed;
  refuse_flags_as_values(*apps.app, argc, argv);
  try {
    apps.app->parse(argc, argv);
  } catch (const CLI::CallForHelp&) {
    parsed.immediate_output = apps.app->help();
    for (CLI::App* sub : apps.app->get_subcommands({})) {
      if (sub->parsed())
        parsed.immediate_output = sub->help();
    }
    return parsed;
  } catch (const CLI::CallForAllHelp&) {
    RawOptions every_raw;
    parsed.immediate_output = build_apps(every_raw).app->help("", CLI::AppFormatMode::All);
    return parsed;
  } catch (const CLI::ParseError& error) {
    refuse_command_line(argc, argv, error);
  }
  if (raw.show_version) {
    parsed.immediate_output = base::version_text(http::curl_version());
    return parsed;
  }
  const std::pair<CLI::App*, config::Command> commands[] = {
      {apps.compare, config::Command::compare}, {apps.serve, config::Command::serve},
      {apps.run, config::Command::run},         {apps.hook_config, config::Command::hook_config},
      {apps.probe, config::Command::probe},     {apps.explain, config::Command::explain},
  };
  bool chosen = false;
  for (const auto& [sub, command] : commands) {
    if (sub->parsed()) {
      raw.command = command;
      chosen = true;
    }
  }
  for (const auto& [sub, kind] : apps.kinds) {
    if (sub->parsed()) {
      raw.command = config::Command::drive;
      raw.kind = kind->name;
      chosen = true;
      take_script_args(*sub, raw);
    }
  }
  if (!chosen) {
    std::string names;
    for (const KindCommand& kind : kind_commands())
      names += fmt::format("{}, ", kind.name);
    throw base::usage_error(
        fmt::format("a command is required: {}compare, serve, run, probe, hook-config or explain "
                    "(see rlcheck --help)",
                    names));
  }
  for (const auto& [sub, command] : commands) {
    if (sub->parsed())
      take_script_args(*sub, raw);
  }
  parsed.config = build_config(raw);
  parsed.config.command_line.assign(argv, argv + argc);
  return parsed;
}

}  // namespace rlcheck::cli

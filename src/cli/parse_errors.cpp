#include "cli/parse_errors.hpp"

#include "cli/kind_command.hpp"

#include <regex>
#include <vector>

#include <fmt/format.h>

namespace rlcheck::cli {
namespace {

// The parsed command (or the root when none was named) and its name as typed.
CLI::App& command_of(CLI::App& root) {
  const std::vector<CLI::App*> parsed = root.get_subcommands();
  return parsed.empty() ? root : *parsed.front();
}

std::string command_text(const CLI::App& app) {
  return app.get_parent() == nullptr ? "rlcheck" : "rlcheck " + app.get_name();
}

// The option `name` ("--limit", "-p", "URL") names in `app`, if any.
const CLI::Option* find_option(CLI::App& app, const std::string& name) {
  if (const CLI::Option* option = app.get_option_no_throw(name))
    return option;
  for (const CLI::Option* option : app.get_options()) {
    if (option->get_name() == name || option->check_name(name))
      return option;
  }
  return nullptr;
}

// How each command's positional argument is asked for.
std::string positional_usage(const CLI::App& app) {
  const std::string name = app.get_name();
  if (const KindCommand* kind = kind_command_named(name); kind && !kind->positional.empty()) {
    return fmt::format("the {}'s {} is required: rlcheck {} {} [options]", kind->noun,
                       kind->positional, kind->name, kind->positional);
  }
  if (name == "run")
    return "name scenario files or a folder of them: rlcheck run scenarios/";
  if (name == "hook-config")
    return "the check to run is required after --: rlcheck hook-config -- redis --strategy lua";
  return "an argument is required (see " + command_text(app) + " --help)";
}

std::string positionals_taken(CLI::App& app) {
  std::vector<std::string> names;
  for (const CLI::Option* option : app.get_options()) {
    if (option->get_positional())
      names.push_back(option->get_name());
  }
  if (names.empty())
    return "takes options only (they start with -)";
  std::string text = "takes one " + names.front();
  return text + " and options";
}

std::string extras_message(CLI::App& root, const std::string& words) {
  CLI::App& app = command_of(root);
  if (&app == &root) {
    return fmt::format(
        "{}: unexpected; start with a command (rlcheck redis, rlcheck http URL, "
        "...; see rlcheck --help)",
        words);
  }
  return fmt::format("{}: unexpected argument; {} {} (quote a value with spaces)", words,
                     command_text(app), positionals_taken(app));
}

}  // namespace

std::string expected_value(const std::string& type_name) {
  if (type_name == "INT" || type_name == "UINT")
    return "a whole number";
  if (type_name == "FLOAT")
    return "a number";
  if (type_name == "BOOLEAN")
    return "true or false (or no value)";
  return "a value";
}

std::string parse_error_message(CLI::App& root, const CLI::ParseError& error) {
  const std::string what = error.what();
  std::smatch match;
  CLI::App& app = command_of(root);
  // "--limit: At Most 1 required but received 2"
  static const std::regex at_most(R"(^(\S+): At Most (\d+) required but received (\d+))");
  if (std::regex_search(what, match, at_most)) {
    return fmt::format("{}: given {} times; give it once (the last one would not win)",
                       match[1].str(), match[3].str());
  }
  // "--concurrency: 1 required INT missing"
  static const std::regex missing(R"(^(\S+): \d+ required (\S+) missing)");
  if (std::regex_search(what, match, missing)) {
    const CLI::Option* option = find_option(app, match[1].str());
    const std::string name = option != nullptr ? option->get_name() : match[1].str();
    return fmt::format("{}: needs {} after it", name, expected_value(match[2].str()));
  }
  // "Could not convert: --concurrency = abc"
  static const std::regex convert(R"(^Could not convert: (\S+) = (.*)$)");
  if (std::regex_search(what, match, convert)) {
    const CLI::Option* option = find_option(app, match[1].str());
    const std::string type = option != nullptr ? option->get_type_name() : "";
    if (option != nullptr && option->get_expected_max() == 0) {
      return fmt::format("{}: a flag, it takes no value (got '{}')", option->get_name(),
                         match[2].str());
    }
    return fmt::format("{}: expected {}, got '{}'", match[1].str(), expected_value(type),
                       match[2].str());
  }
  // "The following argument was not expected: foo" (or "arguments were")
  static const std::regex extras(R"(^The following arguments? (?:was|were) not expected: (.*)$)");
  if (std::regex_search(what, match, extras))
    return extras_message(root, match[1].str());
  // "URL is required"
  static const std::regex required(R"(^(\S+) is required$)");
  if (std::regex_search(what, match, required)) {
    const CLI::Option* option = find_option(app, match[1].str());
    if (option != nullptr && option->get_positional())
      return fmt::format("{}: {}", command_text(app), positional_usage(app));
    return fmt::format("{}: required", match[1].str());
  }
  std::string line = what;
  for (char& c : line) {
    if (c == '\n')
      c = ' ';
  }
  return line;
}

}  // namespace rlcheck::cli

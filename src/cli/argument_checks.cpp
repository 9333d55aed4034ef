#include "cli/argument_checks.hpp"

#include <cctype>
#include <map>
#include <string_view>
#include <vector>

#include <fmt/format.h>

#include "base/exit_code.hpp"
#include "cli/command_line.hpp"
#include "cli/suggestion.hpp"

namespace rlcheck::cli {
namespace {

// "-q", "--html", "--concurency=10"; not "-1" or "-.5", which are negative numbers.
bool looks_like_flag(std::string_view word) {
  return word.size() >= 2 && word[0] == '-' && !std::isdigit(static_cast<unsigned char>(word[1])) &&
         word[1] != '.';
}

bool takes_value(const CLI::Option& option) {
  return option.get_expected_max() != 0 && option.get_type_size() != 0;
}

// Every spelling of every option of `app`: "-q" and "--quiet" both name --quiet.
std::map<std::string, const CLI::Option*> option_spellings(CLI::App& app) {
  std::map<std::string, const CLI::Option*> spellings;
  for (const CLI::Option* option : app.get_options()) {
    for (const std::string& name : option->get_lnames())
      spellings.emplace("--" + name, option);
    for (const std::string& name : option->get_snames())
      spellings.emplace("-" + name, option);
  }
  return spellings;
}

std::vector<std::string> long_names(CLI::App& app) {
  std::vector<std::string> names;
  for (const CLI::Option* option : app.get_options()) {
    for (const std::string& name : option->get_lnames())
      names.push_back(name);
  }
  return names;
}

CLI::App* subcommand_named(CLI::App& root, std::string_view name) {
  for (CLI::App* sub : root.get_subcommands([](CLI::App*) { return true; })) {
    if (sub->get_name() == name)
      return sub;
  }
  return nullptr;
}

std::string command_names(CLI::App& root) {
  std::vector<std::string> names;
  for (CLI::App* sub : root.get_subcommands([](CLI::App*) { return true; }))
    names.push_back(sub->get_name());
  std::string text;
  for (size_t i = 0; i < names.size(); ++i)
    text += (i == 0 ? "" : i + 1 == names.size() ? " or " : ", ") + names[i];
  return text;
}

std::string unknown_flag(CLI::App& root, CLI::App& app, const std::string& word) {
  const std::string flag = word.substr(0, word.find('='));
  const std::string_view typed = std::string_view(flag).substr(flag.starts_with("--") ? 2 : 1);
  const std::string command = app.get_parent() == nullptr ? "rlcheck" : "rlcheck " + app.get_name();
  // A real option of another command: say where it belongs rather than guess a neighbour.
  std::vector<std::string> owners;
  for (CLI::App* sub : root.get_subcommands([](CLI::App*) { return true; })) {
    if (sub != &app && sub->get_option_no_throw(flag) != nullptr)
      owners.push_back(sub->get_name());
  }
  if (!owners.empty() && flag.starts_with("--")) {
    return fmt::format("{}: not an option of {} (it is an option of rlcheck {})", flag, command,
                       owners.front());
  }
  // A single letter has no neighbours worth guessing; "-concurrency" does.
  const std::string suggestion = typed.size() > 1 ? did_you_mean(typed, long_names(app), "--") : "";
  return fmt::format("{}: unknown option of {}{}", flag, command, suggestion);
}

// The commands that have the option --`name`.
std::vector<std::string> owners_of(CLI::App& root, const std::string& name) {
  std::vector<std::string> owners;
  for (CLI::App* sub : root.get_subcommands([](CLI::App*) { return true; })) {
    if (sub->get_option_no_throw("--" + name) != nullptr)
      owners.push_back(sub->get_name());
  }
  return owners;
}

std::string unknown_command(CLI::App& root, const std::string& word) {
  std::vector<std::string> commands;
  std::vector<std::string> options;
  for (CLI::App* sub : root.get_subcommands([](CLI::App*) { return true; })) {
    commands.push_back(sub->get_name());
    for (const std::string& name : long_names(*sub))
      options.push_back(name);
  }
  const std::string suggestion = did_you_mean(word, commands);
  if (!suggestion.empty())
    return fmt::format("{}: unknown command{}", word, suggestion);
  // A flag typed as a command (`rlcheck find-max`): say which command takes it.
  if (const auto option = closest_name(word, options)) {
    const std::vector<std::string> owners = owners_of(root, *option);
    return fmt::format(
        "{}: unknown command; did you mean the option --{}? (rlcheck {} --{} ...; "
        "commands: {})",
        word, *option, owners.front(), *option, command_names(root));
  }
  return fmt::format("{}: unknown command; expected {}", word, command_names(root));
}

}  // namespace

void refuse_flags_as_values(CLI::App& root, int argc, const char* const* argv) {
  int first = 1;
  while (first < argc && looks_like_flag(argv[first]) && std::string_view(argv[first]) != "--")
    ++first;
  if (first >= argc)
    return;
  CLI::App* sub = subcommand_named(root, argv[first]);
  if (sub == nullptr)
    return;
  const auto spellings = option_spellings(*sub);
  for (int i = first + 1; i + 1 < argc; ++i) {
    const std::string_view word = argv[i];
    if (word == "--")
      return;
    const auto option = spellings.find(std::string(word));
    if (option == spellings.end() || !takes_value(*option->second))
      continue;
    const std::string value = argv[i + 1];
    if (spellings.contains(value)) {
      const std::string name = option->second->get_name();
      throw base::usage_error(fmt::format("{}: expected {}, got the flag {}", name,
                                          names_a_file(name.substr(2)) ? "a file name" : "a value",
                                          value));
    }
    ++i;  // the value, whatever it looks like
  }
}

std::optional<std::string> explain_leftover(CLI::App& root) {
  // No command recognised: the first word is the command that was meant.
  if (root.get_subcommands().empty()) {
    for (const std::string& word : root.remaining()) {
      if (!looks_like_flag(word))
        return unknown_command(root, word);
    }
  }
  std::vector<CLI::App*> apps = root.get_subcommands();  // the parsed ones
  apps.push_back(&root);
  for (CLI::App* app : apps) {
    for (const std::string& word : app->remaining()) {
      if (looks_like_flag(word))
        return unknown_flag(root, *app, word);
    }
  }
  return std::nullopt;
}

}  // namespace rlcheck::cli

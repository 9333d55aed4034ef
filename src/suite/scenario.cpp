#include "suite/scenario.hpp"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <optional>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "cli/command_line.hpp"
#include "cli/kind_command.hpp"
#include "cli/suggestion.hpp"

namespace rlcheck::suite {
namespace {

using nlohmann::json;

// Keys that belong to `rlcheck run`, not to one scenario.
bool is_output_key(const std::string& key) {
  return key == "json" || key == "report" || key == "junit" || key == "junit-skipped" ||
         key == "summary-md" || key == "html" || key == "hook" || key == "quiet" || key == "color";
}

std::expected<std::vector<std::string>, std::string> values_of(const std::string& key,
                                                               const json& value) {
  if (value.is_string())
    return std::vector<std::string>{value.get<std::string>()};
  if (value.is_number_integer())
    return std::vector<std::string>{std::to_string(value.get<int64_t>())};
  if (value.is_number())
    return std::vector<std::string>{value.dump()};
  if (value.is_array()) {
    std::vector<std::string> all;
    for (const json& item : value) {
      auto one = values_of(key, item);
      if (!one || item.is_array())
        return std::unexpected(fmt::format("key '{}': a list of lists", key));
      all.insert(all.end(), one->begin(), one->end());
    }
    return all;
  }
  return std::unexpected(fmt::format("key '{}' needs a string, a number or a list", key));
}

// Paths in a scenario are relative to the scenario file's folder, not to where rlcheck runs, so
// a scenario and the script beside it move together.
std::string relative_to(const std::filesystem::path& folder, const std::string& path) {
  if (path.empty() || folder.empty() || std::filesystem::path(path).is_absolute())
    return path;
  return (folder / path).string();
}

std::string resolved_value(const std::filesystem::path& folder, const std::string& key,
                           const std::string& value) {
  if (cli::names_a_file(key))
    return relative_to(folder, value);
  if (key == "data" && value.starts_with('@'))
    return fmt::format("@{}", relative_to(folder, value.substr(1)));
  return value;
}

// "unknown key 'reqests'; did you mean 'requests'?": the CLI's own option names (and the
// scenario's keys) are the candidates; output options belong to rlcheck run and are not offered.
std::string unknown_key(const std::string& subcommand, const std::string& shown,
                        const std::string& key) {
  std::vector<std::string> candidates;
  for (std::string& name : cli::option_names(subcommand)) {
    if (!is_output_key(name) && name != "help" && name != "listen")
      candidates.push_back(std::move(name));
  }
  if (subcommand != "serve") {
    candidates.insert(candidates.end(), {"name", "mode", "expect", "description"});
    if (const cli::KindCommand* kind = cli::kind_command_named(subcommand);
        kind != nullptr && !kind->positional.empty())
      candidates.insert(candidates.end(), {"url", "serve"});
  }
  const auto match = cli::closest_name(key, candidates);
  const std::string prefix = shown.substr(0, shown.size() - key.size());  // "serve." or ""
  return match ? fmt::format("unknown key '{}'; did you mean '{}{}'?", shown, prefix, *match)
               : fmt::format("unknown key '{}'", shown);
}

// Appends --key [value...] for one JSON key of `subcommand`'s options; `shown` names it in
// errors ("serve.strategy"). Relative paths are resolved against `folder`.
std::expected<void, std::string> append_option(const std::string& subcommand,
                                               const std::string& shown, std::string key,
                                               const json& value,
                                               const std::filesystem::path& folder,
                                               std::vector<std::string>& argv) {
  std::replace(key.begin(), key.end(), '_', '-');
  const cli::OptionKind kind = cli::option_kind(subcommand, key);
  if (kind == cli::OptionKind::none)
    return std::unexpected(unknown_key(subcommand, shown, key));
  if (kind == cli::OptionKind::flag) {
    if (!value.is_boolean())
      return std::unexpected(fmt::format("key '{}' is true or false", shown));
    if (value.get<bool>())
      argv.push_back("--" + key);
    return {};
  }
  auto values = values_of(shown, value);
  if (!values)
    return std::unexpected(values.error());
  for (const std::string& one : *values) {
    argv.push_back("--" + key);
    argv.push_back(resolved_value(folder, key, one));
  }
  return {};
}

// A string key of the file: `fallback` when absent, nothing when it holds another type.
std::optional<std::string> text_key(const json& doc, const char* key, std::string fallback) {
  if (!doc.contains(key))
    return fallback;
  if (!doc[key].is_string())
    return std::nullopt;
  return doc[key].get<std::string>();
}

// Every problem of the file, one per line, so that one `rlcheck run` lists them all.
std::expected<Scenario, std::vector<std::string>> scenario_from(const std::string& path,
                                                                const json& doc) {
  Scenario scenario;
  scenario.file = path;
  if (!doc.is_object())
    return std::unexpected(std::vector<std::string>{"not a JSON object"});
  const std::optional<std::string> mode_text = text_key(doc, "mode", "redis");
  if (!mode_text)
    return std::unexpected(std::vector<std::string>{"key 'mode' needs a string"});
  const std::string mode = *mode_text;
  const cli::KindCommand* kind = cli::kind_command_named(mode);
  if (kind == nullptr && mode != "compare") {
    std::string modes;
    for (const cli::KindCommand& each : cli::kind_commands())
      modes += fmt::format("{}, ", each.name);
    return std::unexpected(
        std::vector<std::string>{fmt::format("mode '{}': expected {}or compare", mode, modes)});
  }
  // A kind whose command takes the target's address first: the scenario's "url"; one served
  // over HTTP may start `rlcheck serve` for it ("serve").
  const bool addressed = kind != nullptr && !kind->positional.empty();
  const bool servable = addressed && std::find(kind->schemes.begin(), kind->schemes.end(),
                                               "http") != kind->schemes.end();
  const std::filesystem::path folder = std::filesystem::path(path).parent_path();
  std::vector<std::string> problems;
  const std::optional<std::string> name = text_key(doc, "name", std::filesystem::path(path).stem());
  if (!name)
    problems.push_back("key 'name' needs a string");
  scenario.name = name.value_or(std::filesystem::path(path).stem());
  const std::optional<std::string> expect_text = text_key(doc, "expect", "pass");
  const std::string expect = expect_text.value_or("");
  if (!expect_text)
    problems.push_back("key 'expect' needs a string: pass or fail");
  else if (expect != "pass" && expect != "fail")
    problems.push_back(fmt::format("expect '{}': expected pass or fail", expect));
  scenario.expect_pass = expect == "pass";
  scenario.argv = {"rlcheck", mode};
  if (addressed) {
    if (doc.contains("url") && doc["url"].is_string()) {
      scenario.argv.push_back(doc["url"].get<std::string>());
    } else {
      problems.push_back(
          fmt::format("mode {} needs \"url\": the {}'s {}", mode, kind->noun, kind->positional));
    }
  }
  auto note = [&problems](const std::expected<void, std::string>& added) {
    if (!added)
      problems.push_back(added.error());
  };
  for (const auto& [raw_key, value] : doc.items()) {
    if (raw_key == "name" || raw_key == "mode" || raw_key == "expect" || raw_key == "description" ||
        (raw_key == "url" && addressed)) {
      continue;
    }
    if (raw_key == "serve" && servable) {
      if (!value.is_object()) {
        problems.push_back("key 'serve' needs an object of serve options");
        continue;
      }
      std::vector<std::string> serve_args;
      for (const auto& [serve_key, serve_value] : value.items()) {
        if (serve_key == "listen") {
          problems.push_back("key 'serve.listen': the port is chosen free");
          continue;
        }
        note(append_option("serve", "serve." + serve_key, serve_key, serve_value, folder,
                           serve_args));
      }
      scenario.serve_args = std::move(serve_args);
      continue;
    }
    if (is_output_key(raw_key)) {
      problems.push_back(
          fmt::format("key '{}' is an output option of rlcheck run, not of a scenario", raw_key));
      continue;
    }
    if (raw_key == "records") {
      problems.push_back(
          "key 'records' is not for scenarios: run the command itself with --records");
      continue;
    }
    note(append_option(mode, raw_key, raw_key, value, folder, scenario.argv));
  }
  if (!problems.empty())
    return std::unexpected(std::move(problems));
  return scenario;
}

}  // namespace

std::expected<Scenario, std::string> load_scenario(const std::string& path) {
  std::ifstream in(path);
  if (!in)
    return std::unexpected(fmt::format("{}: cannot read", path));
  const json doc = json::parse(in, nullptr, false);
  if (doc.is_discarded())
    return std::unexpected(fmt::format("{}: not valid JSON", path));
  auto scenario = scenario_from(path, doc);
  if (!scenario) {
    std::string lines;
    for (const std::string& problem : scenario.error())
      lines += fmt::format("{}{}: {}", lines.empty() ? "" : "\n", path, problem);
    return std::unexpected(lines);
  }
  return std::move(*scenario);
}

std::expected<std::vector<std::string>, std::string> scenario_files(
    const std::vector<std::string>& paths) {
  std::vector<std::string> files;
  for (const std::string& path : paths) {
    std::error_code error;
    if (std::filesystem::is_directory(path, error)) {
      std::vector<std::string> found;
      for (const auto& entry : std::filesystem::directory_iterator(path, error)) {
        if (entry.is_regular_file() && entry.path().extension() == ".json") {
          found.push_back(entry.path().string());
        }
      }
      std::sort(found.begin(), found.end());
      if (found.empty())
        return std::unexpected(fmt::format("{}: no *.json scenario in it", path));
      files.insert(files.end(), found.begin(), found.end());
    } else if (std::filesystem::is_regular_file(path, error)) {
      files.push_back(path);
    } else {
      return std::unexpected(fmt::format("{}: no such file or folder", path));
    }
  }
  return files;
}

}  // namespace rlcheck::suite

#include "app/scenario.hpp"

#include <algorithm>
#include <filesystem>
#include <fstream>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "cli/command_line.hpp"

namespace rlcheck::app {
namespace {

using nlohmann::json;

// Keys that belong to `rlcheck run`, not to one scenario.
bool is_output_key(const std::string& key) {
  return key == "json" || key == "report" || key == "junit" || key == "html" || key == "hook" ||
         key == "quiet" || key == "color";
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

// Appends --key [value...] for one JSON key of `subcommand`'s options; `shown` names it in
// errors ("serve.strategy").
std::expected<void, std::string> append_option(const std::string& subcommand,
                                               const std::string& shown, std::string key,
                                               const json& value, std::vector<std::string>& argv) {
  std::replace(key.begin(), key.end(), '_', '-');
  const cli::OptionKind kind = cli::option_kind(subcommand, key);
  if (kind == cli::OptionKind::none)
    return std::unexpected(fmt::format("unknown key '{}'", shown));
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
    argv.push_back(one);
  }
  return {};
}

std::expected<Scenario, std::string> scenario_from(const std::string& path, const json& doc) {
  Scenario scenario;
  scenario.file = path;
  if (!doc.is_object())
    return std::unexpected("not a JSON object");
  const std::string mode = doc.value("mode", "redis");
  if (mode != "redis" && mode != "http" && mode != "compare") {
    return std::unexpected(fmt::format("mode '{}': expected redis, http or compare", mode));
  }
  scenario.name = doc.value("name", std::filesystem::path(path).stem().string());
  const std::string expect = doc.value("expect", "pass");
  if (expect != "pass" && expect != "fail") {
    return std::unexpected(fmt::format("expect '{}': expected pass or fail", expect));
  }
  scenario.expect_pass = expect == "pass";
  scenario.argv = {"rlcheck", mode};
  if (mode == "http") {
    if (!doc.contains("url") || !doc["url"].is_string()) {
      return std::unexpected("an http scenario needs \"url\"");
    }
    scenario.argv.push_back(doc["url"].get<std::string>());
  }
  for (const auto& [raw_key, value] : doc.items()) {
    if (raw_key == "name" || raw_key == "mode" || raw_key == "expect" || raw_key == "description" ||
        (raw_key == "url" && mode == "http")) {
      continue;
    }
    if (raw_key == "serve" && mode == "http") {
      if (!value.is_object())
        return std::unexpected("key 'serve' needs an object of serve options");
      std::vector<std::string> serve_args;
      for (const auto& [serve_key, serve_value] : value.items()) {
        if (serve_key == "listen")
          return std::unexpected("key 'serve.listen': the port is chosen free");
        auto added =
            append_option("serve", "serve." + serve_key, serve_key, serve_value, serve_args);
        if (!added)
          return std::unexpected(added.error());
      }
      scenario.serve_args = std::move(serve_args);
      continue;
    }
    if (is_output_key(raw_key)) {
      return std::unexpected(
          fmt::format("key '{}' is an output option of rlcheck run, not of a scenario", raw_key));
    }
    if (raw_key == "records") {
      return std::unexpected(
          "key 'records' is not for scenarios: run the command itself with --records");
    }
    auto added = append_option(mode, raw_key, raw_key, value, scenario.argv);
    if (!added)
      return std::unexpected(added.error());
  }
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
  if (!scenario)
    return std::unexpected(fmt::format("{}: {}", path, scenario.error()));
  return scenario;
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

}  // namespace rlcheck::app

#include "app/delivery.hpp"

#include <algorithm>
#include <iostream>
#include <stdexcept>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "base/exit_code.hpp"
#include "report/report_file.hpp"

namespace rlcheck::app {
namespace {

// The path `output` gives the report file of `flag`; empty when it names none.
const std::string& report_path_of(std::string_view flag, const config::OutputConfig& output) {
  static const std::string none;
  if (flag == "--report")
    return output.report_path;
  if (flag == "--junit")
    return output.junit_path;
  if (flag == "--html")
    return output.html_path;
  if (flag == "--summary-md")
    return output.summary_md_path;
  return none;
}

}  // namespace

std::string delivery_to_json(const Delivery& delivery) {
  nlohmann::json json;
  json["exit_code"] = delivery.exit_code;
  json["stdout"] = delivery.out;
  json["stderr"] = delivery.err;
  json["files"] = nlohmann::json::array();
  for (const ReportFile& file : delivery.files)
    json["files"].push_back(
        {{"flag", file.flag}, {"path", file.path}, {"text", file.text}, {"append", file.append}});
  return json.dump();
}

std::expected<Delivery, std::string> delivery_from_json(std::string_view text) {
  try {
    const nlohmann::json json = nlohmann::json::parse(text);
    Delivery delivery;
    if (!json.at("exit_code").is_number_integer())
      throw std::invalid_argument("an exit code that is not a whole number");
    delivery.exit_code = json.at("exit_code").get<int>();
    delivery.out = json.at("stdout").get<std::string>();
    delivery.err = json.at("stderr").get<std::string>();
    for (const nlohmann::json& file : json.at("files")) {
      delivery.files.push_back({file.at("flag").get<std::string>(),
                                file.at("path").get<std::string>(),
                                file.at("text").get<std::string>(), file.value("append", false)});
    }
    return delivery;
  } catch (const std::exception& error) {
    return std::unexpected(fmt::format("a published report rlcheck cannot read: {}", error.what()));
  }
}

std::expected<Delivery, std::string> addressed_to(Delivery published,
                                                  const config::OutputConfig& output) {
  if (published.files.empty())
    return published;
  for (ReportFile& file : published.files) {
    file.path = report_path_of(file.flag, output);
    file.append = file.flag == "--summary-md" && output.summary_md_append;
  }
  for (const char* flag : {"--report", "--junit", "--html", "--summary-md"}) {
    const bool held = std::ranges::any_of(
        published.files, [flag](const ReportFile& file) { return file.flag == flag; });
    if (!held && !report_path_of(flag, output).empty())
      return std::unexpected(fmt::format("{}: the published report holds no such file", flag));
  }
  return published;
}

int emit(const Delivery& delivery) {
  for (const ReportFile& file : delivery.files) {
    if (file.path.empty())
      continue;
    auto written = file.append ? report::append_to_file(file.path, file.text)
                               : report::write_whole_file(file.path, file.text);
    if (!written)
      throw base::cannot_test(fmt::format("{}: {}", file.flag, written.error()));
  }
  std::cerr << delivery.err;
  std::cout << delivery.out;
  std::cout.flush();
  return delivery.exit_code;
}

}  // namespace rlcheck::app

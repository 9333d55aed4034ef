#include "app/delivery.hpp"

#include <iostream>
#include <stdexcept>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "base/exit_code.hpp"
#include "report/report_file.hpp"

namespace rlcheck::app {

std::string delivery_to_json(const Delivery& delivery) {
  nlohmann::json json;
  json["exit_code"] = delivery.exit_code;
  json["stdout"] = delivery.out;
  json["stderr"] = delivery.err;
  json["files"] = nlohmann::json::array();
  for (const ReportFile& file : delivery.files)
    json["files"].push_back({{"flag", file.flag}, {"path", file.path}, {"text", file.text}});
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
                                file.at("text").get<std::string>()});
    }
    return delivery;
  } catch (const std::exception& error) {
    return std::unexpected(fmt::format("a published report rlcheck cannot read: {}", error.what()));
  }
}

int emit(const Delivery& delivery) {
  for (const ReportFile& file : delivery.files) {
    if (auto written = report::write_whole_file(file.path, file.text); !written)
      throw base::cannot_test(fmt::format("{}: {}", file.flag, written.error()));
  }
  std::cerr << delivery.err;
  std::cout << delivery.out;
  std::cout.flush();
  return delivery.exit_code;
}

}  // namespace rlcheck::app

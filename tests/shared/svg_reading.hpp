#pragma once
// Reading the --html report's SVG in tests (unit and integration alike): a page's first
// timeline, and the y of each point of one of its polylines.

#include <doctest/doctest.h>

#include <regex>
#include <string>
#include <vector>

namespace rlcheck::testing {

// The first `<svg class="timeline"` of `html`, whole.
inline std::string first_timeline(const std::string& html) {
  const size_t start = html.find("<svg class=\"timeline\"");
  REQUIRE(start != std::string::npos);
  return html.substr(start, html.find("</svg>", start) - start);
}

// The y of every point of the polyline of class `name` (the sent rate's is "offered-rate").
inline std::vector<double> polyline_ys(const std::string& svg, const std::string& name) {
  std::smatch match;
  const std::regex line("<polyline class=\"" + name + "\"[^>]* points=\"([^\"]*)\"");
  REQUIRE_MESSAGE(std::regex_search(svg, match, line), "no polyline." << name);
  const std::string points = match[1].str();
  std::vector<double> ys;
  const std::regex point(R"((-?[0-9.]+),(-?[0-9.]+))");
  for (auto it = std::sregex_iterator(points.begin(), points.end(), point);
       it != std::sregex_iterator(); ++it) {
    ys.push_back(std::stod((*it)[2].str()));
  }
  return ys;
}

}  // namespace rlcheck::testing

#pragma once
// Reading the --html report's SVG in tests (unit and integration alike): a page's first
// timeline, and the y of each point of one of its polylines.

#include <doctest/doctest.h>

#include <sstream>
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
// Read with find, not std::regex: libstdc++'s regex recurses once per character a repetition
// takes, and a long points attribute overflows the stack (under AddressSanitizer at once).
inline std::vector<double> polyline_ys(const std::string& svg, const std::string& name) {
  const size_t line = svg.find("<polyline class=\"" + name + "\"");
  REQUIRE_MESSAGE(line != std::string::npos, "no polyline." << name);
  const size_t end = svg.find('>', line);
  const std::string attribute = " points=\"";
  const size_t start = svg.find(attribute, line);
  REQUIRE_MESSAGE((start != std::string::npos && start < end), "no points in polyline." << name);
  const size_t from = start + attribute.size();
  std::istringstream points(svg.substr(from, svg.find('"', from) - from));
  std::vector<double> ys;
  std::string point;
  while (points >> point) {
    const size_t comma = point.find(',');
    REQUIRE_MESSAGE(comma != std::string::npos, "a point without a comma: " << point);
    ys.push_back(std::stod(point.substr(comma + 1)));
  }
  return ys;
}

// The value of attribute `name` of the first element of class `element_class` (a path's "d"),
// read with find as above.
inline std::string attribute_of(const std::string& svg, const std::string& element_class,
                                const std::string& name) {
  const size_t element = svg.find("class=\"" + element_class + "\"");
  REQUIRE_MESSAGE(element != std::string::npos, "no element of class " << element_class);
  const std::string attribute = " " + name + "=\"";
  const size_t start = svg.find(attribute, element);
  REQUIRE_MESSAGE((start != std::string::npos && start < svg.find('>', element)),
                  "no " << name << " in the element of class " << element_class);
  const size_t from = start + attribute.size();
  return svg.substr(from, svg.find('"', from) - from);
}

}  // namespace rlcheck::testing

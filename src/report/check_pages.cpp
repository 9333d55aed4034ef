#include "report/check_pages.hpp"

namespace rlcheck::report {

extern const std::string_view k_checks_page;

namespace {

// "## `limit`" -> "limit"; anything else (other headings, text) -> nothing.
std::optional<std::string> heading_id(std::string_view line) {
  constexpr std::string_view prefix = "## `";
  if (!line.starts_with(prefix) || !line.ends_with('`') || line.size() <= prefix.size() + 1)
    return std::nullopt;
  return std::string(line.substr(prefix.size(), line.size() - prefix.size() - 1));
}

// The first non-empty line of a section's body.
std::string first_line(std::string_view body) {
  size_t start = 0;
  while (start < body.size()) {
    size_t end = body.find('\n', start);
    if (end == std::string_view::npos)
      end = body.size();
    std::string_view line = body.substr(start, end - start);
    if (!line.empty())
      return std::string(line);
    start = end + 1;
  }
  return "";
}

}  // namespace

std::vector<CheckPage> check_pages(std::string_view markdown) {
  std::vector<CheckPage> pages;
  CheckPage* open = nullptr;
  size_t start = 0;
  while (start < markdown.size()) {
    size_t end = markdown.find('\n', start);
    if (end == std::string_view::npos)
      end = markdown.size();
    const std::string_view line = markdown.substr(start, end - start);
    const bool heading = line.starts_with("## ");
    if (heading) {
      open = nullptr;
      if (auto id = heading_id(line)) {
        pages.push_back({*id, "", ""});
        open = &pages.back();
      }
    }
    if (open != nullptr) {
      open->text.append(line);
      open->text.push_back('\n');
    }
    start = end + 1;
  }
  for (CheckPage& page : pages) {
    const size_t body = page.text.find('\n');
    page.summary = first_line(std::string_view(page.text).substr(body + 1));
    while (page.text.ends_with("\n\n"))
      page.text.pop_back();
  }
  return pages;
}

std::string_view checks_page() {
  return k_checks_page;
}

std::optional<CheckPage> check_page(std::string_view id) {
  for (CheckPage& page : check_pages(k_checks_page)) {
    if (page.id == id)
      return std::move(page);
  }
  return std::nullopt;
}

}  // namespace rlcheck::report

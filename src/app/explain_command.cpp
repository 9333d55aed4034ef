#include "app/explain_command.hpp"

#include <algorithm>

#include <fmt/format.h>

#include "base/exit_code.hpp"
#include "cli/suggestion.hpp"
#include "report/check_pages.hpp"

namespace rlcheck::app {

std::string explain_text(const std::string& check_id) {
  const std::vector<report::CheckPage> pages = report::check_pages(report::checks_page());
  if (check_id.empty()) {
    size_t width = 0;
    for (const report::CheckPage& page : pages)
      width = std::max(width, page.id.size());
    std::string text = "Checks (rlcheck explain CHECK_ID for one's page):\n";
    for (const report::CheckPage& page : pages)
      text += fmt::format("  {:<{}}  {}\n", page.id, width, page.summary);
    return text;
  }
  const auto found = std::find_if(pages.begin(), pages.end(), [&](const report::CheckPage& page) {
    return page.id == check_id;
  });
  if (found != pages.end())
    return found->text;
  std::vector<std::string> ids;
  for (const report::CheckPage& page : pages)
    ids.push_back(page.id);
  throw base::usage_error(
      fmt::format("explain: no check named '{}'{}; `rlcheck explain` lists them", check_id,
                  cli::did_you_mean(check_id, ids)));
}

}  // namespace rlcheck::app

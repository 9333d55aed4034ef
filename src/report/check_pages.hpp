#pragma once
// docs/checks.md, compiled in: a section per check id (`## \`ID\``, a one-line summary, then
// what it proves, the evidence behind a fail, causes and fixes, the flags that change it).
// `rlcheck explain` prints them offline; the human report points a failing check at its page.

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace rlcheck::report {

struct CheckPage {
  std::string id;
  std::string summary;  // the line after the heading
  std::string text;     // the section, heading included, up to the next `## ` heading
};

// The pages of `markdown`, in its order: every `## \`ID\`` section.
std::vector<CheckPage> check_pages(std::string_view markdown);

// The compiled-in docs/checks.md.
std::string_view checks_page();

// The page of `id` in the compiled-in docs, if it has one.
std::optional<CheckPage> check_page(std::string_view id);

}  // namespace rlcheck::report

// compare --script: a team's own limiters side by side under the same load, named by file in
// every report.

#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

#include <unistd.h>

#include <nlohmann/json.hpp>

#include "support/json_outcome.hpp"
#include "support/run_binary.hpp"
#include "support/test_redis.hpp"

using namespace rlcheck::testing;
using nlohmann::json;

namespace {

std::string read_text(const std::filesystem::path& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

// A path as Markdown text shows it (its punctuation escaped).
std::string in_markdown(const std::string& text) {
  std::string out;
  for (const char c : text) {
    if (std::string_view("\\`*_[]<>|~&").find(c) != std::string_view::npos)
      out += '\\';
    out += c;
  }
  return out;
}

}  // namespace

TEST_CASE("compare --script: a broken script and a correct one, one fail and one pass") {
  const std::filesystem::path dir =
      std::filesystem::temp_directory_path() / ("rlcheck_compare_" + std::to_string(getpid()));
  std::filesystem::create_directories(dir);
  const std::string broken = fixture("off_by_one.lua");
  const std::string correct = std::string(RLCHECK_SOURCE_DIR) + "/lua/sliding_window.lua";
  const std::string junit = (dir / "compare.xml").string();
  const std::string html = (dir / "compare.html").string();
  const std::string summary = (dir / "summary.md").string();
  const std::vector<std::string> args{"compare",  "--redis",     TestRedis::shared().tcp_url(),
                                      "--script", broken,        "--arg",
                                      "{limit}",  "--arg",       "{window_ms}",
                                      "--arg",    "{uuid}",      "--script",
                                      correct,    "--arg",       "{limit}",
                                      "--arg",    "{window_ms}", "--arg",
                                      "{uuid}",   "-n",          "100",
                                      "-p",       "20",          "-r",
                                      "2",        "--junit",     junit,
                                      "--html",   html,          "--summary-md",
                                      summary};

  // The terminal table: a row per script, named by its file, with its own verdict.
  const ProcessOutcome table = run_rlcheck(args);
  INFO("stdout: " << table.out << "\nstderr: " << table.err);
  CHECK(table.exit_code == 1);
  bool broken_row = false, correct_row = false;
  for (const std::string& line : lines_of(table.out)) {
    if (line.starts_with(broken))
      broken_row =
          line.find(" fail ") != std::string::npos && line.find("limit") != std::string::npos;
    if (line.starts_with(correct))
      correct_row = line.find(" pass ") != std::string::npos;
  }
  CHECK(broken_row);
  CHECK(correct_row);

  // JSON: a report per script, each with its script and verdict.
  std::vector<std::string> json_args = args;
  json_args.push_back("--json");
  const json reports = json_report(json_args, 1);
  REQUIRE(reports["reports"].size() == 2);
  CHECK(reports["reports"][0]["target"]["script"] == broken);
  CHECK(reports["reports"][0]["verdict"] == "fail");
  CHECK(check_status(reports["reports"][0], "limit") == "fail");
  CHECK(reports["reports"][1]["target"]["script"] == correct);
  CHECK(reports["reports"][1]["verdict"] == "pass");
  CHECK(reports["verdict"] == "fail");

  // JUnit and HTML name both.
  const std::string xml = read_text(junit);
  CHECK(xml.find("rlcheck redis " + broken) != std::string::npos);
  CHECK(xml.find("rlcheck redis " + correct) != std::string::npos);
  // HTML: the side-by-side table has a row per script, with its verdict.
  const std::string page = read_text(html);
  CHECK(page.find("<tr class=\"target fail\"><td class=\"name\">" + broken) != std::string::npos);
  CHECK(page.find("<tr class=\"target pass\"><td class=\"name\">" + correct) != std::string::npos);
  // The Markdown summary: a section per script, the broken one's failure explained.
  const std::string markdown = read_text(summary);
  CHECK(markdown.find("### ❌ " + in_markdown(broken) + ": FAIL") != std::string::npos);
  CHECK(markdown.find("### ✅ " + in_markdown(correct) + ": PASS") != std::string::npos);
  CHECK(markdown.find("`rlcheck explain limit`") != std::string::npos);
  std::filesystem::remove_all(dir);
}

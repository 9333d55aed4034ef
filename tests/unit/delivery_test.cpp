#include <doctest/doctest.h>

#include <string>

#include "app/delivery.hpp"

using rlcheck::app::addressed_to;
using rlcheck::app::Delivery;
using rlcheck::app::delivery_from_json;
using rlcheck::app::delivery_to_json;

namespace {

// What worker 0 publishes: every kind, at worker 0's own paths (--html not given there).
Delivery published() {
  Delivery delivery;
  delivery.files = {{"--report", "sub/r0.json", "{}\n"},
                    {"--junit", "", "<testsuites/>"},
                    {"--html", "", "<html/>"}};
  delivery.out = "report\n";
  delivery.exit_code = 1;
  return delivery;
}

}  // namespace

TEST_CASE("delivery: a published report travels whole") {
  const auto read = delivery_from_json(delivery_to_json(published()));
  REQUIRE(read);
  REQUIRE(read->files.size() == 3);
  CHECK(read->files[0].path == "sub/r0.json");
  CHECK(read->files[2].text == "<html/>");
  CHECK(read->out == "report\n");
  CHECK(read->exit_code == 1);
}

TEST_CASE("delivery: each worker writes the published files at its own paths") {
  rlcheck::config::OutputConfig own;
  own.report_path = "own/r1.json";
  own.html_path = "own/r1.html";
  const auto addressed = addressed_to(published(), own);
  REQUIRE(addressed);
  REQUIRE(addressed->files.size() == 3);
  CHECK(addressed->files[0].path == "own/r1.json");
  CHECK(addressed->files[0].text == "{}\n");
  CHECK(addressed->files[1].path.empty());  // no --junit here: not written
  CHECK(addressed->files[2].path == "own/r1.html");
  CHECK(addressed->out == "report\n");
  CHECK(addressed->exit_code == 1);
}

TEST_CASE("delivery: a report the published delivery lacks is named; none at all is no error") {
  Delivery partial = published();
  partial.files.pop_back();
  rlcheck::config::OutputConfig own;
  own.html_path = "r1.html";
  const auto addressed = addressed_to(partial, own);
  REQUIRE_FALSE(addressed);
  CHECK(addressed.error().starts_with("--html: "));

  Delivery failed;  // worker 0 could not finish: no files, its reason and exit code
  failed.err = "rlcheck: cannot reach\n";
  failed.exit_code = 3;
  const auto passed_on = addressed_to(failed, own);
  REQUIRE(passed_on);
  CHECK(passed_on->files.empty());
  CHECK(passed_on->exit_code == 3);
}

TEST_CASE("delivery: --summary-md travels, and auto appends to this worker's job summary") {
  Delivery delivery = published();
  delivery.files.push_back({"--summary-md", "", "## ✅ rlcheck redis: PASS\n", false});
  const auto read = delivery_from_json(delivery_to_json(delivery));
  REQUIRE(read);
  REQUIRE(read->files.size() == 4);
  rlcheck::config::OutputConfig own;
  own.summary_md_path = "/github/step_summary";
  own.summary_md_append = true;
  const auto addressed = addressed_to(*read, own);
  REQUIRE(addressed);
  CHECK(addressed->files[3].path == "/github/step_summary");
  CHECK(addressed->files[3].append);
  CHECK_FALSE(addressed->files[0].append);
  own.summary_md_path.clear();  // auto without $GITHUB_STEP_SUMMARY: not written here
  CHECK(addressed_to(*read, own)->files[3].path.empty());
}

// --html as a person sees it: the real binary writes the page, headless Chromium renders it,
// and the screenshot's pixels must show the timeline's colours (Debian's chromium and
// imagemagick; scripts/install-deps.sh installs both).

#include <doctest/doctest.h>

#include <array>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
#include <sstream>
#include <tuple>
#include <utility>
#include <vector>

#include <unistd.h>

#include <fmt/format.h>

#include "checks/contract_audit.hpp"
#include "checks/fault_checks.hpp"
#include "checks/timeline.hpp"
#include "report/html_report.hpp"
#include "shared/svg_reading.hpp"
#include "support/run_binary.hpp"
#include "support/test_redis.hpp"

using namespace rlcheck::testing;

namespace {

constexpr const char* k_chromium = "/usr/bin/chromium";
constexpr const char* k_convert = "/usr/bin/convert";  // ImageMagick's, not a stand-in on PATH

using Rgb = std::tuple<int, int, int>;

RunOptions bounded(int seconds) {
  RunOptions options;
  options.limit = std::chrono::seconds(seconds);
  return options;
}

// Pixel counts by colour, from `convert FILE -format %c histogram:info:-`, whose lines read
// "  12345: (255,222,166) #FFDEA6 srgb(255,222,166)" (an alpha value may follow the blue).
std::map<Rgb, long> colour_histogram(const std::string& png) {
  const ProcessOutcome outcome =
      run_process({k_convert, png, "-format", "%c", "histogram:info:-"}, bounded(60));
  REQUIRE_MESSAGE(outcome.exit_code == 0, "convert failed: " << outcome.err);
  std::map<Rgb, long> counts;
  const std::regex line(R"(^\s*(\d+):\s*\(\s*(\d+),\s*(\d+),\s*(\d+))");
  for (const std::string& text : lines_of(outcome.out)) {
    std::smatch match;
    if (std::regex_search(text, match, line)) {
      counts[{std::stoi(match[2]), std::stoi(match[3]), std::stoi(match[4])}] +=
          std::stol(match[1]);
    }
  }
  return counts;
}

// Pixels within `tolerance` of `colour` on every channel.
long pixels_near(const std::map<Rgb, long>& counts, Rgb colour, int tolerance) {
  long total = 0;
  for (const auto& [rgb, count] : counts) {
    if (std::abs(std::get<0>(rgb) - std::get<0>(colour)) <= tolerance &&
        std::abs(std::get<1>(rgb) - std::get<1>(colour)) <= tolerance &&
        std::abs(std::get<2>(rgb) - std::get<2>(colour)) <= tolerance) {
      total += count;
    }
  }
  return total;
}

// `colour` at opacity `alpha` over white, as the browser composes it.
Rgb over_white(Rgb colour, double alpha) {
  auto blend = [alpha](int channel) {
    return static_cast<int>(std::lround(255 * (1 - alpha) + channel * alpha));
  };
  return {blend(std::get<0>(colour)), blend(std::get<1>(colour)), blend(std::get<2>(colour))};
}

// Headless Chromium renders `html` into `png` (1000 x 1400 px); `dir` holds its profile.
void screenshot(const std::string& html, const std::string& png, const std::filesystem::path& dir) {
  const ProcessOutcome browser = run_process(
      {k_chromium, "--headless", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
       "--disable-background-networking", "--no-first-run", "--disable-extensions",
       "--hide-scrollbars", "--user-data-dir=" + (dir / "profile").string(),
       "--window-size=1000,1400", "--screenshot=" + png, "file://" + html},
      bounded(90));
  INFO("chromium stderr: " << browser.err);  // mostly noise, shown only on failure
  REQUIRE_FALSE(browser.timed_out);
  REQUIRE_MESSAGE(std::filesystem::exists(png), "chromium wrote no screenshot");
}

std::string read_text(const std::filesystem::path& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

// A text of the chart and the box it takes: 0.62 of its font size per character wide (about
// DejaVu Sans' average advance), 0.8 of it above the baseline and 0.2 below; a text turned a
// quarter about (x, y) takes the same box turned.
struct TextBox {
  std::string text;
  double left, top, right, bottom;
};

std::vector<TextBox> text_boxes(const std::string& svg) {
  std::vector<TextBox> out;
  const std::regex element(R"(<text ([^>]*)>([^<]*)</text>)");
  for (auto it = std::sregex_iterator(svg.begin(), svg.end(), element);
       it != std::sregex_iterator(); ++it) {
    const std::string attributes = (*it)[1].str();
    std::string text = (*it)[2].str();
    for (const auto& [entity, c] :
         {std::pair{"&lt;", "<"}, {"&gt;", ">"}, {"&quot;", "\""}, {"&amp;", "&"}}) {
      for (size_t at; (at = text.find(entity)) != std::string::npos;)
        text.replace(at, std::string(entity).size(), c);
    }
    const auto attribute = [&attributes](const std::string& name) {
      std::smatch match;
      REQUIRE_MESSAGE(
          std::regex_search(attributes, match, std::regex("(^| )" + name + "=\"(-?[0-9.]+)\"")),
          "no " << name << " in " << attributes);
      return std::stod(match[2].str());
    };
    const double size = attributes.find("font-size=") != std::string::npos ? attribute("font-size")
                                                                           : 11;  // the svg's
    long characters = 0;
    for (const char c : text)
      characters += (static_cast<unsigned char>(c) & 0xC0) != 0x80;
    const double width = 0.62 * size * static_cast<double>(characters);
    std::smatch turned;
    if (std::regex_search(
            attributes, turned,
            std::regex(R"(translate\((-?[0-9.]+) (-?[0-9.]+)\) rotate\((-?\d+)\))"))) {
      const double x = std::stod(turned[1].str()), y = std::stod(turned[2].str());
      const bool upwards = std::stoi(turned[3].str()) < 0;
      out.push_back({text, upwards ? x - 0.8 * size : x - 0.2 * size, y - width / 2,
                     upwards ? x + 0.2 * size : x + 0.8 * size, y + width / 2});
      continue;
    }
    const double x = attribute("x"), y = attribute("y");
    const double left = attributes.find("text-anchor=\"end\"") != std::string::npos ? x - width
                        : attributes.find("text-anchor=\"middle\"") != std::string::npos
                            ? x - width / 2
                            : x;
    out.push_back({text, left, y - 0.8 * size, left + width, y + 0.2 * size});
  }
  return out;
}

}  // namespace

TEST_CASE("--html: a screenshot of the page shows the timeline, denials and the worst span") {
  REQUIRE_MESSAGE(access(k_chromium, X_OK) == 0, "chromium is not installed ("
                                                     << k_chromium
                                                     << "): run scripts/install-deps.sh, which "
                                                        "installs Debian's chromium package");
  REQUIRE_MESSAGE(access(k_convert, X_OK) == 0, "ImageMagick is not installed ("
                                                    << k_convert
                                                    << "): run scripts/install-deps.sh, which "
                                                       "installs Debian's imagemagick package");

  const std::filesystem::path dir =
      std::filesystem::temp_directory_path() / ("rlcheck-html-test-" + std::to_string(getpid()));
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  const std::string html = (dir / "report.html").string();
  const std::string png = (dir / "report.png").string();
  INFO("files in " << dir.string());

  // A fixed window lets twice its limit through across a boundary: the sliding contract fails.
  const ProcessOutcome check = run_rlcheck({"redis",
                                            "--redis",
                                            TestRedis::shared().tcp_url() + "/4",
                                            "--strategy",
                                            "fixed-window",
                                            "--limit",
                                            "10",
                                            "--window",
                                            "1s",
                                            "--rate",
                                            "40/s",
                                            "--duration",
                                            "3s",
                                            "--contract",
                                            "sliding",
                                            "--start-before-boundary",
                                            "500ms",
                                            "-r",
                                            "1",
                                            "--color",
                                            "never",
                                            "--html",
                                            html});
  INFO("rlcheck stdout: " << check.out << "\nrlcheck stderr: " << check.err);
  CHECK(check.exit_code == 1);
  const std::string page = read_text(html);
  REQUIRE(page.find("<svg class=\"timeline\" id=\"run-1-identity-0\"") != std::string::npos);
  CHECK(page.find("<rect class=\"worst-span\"") != std::string::npos);
  CHECK(page.find("<script") == std::string::npos);

  // A uniform 40/s draws its sent rate flat: every point of the line at the same height. On the
  // virtual clock every request leaves exactly when due, so the line owes nothing to how
  // loaded this machine is (a send a whole bin late would rightly show as a dip).
  const std::string virtual_html = (dir / "virtual.html").string();
  const ProcessOutcome uniform =
      run_rlcheck({"redis",
                   "--redis",
                   TestRedis::shared().tcp_url() + "/4",
                   "--script",
                   std::string(RLCHECK_SOURCE_DIR) + "/examples/limiter_now.lua",
                   "--arg",
                   "{limit}",
                   "--arg",
                   "{window_ms}",
                   "--arg",
                   "{now_ms}",
                   "--arg",
                   "{uuid}",
                   "--limit",
                   "10",
                   "--window",
                   "1s",
                   "--rate",
                   "40/s",
                   "--duration",
                   "3s",
                   "--virtual-clock",
                   "-r",
                   "1",
                   "--html",
                   virtual_html});
  INFO("virtual clock: " << uniform.out << uniform.err);
  CHECK(uniform.exit_code == 0);
  const std::vector<double> sent =
      polyline_ys(first_timeline(read_text(virtual_html)), "offered-rate");
  INFO("sent-rate points: " << sent.size());
  REQUIRE(sent.size() >= 20);
  for (const double y : sent)
    CHECK(y == sent.front());
  const std::string svg = first_timeline(page);
  // No two texts of the chart over each other, the contract's label and the scales included.
  const std::vector<TextBox> texts = text_boxes(svg);
  CHECK(texts.size() >= 15);
  bool contract = false;
  for (size_t i = 0; i < texts.size(); ++i) {
    contract = contract || texts[i].text.starts_with("contract (sliding): 10 per 1s");
    for (size_t j = i + 1; j < texts.size(); ++j) {
      const TextBox& a = texts[i];
      const TextBox& b = texts[j];
      CHECK_MESSAGE(!(a.left < b.right && b.left < a.right && a.top < b.bottom && b.top < a.bottom),
                    "\"" << a.text << "\" overlaps \"" << b.text << "\"");
    }
  }
  CHECK(contract);
  // The rate's scale has 4 to 6 ticks.
  long rate_ticks = 0;
  for (const TextBox& text : texts)
    rate_ticks += std::regex_match(text.text, std::regex(R"(\d+/s)"));
  CHECK(rate_ticks >= 4);
  CHECK(rate_ticks <= 6);

  screenshot(html, png, dir);

  const std::map<Rgb, long> colours = colour_histogram(png);
  long all = 0;
  for (const auto& [rgb, count] : colours)
    all += count;
  CHECK(all == 1000L * 1400L);
  const long allowed = pixels_near(colours, {0x2e, 0x7d, 0x32}, 6);
  const long denied = pixels_near(colours, {0xc6, 0x28, 0x28}, 6);
  const long worst_span = pixels_near(colours, over_white({255, 160, 0}, 0.35), 4);
  INFO("allowed green " << allowed << ", denied red " << denied << ", worst-span orange "
                        << worst_span);
  // About 40 admissions and 80 denials, bars 2 px wide and up to 44 px tall; a span of about
  // a second of three, 150 px tall. The legend's swatches are far below these counts.
  CHECK(allowed > 1000);
  CHECK(denied > 2000);
  CHECK(worst_span > 10000);

  std::filesystem::remove_all(dir);
}

namespace {

// Where the pixels near `colour` lie, as {x, y, width, height}: those within 7 % on every
// channel, minus specks smaller than 13 px either way (legend swatches, anti-aliased edges).
std::array<int, 4> region_of(const std::string& png, Rgb colour) {
  const std::string rgb =
      fmt::format("rgb({},{},{})", std::get<0>(colour), std::get<1>(colour), std::get<2>(colour));
  const ProcessOutcome outcome = run_process(
      {k_convert, png,       "-fuzz",       "7%",    "-fill",    "#ff00ff", "-opaque", rgb,
       "-fuzz",   "0",       "-fill",       "black", "+opaque",  "#ff00ff", "-fill",   "white",
       "-opaque", "#ff00ff", "-morphology", "Open",  "Square:6", "-format", "%@",      "info:"},
      bounded(60));
  REQUIRE_MESSAGE(outcome.exit_code == 0, "convert failed: " << outcome.err);
  std::smatch match;
  const std::regex box(R"((\d+)x(\d+)\+(\d+)\+(\d+))");
  REQUIRE_MESSAGE(std::regex_search(outcome.out, match, box), "no region: " << outcome.out);
  return {std::stoi(match[3]), std::stoi(match[4]), std::stoi(match[1]), std::stoi(match[2])};
}

// One identity over 4 s: 20 admissions in the first second against a sliding limit of 10 (the
// worst span), denials after; a pause from 2 s to 3 s. As summarize_run and the checks fill it.
rlcheck::report::Report faulted_report() {
  using rlcheck::engine::Outcome;
  constexpr int64_t ms = 1'000'000;
  std::vector<rlcheck::engine::RequestRecord> records;
  for (int64_t t = 0; t < 4000; t += 50) {
    rlcheck::engine::RequestRecord record;
    record.seq = records.size();
    record.sent_ns = t * ms;
    record.replied_ns = t * ms + ms / 2;
    record.outcome = t < 1000 ? Outcome::allowed : Outcome::denied;
    records.push_back(record);
  }
  rlcheck::checks::AdmissionRule rule;
  rule.limit = 10;
  rule.window_ns = 1000 * ms;
  const auto identities = rlcheck::checks::split_by_identity(records, 1);
  rlcheck::checks::RunStats run;
  run.run = 1;
  run.requests = static_cast<int64_t>(records.size());
  run.duration_ms = 4000;
  run.contract = rlcheck::checks::audit_contract(identities, rule);
  run.peak = run.contract.worst;
  run.timeline =
      rlcheck::checks::build_timeline(identities, rule, 4000 * ms, run.contract.worst_identity);
  rlcheck::checks::FaultWindow pause;
  pause.spec = "pause@2s+1s";
  pause.at_ns = 2000 * ms;
  pause.until_ns = 3000 * ms;
  pause.applied = true;
  run.faults = {pause};
  rlcheck::checks::measure_faults(run.faults, records);

  rlcheck::report::Report report;
  report.target.url = "redis://127.0.0.1:6379";
  report.target.strategy = "fixed-window";
  report.params.limit = 10;
  report.params.window_ms = 1000;
  report.params.runs = 1;
  report.params.rate = "20/s";
  report.params.duration_ms = 4000;
  report.params.contract = "sliding";
  report.runs.push_back(run);
  return report;
}

}  // namespace

TEST_CASE("--html with --fault: a screenshot shows the fault's band where the fault was") {
  REQUIRE(access(k_chromium, X_OK) == 0);
  REQUIRE(access(k_convert, X_OK) == 0);
  const std::filesystem::path dir =
      std::filesystem::temp_directory_path() / ("rlcheck-fault-html-" + std::to_string(getpid()));
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  const std::string html = (dir / "report.html").string();
  const std::string png = (dir / "report.png").string();
  INFO("files in " << dir.string());
  const rlcheck::report::Report report = faulted_report();
  std::ofstream(html) << rlcheck::report::render_html({report});
  screenshot(html, png, dir);

  // The band over white and the worst span over white, each a region of the screenshot.
  const std::map<Rgb, long> colours = colour_histogram(png);
  const Rgb band = over_white({0, 137, 123}, 0.22);
  INFO("fault teal " << pixels_near(colours, band, 4));
  CHECK(pixels_near(colours, band, 4) > 10000);
  const std::array<int, 4> fault = region_of(png, band);
  const std::array<int, 4> span = region_of(png, over_white({255, 160, 0}, 0.35));
  INFO("fault at x " << fault[0] << " width " << fault[2] << ", span at x " << span[0] << " width "
                     << span[2]);
  // The plot is 788 px for the run's 4 s: the fault is a quarter of it, 2 s after the span's
  // start. Both start at the plot's top and reach at least the baseline (106 px; the bars
  // below it cut the bands into slivers that do not count as a region).
  const auto& run = report.runs.front();
  const double px_per_ns = 788.0 / static_cast<double>(run.timeline->duration_ns);
  CHECK(std::abs(fault[2] - 197) <= 4);
  CHECK(std::abs(fault[1] - span[1]) <= 2);
  CHECK(fault[3] >= 100);
  CHECK(span[3] >= 100);
  const double expected_dx =
      static_cast<double>(run.faults[0].at_ns - run.contract.worst.start_ns) * px_per_ns;
  CHECK(std::abs(static_cast<double>(fault[0] - span[0]) - expected_dx) <= 4);

  std::filesystem::remove_all(dir);
}

TEST_CASE("compare --html: the strategies side by side in a table at the top, a row each") {
  const std::filesystem::path dir =
      std::filesystem::temp_directory_path() / ("rlcheck-compare-html-" + std::to_string(getpid()));
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  const std::string html = (dir / "compare.html").string();
  const ProcessOutcome compare = run_rlcheck({"compare",
                                              "--redis",
                                              TestRedis::shared().tcp_url() + "/4",
                                              "--strategies",
                                              "fixed-window,sliding-window",
                                              "--limit",
                                              "10",
                                              "--window",
                                              "1s",
                                              "--rate",
                                              "40/s",
                                              "--duration",
                                              "1s",
                                              "--contract",
                                              "sliding",
                                              "--start-before-boundary",
                                              "500ms",
                                              "-r",
                                              "1",
                                              "--color",
                                              "never",
                                              "--html",
                                              html});
  INFO("rlcheck stdout: " << compare.out << "\nrlcheck stderr: " << compare.err);
  CHECK(compare.exit_code == 1);  // the fixed window lets twice its limit through
  const std::string page = read_text(html);
  const size_t table = page.find("<table class=\"compare\">");
  REQUIRE(table != std::string::npos);
  CHECK(table < page.find("<section class=\"report\" id=\"report-1\""));
  const std::string rows = page.substr(table, page.find("</table>", table) - table);
  const std::regex row(R"re(<tr class="target (\w+)"><td class="name">([^<]*)</td>)re");
  std::vector<std::pair<std::string, std::string>> targets;
  for (auto it = std::sregex_iterator(rows.begin(), rows.end(), row); it != std::sregex_iterator();
       ++it) {
    targets.emplace_back((*it)[2].str(), (*it)[1].str());
  }
  CHECK(targets == std::vector<std::pair<std::string, std::string>>{{"fixed-window", "fail"},
                                                                    {"sliding-window", "pass"}});
  // Its failed checks are the terminal table's: the last column of the strategy's line.
  std::string terminal;
  for (const std::string& line : lines_of(compare.out)) {
    if (line.starts_with("fixed-window "))
      terminal = line.substr(line.find_last_of(' ') + 1);
  }
  CHECK(terminal.find("contract") != std::string::npos);
  std::smatch failed;
  REQUIRE(std::regex_search(
      rows, failed, std::regex(R"re(fixed-window</td>.*?<td class="failed">([^<]*)</td>)re")));
  CHECK(std::regex_replace(failed[1].str(), std::regex(", "), ",") == terminal);
  std::filesystem::remove_all(dir);
}

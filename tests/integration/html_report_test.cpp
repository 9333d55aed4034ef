// --html as a person sees it: the real binary writes the page, headless Chromium renders it,
// and the screenshot's pixels must show the timeline's colours (Debian's chromium and
// imagemagick; scripts/install-deps.sh installs both).

#include <doctest/doctest.h>

#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
#include <sstream>
#include <tuple>

#include <unistd.h>

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

std::string read_text(const std::filesystem::path& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
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

  const ProcessOutcome browser = run_process(
      {k_chromium, "--headless", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
       "--disable-background-networking", "--no-first-run", "--disable-extensions",
       "--hide-scrollbars", "--user-data-dir=" + (dir / "profile").string(),
       "--window-size=1000,1400", "--screenshot=" + png, "file://" + html},
      bounded(90));
  INFO("chromium stderr: " << browser.err);  // mostly noise, shown only on failure
  REQUIRE_FALSE(browser.timed_out);
  REQUIRE_MESSAGE(std::filesystem::exists(png), "chromium wrote no screenshot");

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

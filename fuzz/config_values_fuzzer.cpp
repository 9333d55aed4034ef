// Fuzzes the command line's value parsers: durations, rates, --fault specs, --reply and
// --strategy names, --source-address lists. The first byte picks the parser; a duration or rate
// that parses must format back to text that parses to the same value (to the parser's double
// precision: 1 part in 10^12); a source address list that parses must hold between 1 and the
// cap addresses, and parse again, joined by commas, to the same list; a --clock-skew list that
// parses must hold between 1 and the cap offsets, and parse again from its formatted text to
// the same offsets (to the duration parser's precision); an --identity-dist that parses has its
// parameter in range and parses again from its formatted text to the same value, exactly; a
// --stages list that parses must hold between 1 and the cap stages, plan a count without
// trapping, and parse again from its formatted text to as many stages of the same durations;
// an --slo list parses again to the same percentiles and bounds; a listen address that parses
// must format back to text that parses to the same address.
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "config/clock_skew.hpp"
#include "config/duration.hpp"
#include "config/fault_spec.hpp"
#include "config/identity_dist.hpp"
#include "config/listen_address.hpp"
#include "config/rate.hpp"
#include "config/reply_format.hpp"
#include "config/slo.hpp"
#include "config/source_addresses.hpp"
#include "config/stages.hpp"
#include "config/strategy_name.hpp"

using namespace rlcheck::config;

namespace {

bool same(Nanos a, Nanos b) {
  const double difference = std::abs(static_cast<double>(a.count() - b.count()));
  return difference <= 1 + 1e-12 * static_cast<double>(a.count());
}

void check_source_addresses(std::string_view text) {
  auto addresses = parse_source_addresses(text);
  if (!addresses)
    return;
  if (addresses->empty() || addresses->size() > k_max_source_addresses)
    __builtin_trap();
  std::string joined;
  for (const std::string& address : *addresses)
    joined += (joined.empty() ? "" : ",") + address;
  auto again = parse_source_addresses(joined);
  if (!again || *again != *addresses)
    __builtin_trap();
}

void check_clock_skews(std::string_view text) {
  auto skews = parse_clock_skews(text);
  if (!skews)
    return;
  if (skews->empty() || skews->size() > k_max_clock_skews)
    __builtin_trap();
  auto again = parse_clock_skews(format_clock_skews(*skews));
  if (!again || again->size() != skews->size())
    __builtin_trap();
  for (size_t i = 0; i < skews->size(); ++i) {
    const Nanos a = (*skews)[i] < Nanos(0) ? -(*skews)[i] : (*skews)[i];
    const Nanos b = (*again)[i] < Nanos(0) ? -(*again)[i] : (*again)[i];
    if (((*skews)[i] < Nanos(0)) != ((*again)[i] < Nanos(0)) || !same(a, b))
      __builtin_trap();
  }
}

void check_stages(std::string_view text) {
  auto stages = parse_stages(text);
  if (!stages)
    return;
  if (stages->empty() || stages->size() > k_max_stages)
    __builtin_trap();
  (void)planned_requests(*stages);
  auto again = parse_stages(format_stages(*stages));
  if (!again || again->size() != stages->size())
    __builtin_trap();
  for (size_t i = 0; i < stages->size(); ++i) {
    if (!same((*again)[i].duration, (*stages)[i].duration))
      __builtin_trap();
  }
}

void check_identity_dist(std::string_view text) {
  auto dist = parse_identity_dist(text);
  if (!dist)
    return;
  const bool in_range =
      dist->shape == IdentityShape::uniform ||
      (dist->shape == IdentityShape::zipf && dist->parameter > 0 &&
       dist->parameter <= k_max_zipf_exponent) ||
      (dist->shape == IdentityShape::hot && dist->parameter > 0 && dist->parameter < 1);
  if (!in_range)
    __builtin_trap();
  auto again = parse_identity_dist(format_identity_dist(*dist));
  if (!again || *again != *dist)
    __builtin_trap();
}

void check_slo(std::string_view text) {
  auto slo = parse_slo(text);
  if (!slo)
    return;
  if (slo->empty())
    __builtin_trap();
  auto again = parse_slo(format_slo(*slo));
  if (!again || again->size() != slo->size())
    __builtin_trap();
  for (size_t i = 0; i < slo->size(); ++i) {
    const SloBound& a = (*slo)[i];
    if (a.percentile <= 0 || a.percentile >= 100 || a.bound.count() <= 0)
      __builtin_trap();
    if ((*again)[i].percentile != a.percentile || !same((*again)[i].bound, a.bound))
      __builtin_trap();
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0)
    return 0;
  const std::string_view text(reinterpret_cast<const char*>(data) + 1, size - 1);
  switch (data[0] % 10) {
    case 0:
      if (auto duration = parse_duration(text); duration) {
        auto again = parse_duration(format_duration(*duration));
        if (!again || !same(*again, *duration))
          __builtin_trap();
      }
      break;
    case 1:
      if (auto rate = parse_rate(text); rate) {
        auto again = parse_rate(format_rate(*rate));
        if (!again || again->tokens != rate->tokens || !same(again->period, rate->period))
          __builtin_trap();
      }
      break;
    case 2:
      if (auto fault = parse_fault(text); fault)
        (void)fault_kind_name(fault->kind);
      break;
    case 4:
      check_source_addresses(text);
      break;
    case 5:
      check_clock_skews(text);
      break;
    case 6:
      check_identity_dist(text);
      break;
    case 7:
      check_slo(text);
      break;
    case 8:
      check_stages(text);
      break;
    case 9:
      if (auto address = parse_listen_address(text); address) {
        auto again = parse_listen_address(format_listen_address(*address));
        if (!again || *again != *address)
          __builtin_trap();
      }
      break;
    default:
      if (auto format = parse_reply_format(text); format)
        (void)reply_format_name(*format);
      if (auto strategy = parse_strategy(text); strategy)
        (void)strategy_name(*strategy);
      break;
  }
  return 0;
}

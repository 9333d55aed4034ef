#pragma once
// The groups of options the commands share, each bound to RawOptions: a target kind's command
// (targets/) adds the groups it takes, as the other commands do.

#include <optional>
#include <string>

#include <CLI/CLI.hpp>

#include "cli/raw_options.hpp"

namespace rlcheck::cli {

// Every placeholder a template expands (engine/placeholder_template.hpp): --arg, and the URL,
// headers and body of a request.
extern const char* const k_placeholders;

template <typename T>
void optional_option(CLI::App* app, const std::string& names, std::optional<T>& target,
                     const std::string& help) {
  app->add_option_function<T>(
      names, [&target](const T& value) { target = value; }, help);
}

// Whose defaults the load options' help names: a target whose limit and window are configured,
// one that advertises them in its replies (one run by default), or compare.
enum class LoadCommand { configured, advertised, compare };

// What every load command takes: the load and its checks, what it reports, where it sends from.
void add_load_options(CLI::App* command, RawOptions& raw, LoadCommand kind);
void add_output_options(CLI::App* app, RawOptions& raw);
// redis and compare: the unit a limiter's retry hints are judged in.
void add_hint_resolution_option(CLI::App* app, RawOptions& raw);
// Many hosts: one test shared by N copies of the command line (worker_options.cpp checks them).
void add_worker_options(CLI::App* app, RawOptions& raw);
void add_observe_options(CLI::App* app, RawOptions& raw);
void add_source_address_option(CLI::App* app, RawOptions& raw);
void add_redis_options(CLI::App* app, RawOptions& raw);
void add_http_options(CLI::App* app, RawOptions& raw);
void add_tls_options(CLI::App* app, RawOptions& raw);
void add_cluster_options(CLI::App* app, RawOptions& raw);
void add_pipeline_option(CLI::App* app, RawOptions& raw);
// Faults during every run; `behind`: the limiter's Redis is behind the target (--limiter-redis).
void add_fault_options(CLI::App* app, RawOptions& raw, bool behind);
// How far client clocks are off, and (`time_source`) where a built-in reads the time.
void add_clock_options(CLI::App* app, RawOptions& raw, bool time_source);
void add_serve_options(CLI::App* serve, RawOptions& raw);
void add_probe_options(CLI::App* probe, RawOptions& raw);
// How a command reaches a Redis limiter: cluster, pipeline, TLS, faults, clocks.
void add_redis_connection_options(CLI::App* command, RawOptions& raw);

}  // namespace rlcheck::cli

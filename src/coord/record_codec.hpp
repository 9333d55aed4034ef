#pragma once
// How a worker's records travel to the worker that merges them (many hosts): a compact binary
// form, about 12 bytes a request, that gives back exactly the RequestRecords written (the
// instants moved by a shift onto the session's common start). Decoding is outside input: a
// malformed or truncated chunk is an error naming what was wrong, never a crash.

#include <cstdint>
#include <expected>
#include <string>
#include <string_view>

#include "engine/record_log.hpp"

namespace rlcheck::coord {

// Records [begin, end) of `records`, with `shift_ns` added to their send and reply instants.
std::string encode_records(engine::RecordView records, size_t begin, size_t end, int64_t shift_ns);

// Appends the records of one encoded chunk to `into`.
std::expected<void, std::string> decode_records(std::string_view bytes, engine::RecordLog& into);

}  // namespace rlcheck::coord

// Fuzzes what a worker reads back from the coordinator (many hosts): another worker's chunk of
// records and its run summary. Whatever the bytes, decoding either fails with a message or
// gives records that encode back to a chunk that decodes to the same records.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "coord/record_codec.hpp"
#include "coord/run_shipment.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view bytes(reinterpret_cast<const char*>(data), size);
  (void)rlcheck::coord::shipment_from_json(bytes);
  rlcheck::engine::RecordLog records;
  if (!rlcheck::coord::decode_records(bytes, records))
    return 0;
  const std::string again = rlcheck::coord::encode_records(records, 0, records.size(), 0);
  rlcheck::engine::RecordLog round_trip;
  if (!rlcheck::coord::decode_records(again, round_trip) || round_trip.size() != records.size())
    __builtin_trap();
  for (size_t i = 0; i < records.size(); ++i) {
    if (round_trip[i].seq != records[i].seq || round_trip[i].sent_ns != records[i].sent_ns ||
        round_trip[i].retry_ms != records[i].retry_ms)
      __builtin_trap();
  }
  return 0;
}

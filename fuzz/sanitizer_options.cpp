// Sanitizer defaults linked into every fuzz target (fuzz/CMakeLists.txt), so a replay under
// ctest behaves as scripts/fuzz.sh does.
//
// One allocation above 1 GB fails (returns null) as it would on a machine without that much
// memory, instead of stopping the fuzzer: a Redis server may announce a billion-element array,
// hiredis' reader then asks for 8 GB of element pointers, and a null from malloc becomes its
// "Out of memory" protocol error, the error rlcheck reports for that connection. Memory
// actually used stays bounded by libFuzzer's -rss_limit_mb.
extern "C" const char* __asan_default_options() {
  return "allocator_may_return_null=1:max_allocation_size_mb=1024";
}

extern "C" const char* __ubsan_default_options() {
  return "halt_on_error=1:print_stacktrace=1";
}

// Shared by the fuzz targets: a property check that aborts (a "crash" to libFuzzer and to the replay runner)
// with a message, so a broken invariant is found and kept like a memory error.
#pragma once

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>

#define FUZZ_CHECK(cond, msg)                                                                  \
  do {                                                                                         \
    if (!(cond)) {                                                                             \
      std::fprintf(stderr, "FUZZ_CHECK failed at %s:%d: %s\n  %s\n", __FILE__, __LINE__, #cond, \
                   std::string(msg).c_str());                                                  \
      std::abort();                                                                            \
    }                                                                                          \
  } while (0)

// Each target defines this (libFuzzer's entry point); fuzz/replay_main.cpp calls it where libFuzzer is absent.
extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size);

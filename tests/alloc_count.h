// Counting heap allocations in a test: the unit-test binary replaces the global operator new
// (tests/telemetry/no_alloc_test.cpp) with one that counts, on the calling thread, between
// these two calls.
#pragma once

namespace reveal::testing {
void start_counting_allocations();
long stop_counting_allocations();  // allocations since start_counting_allocations()
}  // namespace reveal::testing

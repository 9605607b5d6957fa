#include <doctest/doctest.h>

#include "flockbridge/sim/line_faults.hpp"

using namespace flockbridge;
using protocol::Bytes;

TEST_CASE("a clean line passes every byte unchanged") {
  sim::LineFaults line({}, 1);
  Bytes in(1000);
  for (std::size_t i = 0; i < in.size(); ++i) in[i] = static_cast<protocol::Byte>(i);
  Bytes out;
  CHECK_FALSE(line.apply(in, out));
  CHECK(out == in);
}

TEST_CASE("the bit-error rate is what was asked, and the same seed gives the same errors") {
  const Bytes in(200000, 0x55);
  sim::LineFaults line({.bit_error_rate = 1e-3}, 7);
  Bytes out;
  CHECK(line.apply(in, out));
  REQUIRE(out.size() == in.size());
  std::size_t flipped = 0;
  for (std::size_t i = 0; i < in.size(); ++i) flipped += static_cast<std::size_t>(__builtin_popcount(in[i] ^ out[i]));
  CHECK(flipped == line.counters().bits_flipped);
  // 1.6 million bits at 1e-3: 1600 expected; a binomial's spread is about 40.
  CHECK(flipped > 1400);
  CHECK(flipped < 1800);
  sim::LineFaults again({.bit_error_rate = 1e-3}, 7);
  Bytes out_again;
  again.apply(in, out_again);
  CHECK(out_again == out);
}

TEST_CASE("dropped and duplicated bytes") {
  const Bytes in(100000, 0xAA);
  sim::LineFaults dropping({.drop_rate = 0.01}, 3);
  Bytes out;
  dropping.apply(in, out);
  CHECK(out.size() == in.size() - dropping.counters().bytes_dropped);
  CHECK(dropping.counters().bytes_dropped > 800);
  CHECK(dropping.counters().bytes_dropped < 1200);
  sim::LineFaults doubling({.duplicate_rate = 0.01}, 3);
  Bytes twice;
  doubling.apply(in, twice);
  CHECK(twice.size() == in.size() + doubling.counters().bytes_duplicated);
  CHECK(doubling.counters().bytes_duplicated > 800);
}

// Noise on a serial line, one direction: flipped bits at a bit-error rate,
// dropped bytes and duplicated bytes, each at its own rate. Pure: the caller
// passes the bytes and gets the damaged ones; a seeded generator makes a run
// repeatable.
#pragma once

#include <cstdint>
#include <random>

#include "flockbridge/protocol/bytes.hpp"

namespace flockbridge::sim {

struct LineFaultSettings {
  double bit_error_rate = 0;  ///< probability that each bit is flipped
  double drop_rate = 0;       ///< probability that each byte is lost
  double duplicate_rate = 0;  ///< probability that each byte arrives twice

  [[nodiscard]] bool any() const noexcept { return bit_error_rate > 0 || drop_rate > 0 || duplicate_rate > 0; }
};

struct LineFaultCounters {
  std::uint64_t bytes = 0;
  std::uint64_t bits_flipped = 0;
  std::uint64_t bytes_dropped = 0;
  std::uint64_t bytes_duplicated = 0;
};

class LineFaults {
 public:
  LineFaults(LineFaultSettings settings, std::uint32_t seed);

  /// Appends `bytes`, as the far end receives them, to `out`. Returns true
  /// when anything was damaged.
  bool apply(protocol::ByteView bytes, protocol::Bytes& out);

  [[nodiscard]] const LineFaultSettings& settings() const noexcept { return settings_; }
  [[nodiscard]] const LineFaultCounters& counters() const noexcept { return counters_; }

 private:
  /// Bits until the next flipped one (geometric), so that a low rate costs
  /// one random draw per error, not one per bit.
  std::uint64_t next_gap();

  LineFaultSettings settings_;
  std::mt19937_64 random_;
  std::uint64_t bits_to_next_error_ = 0;
  LineFaultCounters counters_;
};

}  // namespace flockbridge::sim

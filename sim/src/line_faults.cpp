#include "flockbridge/sim/line_faults.hpp"

#include <limits>

namespace flockbridge::sim {

LineFaults::LineFaults(LineFaultSettings settings, std::uint32_t seed) : settings_(settings), random_(seed) {
  bits_to_next_error_ = next_gap();
}

std::uint64_t LineFaults::next_gap() {
  if (settings_.bit_error_rate <= 0) return std::numeric_limits<std::uint64_t>::max();
  if (settings_.bit_error_rate >= 1) return 0;
  std::geometric_distribution<std::uint64_t> gap(settings_.bit_error_rate);
  return gap(random_);
}

bool LineFaults::apply(protocol::ByteView bytes, protocol::Bytes& out) {
  std::bernoulli_distribution drop(settings_.drop_rate);
  std::bernoulli_distribution duplicate(settings_.duplicate_rate);
  bool damaged = false;
  for (protocol::Byte byte : bytes) {
    ++counters_.bytes;
    for (int bit = 0; bit < 8; ++bit) {
      if (bits_to_next_error_ == 0) {
        byte ^= static_cast<protocol::Byte>(1U << bit);
        ++counters_.bits_flipped;
        damaged = true;
        bits_to_next_error_ = next_gap();
      } else {
        --bits_to_next_error_;
      }
    }
    if (settings_.drop_rate > 0 && drop(random_)) {
      ++counters_.bytes_dropped;
      damaged = true;
      continue;
    }
    out.push_back(byte);
    if (settings_.duplicate_rate > 0 && duplicate(random_)) {
      ++counters_.bytes_duplicated;
      damaged = true;
      out.push_back(byte);
    }
  }
  return damaged;
}

}  // namespace flockbridge::sim

// A token bucket: on average `per_second` events, with bursts of `burst`.
// Time is passed in.
#pragma once

#include <algorithm>
#include <chrono>

#include "flockbridge/protocol/message_decoder.hpp"

namespace flockbridge::bridge {

class RateLimiter {
 public:
  RateLimiter(double per_second, double burst) : rate_(per_second), burst_(std::max(burst, 1.0)), tokens_(burst_) {}

  /// Takes one token if there is one.
  [[nodiscard]] bool allow(protocol::SteadyTime now) noexcept {
    if (started_) {
      const double elapsed = std::chrono::duration<double>(now - last_).count();
      tokens_ = std::min(burst_, tokens_ + std::max(elapsed, 0.0) * rate_);
    }
    started_ = true;
    last_ = now;
    if (tokens_ < 1.0) return false;
    tokens_ -= 1.0;
    return true;
  }

 private:
  double rate_;
  double burst_;
  double tokens_;
  bool started_ = false;
  protocol::SteadyTime last_{};
};

}  // namespace flockbridge::bridge

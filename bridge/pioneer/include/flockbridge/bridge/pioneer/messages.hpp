// A SIP as clients get it: on port 8101 the packet as the robot sent it, in
// JSON the Pioneer's JSON form (protocol/pioneer/json).
#pragma once

#include <cstdint>
#include <string>

#include "flockbridge/bridge/driver.hpp"
#include "flockbridge/protocol/pioneer/json.hpp"

namespace flockbridge::bridge::pioneer {

using protocol::pioneer::SipSnapshot;

class SipMessage final : public RobotMessage {
 public:
  explicit SipMessage(SipSnapshot snapshot) : snapshot_(std::move(snapshot)) {}
  [[nodiscard]] bool is_sensor() const noexcept override { return true; }
  [[nodiscard]] SharedBuffer encode(Encoding encoding, std::uint64_t seq, double unix_seconds) const override {
    if (encoding == Encoding::Json) return make_buffer(protocol::pioneer::sip_json(snapshot_, seq, unix_seconds));
    // Port 8101: the SIP as the robot sent it.
    return make_buffer(std::string(snapshot_.packet.begin(), snapshot_.packet.end()));
  }
  [[nodiscard]] const SipSnapshot& snapshot() const noexcept { return snapshot_; }

 private:
  SipSnapshot snapshot_;
};

}  // namespace flockbridge::bridge::pioneer

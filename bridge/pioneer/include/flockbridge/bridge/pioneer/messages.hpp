// A SIP as clients get it.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <span>

#include "flockbridge/bridge/driver.hpp"
#include "flockbridge/protocol/pioneer/models.hpp"
#include "flockbridge/protocol/pioneer/sip.hpp"
#include "flockbridge/protocol/json_codec.hpp"

namespace flockbridge::bridge::pioneer {

/// One SIP with what the driver knew when it came.
struct SipSnapshot {
  protocol::pioneer::StandardSip sip;
  protocol::Bytes packet;                             ///< the whole packet, as it came
  std::optional<protocol::pioneer::SipReading> reading;  ///< none while the model is not known
  protocol::pioneer::Pose pose;
  std::span<const protocol::pioneer::SonarPose> sonar_layout;  ///< the model's discs (a static table)
  protocol::RobotState state;                               ///< the common robot model's fields
  std::shared_ptr<const protocol::json::RobotStateEncoder> model;
};

/// {"type":"sensor","seq":N,"ts":T,"wheels_mm_s":{"left","right"},"sonar":[{"n","mm","deg"}],"moving",
///  "motors","stall":{"left","right"},"bumpers":{"front","rear"},"raw":{...the SIP's values as sent},
///  then the common robot model's fields ("pose", "v_mm_s", "w_deg_s", "battery_v", "ranges",
///  "bumped")} and a line end. wheels_mm_s and sonar only when the robot's model is known.
[[nodiscard]] SharedBuffer sip_json(const SipSnapshot& snapshot, std::uint64_t seq, double unix_seconds);

class SipMessage final : public RobotMessage {
 public:
  explicit SipMessage(SipSnapshot snapshot) : snapshot_(std::move(snapshot)) {}
  [[nodiscard]] bool is_sensor() const noexcept override { return true; }
  [[nodiscard]] SharedBuffer encode(Encoding encoding, std::uint64_t seq, double unix_seconds) const override {
    if (encoding == Encoding::Json) return sip_json(snapshot_, seq, unix_seconds);
    // Port 8101: the SIP as the robot sent it.
    return make_buffer(std::string(snapshot_.packet.begin(), snapshot_.packet.end()));
  }
  [[nodiscard]] const SipSnapshot& snapshot() const noexcept { return snapshot_; }

 private:
  SipSnapshot snapshot_;
};

/// The family's own fields of its sensor message, as JSON Schema properties.
[[nodiscard]] nlohmann::ordered_json sensor_properties();

}  // namespace flockbridge::bridge::pioneer

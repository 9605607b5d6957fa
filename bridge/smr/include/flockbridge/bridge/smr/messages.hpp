// The SMR's messages for clients: SMRD's stream for port 24901 (START,
// END, echoes, the bus's messages, as SMRD sends them), each period as a
// JSON sensor message, and the power switch's request (their JSON forms are
// protocol/smr/json's).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "flockbridge/bridge/driver.hpp"
#include "flockbridge/protocol/smr/json.hpp"

namespace flockbridge::bridge::smr {

/// Bytes of SMRD's stream for the clients of port 24901; none in JSON.
class StreamMessage final : public RobotMessage {
 public:
  explicit StreamMessage(protocol::ByteView bytes) : bytes_(make_buffer(std::string(bytes.begin(), bytes.end()))) {}
  [[nodiscard]] bool is_sensor() const noexcept override { return false; }
  [[nodiscard]] SharedBuffer encode(Encoding encoding, std::uint64_t, double) const override {
    return encoding == Encoding::Native ? bytes_ : nullptr;
  }
  [[nodiscard]] std::string_view bytes() const noexcept { return *bytes_; }

 private:
  SharedBuffer bytes_;
};

using protocol::smr::PeriodSnapshot;

/// A period as a JSON sensor message; nothing on port 24901 (SMRD's
/// clients read the stream).
class PeriodMessage final : public RobotMessage {
 public:
  explicit PeriodMessage(PeriodSnapshot snapshot) : snapshot_(std::move(snapshot)) {}
  [[nodiscard]] bool is_sensor() const noexcept override { return true; }
  [[nodiscard]] SharedBuffer encode(Encoding encoding, std::uint64_t seq, double unix_seconds) const override {
    return encoding == Encoding::Json ? make_buffer(protocol::smr::period_json(snapshot_, seq, unix_seconds)) : nullptr;
  }
  [[nodiscard]] const PeriodSnapshot& snapshot() const noexcept { return snapshot_; }

 private:
  PeriodSnapshot snapshot_;
};

/// {"type":"power_switch","on":B}: the power module's switch turned off
/// (held, as SMRD counts before it powers off) or on again.
class PowerSwitchMessage final : public RobotMessage {
 public:
  explicit PowerSwitchMessage(bool on) : on_(on) {}
  [[nodiscard]] bool is_sensor() const noexcept override { return false; }
  [[nodiscard]] SharedBuffer encode(Encoding encoding, std::uint64_t, double) const override {
    return encoding == Encoding::Json ? make_buffer(protocol::smr::power_switch_json(on_)) : nullptr;
  }

 private:
  bool on_;
};

}  // namespace flockbridge::bridge::smr

// The Flockbot on a serial line: its Uno resets when the port is opened and,
// once its bootloader has let go (about 1.6 s), says ACK in a frame. The
// probe only listens for that ACK, at the Uno's 115200 baud, for 2.5 s; it
// sends nothing, so it never speaks to the bootloader. An Uno is on USB as
// an Arduino board (2341:0001, 2341:0043, 2341:0243, 2a03:0043) or a clone's
// CH340 or CH341 (1a86:7523, 1a86:5523), as 99-flockbot.rules lists them; on
// any other USB adapter (an FTDI, a Prolific, a CP210x) it is not looked
// for, and its 2.5 s are saved.
#pragma once

#include "flockbridge/protocol/flockbot/frame.hpp"
#include "flockbridge/protocol/serial_probe.hpp"

namespace flockbridge::protocol::flockbot {

class FlockbotProbe final : public SerialProbe {
 public:
  [[nodiscard]] std::string_view family() const noexcept override { return "flockbot"; }
  [[nodiscard]] std::span<const ProbeSpeed> speeds() const noexcept override;
  [[nodiscard]] bool listens_only() const noexcept override { return true; }
  [[nodiscard]] bool may_be_on(const std::optional<UsbIdentity>& usb) const noexcept override;
  [[nodiscard]] Bytes start(std::size_t index) override;
  [[nodiscard]] ProbeStep feed(ByteView bytes) override;

 private:
  FrameDecoder decoder_;
};

}  // namespace flockbridge::protocol::flockbot

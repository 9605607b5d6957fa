// The Flockbot on a serial line: its Uno resets when the port is opened and,
// once its bootloader has let go (about 1.6 s), says ACK in a frame. The
// probe only listens for that ACK, at the Uno's 115200 baud, for 2.5 s; it
// sends nothing, so it never speaks to the bootloader.
#pragma once

#include "flockbridge/protocol/flockbot/frame.hpp"
#include "flockbridge/protocol/serial_probe.hpp"

namespace flockbridge::protocol::flockbot {

class FlockbotProbe final : public SerialProbe {
 public:
  [[nodiscard]] std::string_view family() const noexcept override { return "flockbot"; }
  [[nodiscard]] std::span<const ProbeSpeed> speeds() const noexcept override;
  [[nodiscard]] bool listens_only() const noexcept override { return true; }
  [[nodiscard]] Bytes start(std::size_t index) override;
  [[nodiscard]] ProbeStep feed(ByteView bytes) override;

 private:
  FrameDecoder decoder_;
};

}  // namespace flockbridge::protocol::flockbot

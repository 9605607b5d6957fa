// A Pioneer or AmigoBot on a serial line: AROS answers SYNC0, SYNC1 and
// SYNC2 at the speed its HOST port is set to (9600 at power-on, more after
// a client's HOSTBAUD), the last with its name, class and model. The probe
// tries each speed with that handshake and stops there: the robot then waits
// for OPEN, which only the bridge's own link sends. A device that echoes
// what it is sent answers SYNC2 with SYNC2, not with a name: refuted. A
// robot whose servers another program left open sends SIPs unasked: that
// is recognised too.
#pragma once

#include <cstdint>

#include "flockbridge/protocol/pioneer/packet.hpp"
#include "flockbridge/protocol/serial_probe.hpp"

namespace flockbridge::protocol::pioneer {

class PioneerProbe final : public SerialProbe {
 public:
  [[nodiscard]] std::string_view family() const noexcept override { return "pioneer"; }
  [[nodiscard]] std::span<const ProbeSpeed> speeds() const noexcept override;
  [[nodiscard]] Bytes start(std::size_t index) override;
  [[nodiscard]] ProbeStep feed(ByteView bytes) override;

 private:
  PacketDecoder decoder_;
  int baud_ = 0;
  std::uint8_t answered_ = 0;  ///< SYNCs answered so far
};

}  // namespace flockbridge::protocol::pioneer

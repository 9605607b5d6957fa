// A tinybot on a serial line: it answers PING (after a line end, which ends
// whatever other probes left on the line) with PONG at 115200 baud, or
// streams its readings already when another program woke it. A device that
// echoes sends PING back: refuted.
#pragma once

#include "flockbridge/protocol/serial_probe.hpp"
#include "flockbridge/protocol/tinybot/tinybot.hpp"

namespace flockbridge::protocol::tinybot {

class TinybotProbe final : public SerialProbe {
 public:
  [[nodiscard]] std::string_view family() const noexcept override { return "tinybot"; }
  [[nodiscard]] std::span<const ProbeSpeed> speeds() const noexcept override;
  [[nodiscard]] Bytes start(std::size_t index) override;
  [[nodiscard]] ProbeStep feed(ByteView bytes) override;

 private:
  LineReader lines_;
};

}  // namespace flockbridge::protocol::tinybot

// An SMR's bus on a serial line: silent until polled, its modules answer a
// poll each in the period SMRD would send it. The probe polls the left motor
// and the power module, as SMRD does every period (reading, never setting),
// at the bus's 115200 baud, after as many zeros as a message's longest body
// (SMRD's padding), and recognises the robot when both answer. Its
// own polls, which an RS485 adapter hears back, are skipped; anything else
// that is not a module's answer refutes it (a device sending noise).
#pragma once

#include "flockbridge/protocol/serial_probe.hpp"
#include "flockbridge/protocol/smr/messages.hpp"

namespace flockbridge::protocol::smr {

class SmrProbe final : public SerialProbe {
 public:
  [[nodiscard]] std::string_view family() const noexcept override { return "smr"; }
  [[nodiscard]] std::span<const ProbeSpeed> speeds() const noexcept override;
  [[nodiscard]] Bytes start(std::size_t index) override;
  [[nodiscard]] ProbeStep feed(ByteView bytes) override;

 private:
  MessageDecoder decoder_;
  unsigned answered_ = 0;  ///< part:: flags of the modules that answered
};

}  // namespace flockbridge::protocol::smr

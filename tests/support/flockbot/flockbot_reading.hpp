// A Flockbot's sensor reading back from its JSON sensor message (the raw
// values the message carries), for tests and benchmarks that compare what a
// client got with what the Uno sent.
#pragma once

#include <cstddef>

#include <nlohmann/json.hpp>

#include "flockbridge/protocol/flockbot/uno_packets.hpp"

namespace flockbridge::testing {

[[nodiscard]] inline protocol::flockbot::SensorReading flockbot_reading(const nlohmann::json& message) {
  protocol::flockbot::SensorReading r;
  r.battery = message["battery"];
  for (std::size_t i = 0; i < r.ir.size(); ++i) r.ir[i] = message["ir"][i];
  r.l_bump = message["l_bump"];
  r.h_bump = message["h_bump"];
  r.odometer_left = message["odometer"]["left"];
  r.odometer_right = message["odometer"]["right"];
  r.odometer_avg = message["odometer"]["avg"];
  r.wheel_watcher_left = message["wheel_watcher"]["left"];
  r.wheel_watcher_right = message["wheel_watcher"]["right"];
  return r;
}

}  // namespace flockbridge::testing

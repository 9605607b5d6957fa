// The Flockbot's probe against the simulated Uno: it boots when its port
// opens and says ACK, which the probe, listening only, recognises.
#include <doctest/doctest.h>

#include <chrono>

#include "flockbridge/protocol/flockbot/probe.hpp"
#include "flockbridge/sim/flockbot/uno_model.hpp"

using namespace flockbridge;
using namespace std::chrono_literals;

TEST_CASE("flockbot probe against the simulated Uno: its boot ACK, with nothing sent to it") {
  protocol::Bytes sent_back;
  std::vector<std::string> events;
  sim::UnoModel uno(
      {}, [&](protocol::ByteView bytes) { sent_back.insert(sent_back.end(), bytes.begin(), bytes.end()); },
      [&](std::string_view line) { events.emplace_back(line); });
  protocol::flockbot::FlockbotProbe probe;
  REQUIRE(probe.start(0).empty());
  const protocol::SteadyTime opened{};
  uno.power_on(opened);  // the port's opening resets it
  uno.tick(opened + 50ms);
  CHECK_FALSE(probe.feed(sent_back).found);  // still in its boot
  uno.tick(opened + 150ms);
  const protocol::ProbeStep step = probe.feed(sent_back);
  REQUIRE(step.found);
  CHECK(step.send.empty());
}

// The Pioneer's probe against the simulated Pioneer's AROS: recognised with
// its model, and the robot left waiting for OPEN, its motors untouched.
#include <doctest/doctest.h>

#include <chrono>

#include "flockbridge/protocol/pioneer/probe.hpp"
#include "flockbridge/sim/pioneer/pioneer_model.hpp"
#include "support/probe_conversation.hpp"

using namespace flockbridge;
using namespace std::chrono_literals;

TEST_CASE("pioneer probe against the simulated AROS: SYNC0 to SYNC2, its model named, no SIP asked for") {
  protocol::Bytes sent_back;
  std::vector<std::string> events;
  sim::pioneer::PioneerModel robot(
      {.model = "amigo-sh", .name = "Amy"},
      [&](protocol::ByteView bytes) { sent_back.insert(sent_back.end(), bytes.begin(), bytes.end()); },
      [&](std::string_view line) { events.emplace_back(line); });
  protocol::SteadyTime now{};
  protocol::pioneer::PioneerProbe probe;
  const testing::Conversation talk = testing::converse(probe, 0, [&](const protocol::Bytes& bytes) {
    sent_back.clear();
    robot.bytes_received(bytes, now);
    now += 50ms;
    robot.tick(now);
    return sent_back;
  });
  REQUIRE(talk.found);
  CHECK(talk.found->model == "amigo-sh");
  CHECK(talk.exchanges == 3);
  // The robot waits for OPEN: no server opened, nothing moved.
  CHECK(events.back() == "synced: waiting for OPEN");
  for (int i = 0; i < 10; ++i) {
    sent_back.clear();
    now += 100ms;
    robot.tick(now);
    CHECK(sent_back.empty());
  }
}

// The Pioneer's probe alone: SYNC0, SYNC1, SYNC2 and the robot's name at each
// speed; an echo, noise and a silent line are not a Pioneer.
#include <doctest/doctest.h>

#include <random>

#include "flockbridge/protocol/pioneer/commands.hpp"
#include "flockbridge/protocol/pioneer/packet.hpp"
#include "flockbridge/protocol/pioneer/probe.hpp"
#include "flockbridge/protocol/pioneer/sip.hpp"

using namespace flockbridge::protocol;
using namespace flockbridge::protocol::pioneer;

TEST_CASE("pioneer probe: the three SYNCs answered and the robot's name recognise it, at the speed tried") {
  PioneerProbe probe;
  CHECK_FALSE(probe.listens_only());
  REQUIRE(probe.speeds().size() == 5);
  CHECK(probe.speeds()[0].baud == 9600);
  CHECK(probe.start(1) == encode_packet(command::kSync0));  // 19200
  ProbeStep step = probe.feed(encode_packet(command::kSync0));
  CHECK(step.send == encode_packet(command::kSync1));
  step = probe.feed(encode_packet(command::kSync1));
  CHECK(step.send == encode_packet(command::kSync2));
  const Bytes identity = encode_identity({"Rosie", "Pioneer", "p3dx-sh"});
  for (std::size_t i = 0; i + 1 < identity.size(); ++i) CHECK_FALSE(probe.feed(ByteView(&identity[i], 1)).found);
  step = probe.feed(ByteView(&identity.back(), 1));
  REQUIRE(step.found);
  CHECK(step.found->model == "p3dx-sh");
  CHECK(step.found->evidence == "SYNC0, SYNC1 and SYNC2 answered at 19200 baud by \"Rosie\" (Pioneer)");
}

TEST_CASE("pioneer probe: a robot whose servers were left open is known by its SIPs") {
  PioneerProbe probe;
  (void)probe.start(0);
  StandardSip sip;
  const ProbeStep step = probe.feed(encode_standard_sip(sip));
  REQUIRE(step.found);
  CHECK(step.found->evidence == "SIPs at 9600 baud (its servers were left open)");
}

TEST_CASE("pioneer probe: a device that echoes is refuted at SYNC2, and noise is never a Pioneer") {
  PioneerProbe probe;
  Bytes sent = probe.start(0);
  ProbeStep step;
  for (int i = 0; i < 3 && !step.refuted; ++i) {
    step = probe.feed(sent);  // what went, back
    CHECK_FALSE(step.found);
    sent = step.send;
  }
  CHECK(step.refuted);
  (void)probe.start(0);
  std::mt19937 random(11);
  Bytes noise(8192);
  for (auto& byte : noise) byte = static_cast<Byte>(random());
  CHECK_FALSE(probe.feed(noise).found);
}

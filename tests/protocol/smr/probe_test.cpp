// The SMR's probe alone: it polls two modules, as SMRD does, and knows the
// bus by both answers; its own polls heard back are skipped, and an echo or
// noise is not an SMR.
#include <doctest/doctest.h>

#include <random>

#include "flockbridge/protocol/smr/bus.hpp"
#include "flockbridge/protocol/smr/probe.hpp"

using namespace flockbridge::protocol;
using namespace flockbridge::protocol::smr;

TEST_CASE("smr probe: it polls the left motor and the power module, and both answers recognise the bus") {
  SmrProbe probe;
  REQUIRE(probe.speeds().size() == 1);
  CHECK(probe.speeds()[0].baud == 115200);
  const Bytes polls = probe.start(0);
  // Only polls: what it sends sets no speed.
  CHECK(speed_commands(polls).empty());
  MessageDecoder sent;
  sent.feed(polls);
  std::vector<Byte> modules;
  while (const auto message = sent.next()) {
    if (!message->body.empty()) modules.push_back(message->body[0]);
  }
  CHECK(modules == std::vector<Byte>{module::kLeftMotor, module::kPower});
  // The adapter hears the polls back, then the modules answer.
  CHECK_FALSE(probe.feed(polls).found);
  CHECK_FALSE(probe.feed(encode_motor(reply::kLeftEncoder, 1234, 0, 0)).found);
  const ProbeStep step = probe.feed(encode_power(0, {700, 0, 0, 0, 0}));
  REQUIRE(step.found);
  CHECK(step.found->evidence == "the left motor and the power module answered their polls at 115200 baud");
}

TEST_CASE("smr probe: an echo is never an SMR, and noise is refuted") {
  SmrProbe probe;
  const Bytes polls = probe.start(0);
  const ProbeStep echoed = probe.feed(polls);
  CHECK_FALSE(echoed.found);
  CHECK_FALSE(echoed.refuted);  // it may still answer: the wait decides
  (void)probe.start(0);
  std::mt19937 random(3);
  Bytes noise(2048);
  for (auto& byte : noise) byte = static_cast<Byte>(random());
  const ProbeStep step = probe.feed(noise);
  CHECK_FALSE(step.found);
  CHECK(step.refuted);
}

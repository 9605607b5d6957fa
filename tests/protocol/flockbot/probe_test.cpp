// The Flockbot's probe alone: it only listens, and knows its Uno by the
// framed ACK the Uno sends when it boots.
#include <doctest/doctest.h>

#include <random>

#include "flockbridge/protocol/flockbot/frame.hpp"
#include "flockbridge/protocol/flockbot/probe.hpp"

using namespace flockbridge::protocol;
using namespace flockbridge::protocol::flockbot;

namespace {

Bytes frame_of(std::string_view payload) {
  const Bytes bytes(payload.begin(), payload.end());
  return encode_frame(bytes);
}

}  // namespace

TEST_CASE("flockbot probe: it sends nothing and knows the Uno by its boot ACK, even in pieces") {
  FlockbotProbe probe;
  CHECK(probe.listens_only());
  REQUIRE(probe.speeds().size() == 1);
  CHECK(probe.speeds()[0].baud == 115200);
  CHECK(probe.start(0).empty());
  // Whatever the line brought before (a half frame, noise), then the ACK a byte at a time.
  CHECK_FALSE(probe.feed(Bytes{0xBD, 0xBD, 0x42, 0x00}).found);
  const Bytes ack = frame_of("ACK");
  for (std::size_t i = 0; i + 1 < ack.size(); ++i) CHECK_FALSE(probe.feed(ByteView(&ack[i], 1)).found);
  const ProbeStep last = probe.feed(ByteView(&ack.back(), 1));
  REQUIRE(last.found);
  CHECK(last.found->evidence == "the Uno's boot ACK at 115200 baud");
  CHECK(last.send.empty());
}

TEST_CASE("flockbot probe: other frames, noise and a broken ACK are not a Flockbot") {
  FlockbotProbe probe;
  (void)probe.start(0);
  CHECK_FALSE(probe.feed(frame_of("NAK")).found);
  Bytes broken = frame_of("ACK");
  broken.back() ^= 0x01;  // its checksum
  CHECK_FALSE(probe.feed(broken).found);
  std::mt19937 random(7);
  Bytes noise(4096);
  for (auto& byte : noise) byte = static_cast<Byte>(random());
  CHECK_FALSE(probe.feed(noise).found);
  // Starting over forgets a frame left half way.
  const Bytes ack = frame_of("ACK");
  CHECK_FALSE(probe.feed(ByteView(ack).first(4)).found);
  (void)probe.start(0);
  CHECK_FALSE(probe.feed(ByteView(ack).subspan(4)).found);
}

TEST_CASE("flockbot probe: an Uno is looked for on an Arduino board or a clone's CH340, not on other USB adapters") {
  const FlockbotProbe probe;
  CHECK(probe.may_be_on(std::nullopt));  // a board's UART, a pseudo-terminal, or not known
  CHECK(probe.may_be_on(UsbIdentity{0x2341, 0x0043}));
  CHECK(probe.may_be_on(UsbIdentity{0x2a03, 0x0043}));
  CHECK(probe.may_be_on(UsbIdentity{0x1a86, 0x7523}));
  CHECK_FALSE(probe.may_be_on(UsbIdentity{0x0403, 0x6001}));  // FTDI
  CHECK_FALSE(probe.may_be_on(UsbIdentity{0x067b, 0x2303}));  // Prolific
  CHECK_FALSE(probe.may_be_on(UsbIdentity{0x10c4, 0xea60}));  // CP210x
  CHECK(usb_id_text(UsbIdentity{0x0403, 0x6001}) == "0403:6001");
}

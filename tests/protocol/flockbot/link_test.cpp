#include <doctest/doctest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "flockbridge/protocol/flockbot/commands.hpp"
#include "flockbridge/protocol/flockbot/link.hpp"

using namespace flockbridge::protocol;
using namespace flockbridge::protocol::flockbot;
using namespace std::chrono_literals;

namespace {

Bytes payload_of(std::string_view text) { return Bytes(text.begin(), text.end()); }

/// Records what the controller asks for; the test plays the Uno and the clock.
struct Recorder final : LinkEvents {
  std::vector<Bytes> sent;  ///< payloads of transmitted frames
  std::vector<std::string> states;
  std::vector<std::string> packets;
  std::vector<std::pair<CommandToken, std::string>> finished;  ///< "" for success, "ack" when acknowledged

  std::size_t flushes = 0;  ///< runs of zero bytes; "FLU" in `sent`

  void transmit(ByteView frame) override {
    if (!frame.empty() && frame[0] == 0) {
      CHECK(std::all_of(frame.begin(), frame.end(), [](std::uint8_t b) { return b == 0; }));
      ++flushes;
      sent.push_back(payload_of("FLU"));
      return;
    }
    sent.emplace_back(frame.begin() + kSyncLength + 1, frame.end() - 1);
  }
  void link_changed(LinkState state, std::string_view) override { states.emplace_back(link_state_name(state)); }
  void packet_received(const UnoPacket&, ByteView payload) override {
    packets.push_back(describe_tag(payload.first(3)));
  }
  void command_finished(CommandToken token, const Error* error, bool acknowledged) override {
    finished.emplace_back(token, error ? error->message : acknowledged ? "ack" : "");
  }
  std::string last_sent() const { return sent.empty() ? "" : describe_tag(ByteView(sent.back()).first(3)); }
};

struct Fixture {
  LinkSettings settings;
  Recorder events;
  Link link;
  SteadyTime now{};

  Fixture() : settings(make_settings()), link(settings, RobotConfig{}, events) {}
  static LinkSettings make_settings() {
    LinkSettings s;
    s.nak_window = 10ms;
    s.nak_retries = 3;
    s.handshake_timeout = 500ms;
    s.handshake_retries = 3;
    s.boot_wait = 2000ms;
    s.stale_timeout = 1000ms;
    return s;
  }
  void uno_sends(std::string_view payload) { link.bytes_received(encode_frame(as_bytes(payload)), now); }
  void advance(std::chrono::milliseconds by) {
    now += by;
    link.tick(now);
  }
  void bring_up() {
    link.port_opened(now);
    uno_sends("ACK");
    REQUIRE(events.last_sent() == "CFG");
    uno_sends("ACK");
    REQUIRE(link.state() == LinkState::Up);
  }
};

/// A link up with firmware that acknowledges commands (--command-ack).
struct AckingFixture : Fixture {
  LinkSettings ack_settings = with_acks(settings);
  Link acking{ack_settings, RobotConfig{}, events};

  AckingFixture() {
    acking.port_opened(now);
    acking.bytes_received(encode_frame(as_bytes("ACK")), now);
    acking.bytes_received(encode_frame(as_bytes("ACK")), now);
    REQUIRE(acking.state() == LinkState::Up);
    events.sent.clear();
  }
  static LinkSettings with_acks(LinkSettings s) {
    s.require_command_ack = true;
    return s;
  }
  /// 256 zero bytes at 115200 baud take 23 ms (rounded up); then one window.
  static constexpr std::chrono::milliseconds kFlushWindow = 23ms + 10ms;
  /// The command's window passes without an answer: the flush goes out, and
  /// its window passes too.
  void no_answer() {
    now += 10ms;
    acking.tick(now);
    REQUIRE(events.last_sent() == "FLU");
    now += kFlushWindow;
    acking.tick(now);
  }
};

}  // namespace

TEST_CASE_FIXTURE(Fixture, "handshake: Uno ACK, Pi CFG, Uno ACK, and only then up") {
  CHECK(link.state() == LinkState::Down);
  link.port_opened(now);
  CHECK(link.state() == LinkState::Handshaking);
  CHECK(events.sent.empty());
  uno_sends("ACK");
  REQUIRE(events.sent.size() == 1);
  CHECK(events.sent[0] == encode_config_payload(RobotConfig{}));
  CHECK(events.sent[0].size() == 12);
  CHECK(link.state() == LinkState::Handshaking);
  uno_sends("ACK");
  CHECK(link.state() == LinkState::Up);
  CHECK(events.states == std::vector<std::string>{"handshaking", "up"});
}

TEST_CASE_FIXTURE(Fixture,
                  "an Uno that did not reset on open is configured after the boot wait, or at its first packet") {
  link.port_opened(now);
  advance(1999ms);
  CHECK(events.sent.empty());
  advance(1ms);
  CHECK(events.last_sent() == "CFG");

  Fixture other;
  other.link.port_opened(other.now);
  other.uno_sends("DMC");
  CHECK(other.events.last_sent() == "CFG");
  CHECK(other.events.packets == std::vector<std::string>{"DMC"});
}

TEST_CASE_FIXTURE(Fixture, "CFG is retried, then reported down, then retried slowly until the Uno answers") {
  link.port_opened(now);
  uno_sends("ACK");
  advance(500ms);
  advance(500ms);
  CHECK(events.sent.size() == 3);
  CHECK(link.state() == LinkState::Handshaking);
  advance(500ms);
  CHECK(link.state() == LinkState::Down);
  CHECK(link.reason().find("does not answer CFG") != std::string::npos);
  CHECK(link.port_open());
  CHECK(*link.next_deadline() == now + settings.handshake_slow_interval);
  advance(settings.handshake_slow_interval);
  CHECK(events.sent.size() == 5);
  uno_sends("ACK");
  CHECK(link.state() == LinkState::Up);
}

TEST_CASE_FIXTURE(Fixture, "commands are refused while the link is not up") {
  auto refused = link.submit(1, as_bytes("DMS\x0A"), now);
  REQUIRE_FALSE(refused);
  CHECK(refused.error().message.find("the robot link is down") == 0);
  link.port_opened(now);
  CHECK_FALSE(link.submit(2, as_bytes("DST"), now));
  CHECK(events.sent.empty());
}

TEST_CASE_FIXTURE(Fixture, "each command is alone on the line for its NAK window") {
  bring_up();
  events.sent.clear();
  REQUIRE(link.submit(1, as_bytes("DGO"), now));
  REQUIRE(link.submit(2, as_bytes("DGC"), now));
  CHECK(events.sent.size() == 1);
  advance(9ms);
  CHECK(events.sent.size() == 1);
  advance(1ms);
  CHECK(events.sent.size() == 2);
  CHECK(events.last_sent() == "DGC");
  CHECK(events.finished == std::vector<std::pair<CommandToken, std::string>>{{1, ""}});
}

TEST_CASE_FIXTURE(Fixture, "a NAK inside the window resends that command, up to the retry limit") {
  bring_up();
  events.sent.clear();
  REQUIRE(link.submit(1, as_bytes("DGO"), now));
  REQUIRE(link.submit(2, as_bytes("DGC"), now));
  uno_sends("NAK");
  uno_sends("NAK");
  uno_sends("NAK");
  CHECK(events.sent.size() == 4);
  CHECK(events.last_sent() == "DGO");
  uno_sends("NAK");  // the fourth NAK: three resends are spent
  REQUIRE(events.finished.size() == 1);
  CHECK(events.finished[0].first == 1);
  CHECK(events.finished[0].second == "the robot refused this command (4 tries); it was dropped");
  // The next command waits one window: the resends may still bring ACKs.
  CHECK(events.last_sent() == "DGO");
  advance(10ms);
  CHECK(events.last_sent() == "DGC");
  CHECK(link.stats().retransmits == 3);
}

TEST_CASE_FIXTURE(Fixture, "an ACK inside a window confirms the command and ends the window early") {
  bring_up();
  REQUIRE(link.submit(1, as_bytes("DGO"), now));
  REQUIRE(link.submit(2, as_bytes("DGC"), now));
  uno_sends("ACK");
  CHECK(events.finished == std::vector<std::pair<CommandToken, std::string>>{{1, "ack"}});
  CHECK(events.last_sent() == "DGC");
  CHECK(link.state() == LinkState::Up);
}

TEST_CASE_FIXTURE(Fixture, "an ACK with no command pending and then silence means the Uno rebooted") {
  bring_up();
  events.sent.clear();
  uno_sends("ACK");
  CHECK(link.state() == LinkState::Up);  // not yet: a rebooted Uno then sends nothing but ACK
  advance(199ms);
  CHECK(link.state() == LinkState::Up);
  advance(1ms);
  CHECK(link.state() == LinkState::Handshaking);
  CHECK(events.last_sent() == "CFG");
  CHECK(link.stats().reboots == 1);
  uno_sends("ACK");
  CHECK(link.state() == LinkState::Up);
}

TEST_CASE_FIXTURE(Fixture, "a frame with a bad checksum is answered with NAK") {
  bring_up();
  Bytes broken = encode_frame(as_bytes("DMC"));
  broken.back() ^= 0x10;
  link.bytes_received(broken, now);
  CHECK(events.last_sent() == "NAK");
  CHECK(link.stats().naks_sent == 1);
  CHECK(events.packets.empty());
  uno_sends("NAK");  // our NAK was garbled too: say it again
  CHECK(events.sent.size() == 3);
  CHECK(events.last_sent() == "NAK");
}

TEST_CASE_FIXTURE(Fixture, "a NAK during the handshake resends CFG") {
  link.port_opened(now);
  uno_sends("ACK");
  uno_sends("NAK");
  CHECK(events.sent.size() == 2);
  CHECK(events.last_sent() == "CFG");
}

TEST_CASE_FIXTURE(Fixture, "implausible packets are counted and dropped, not published") {
  bring_up();
  // A known type with another LEN is rejected by the decoder's length table.
  uno_sends("SEN");
  uno_sends("DMCX");
  CHECK(events.packets.empty());
  CHECK(link.stats().decoder.bad_length == 2);
  // A sensor packet of the right length whose reserved bytes are not zero
  // passed the checksum but breaks the table.
  Bytes sen = encode_sensor_payload({});
  sen[27] = 1;
  link.bytes_received(encode_frame(sen), now);
  CHECK(events.packets.empty());
  CHECK(link.stats().implausible == 1);
  uno_sends("XYZ");  // a type this bridge does not know
  CHECK(events.packets == std::vector<std::string>{"XYZ"});
}

TEST_CASE_FIXTURE(Fixture,
                  "a frame whose bytes stop coming is abandoned after the frame gap, freeing the frames behind it") {
  bring_up();
  const std::size_t sent_before = events.sent.size();
  // An unknown type whose LEN was corrupted to 60 (no table length to check
  // it against), then a good DMC: the decoder waits for 60 bytes.
  Bytes line = encode_frame(as_bytes("XYZ12"));
  line[3] = 60;
  line[line.size() - 1] = frame_checksum(as_bytes("XYZ12"));
  const Bytes good = encode_frame(as_bytes("DMC"));
  line.insert(line.end(), good.begin(), good.end());
  link.bytes_received(line, now);
  CHECK(events.packets.empty());
  REQUIRE(link.frame_under_way());
  REQUIRE(link.next_deadline());
  CHECK(*link.next_deadline() <= now + LinkSettings{}.frame_gap);
  advance(LinkSettings{}.frame_gap);
  CHECK(events.packets == std::vector<std::string>{"DMC"});
  CHECK(link.stats().decoder.incomplete == 1);
  // The abandoned frame is NAKed, as any damaged frame is.
  REQUIRE(events.sent.size() == sent_before + 1);
  CHECK(events.last_sent() == "NAK");
}

TEST_CASE_FIXTURE(Fixture, "silence from the Uno makes the link stale, and CFG brings it back") {
  bring_up();
  REQUIRE(link.submit(7, as_bytes("DMS\x0A"), now));
  advance(10ms);
  advance(989ms);
  CHECK(link.state() == LinkState::Up);
  advance(1ms);
  CHECK(link.state() == LinkState::Stale);
  CHECK(events.last_sent() == "CFG");
  CHECK_FALSE(link.submit(8, as_bytes("DGO"), now));
  uno_sends("ACK");
  CHECK(link.state() == LinkState::Up);
}

TEST_CASE_FIXTURE(Fixture, "new robot settings are sent at once when the link is up, failing what waited") {
  bring_up();
  REQUIRE(link.submit(7, as_bytes("DMS\x0A"), now));
  RobotConfig robot;
  robot.id = 42;
  link.set_robot_config(robot);
  CHECK(link.robot_config() == robot);
  link.reconfigure(now, "settings reloaded");
  CHECK(link.state() == LinkState::Handshaking);
  CHECK(link.reason() == "settings reloaded");
  REQUIRE(events.last_sent() == "CFG");
  CHECK(events.sent.back() == encode_config_payload(robot));
  REQUIRE(events.finished.size() == 1);
  CHECK(events.finished[0].second.find("configured again") != std::string::npos);
  uno_sends("ACK");
  CHECK(link.state() == LinkState::Up);
}

TEST_CASE_FIXTURE(Fixture, "new robot settings wait for the handshake while the Uno boots or the port is closed") {
  link.reconfigure(now, "settings reloaded");
  CHECK(events.sent.empty());
  link.port_opened(now);
  link.reconfigure(now, "settings reloaded");
  CHECK(events.sent.empty());  // the boot ACK comes first
  CHECK(link.state() == LinkState::Handshaking);
}

TEST_CASE_FIXTURE(Fixture, "new timing settings apply from the next deadline, the payload limit stays") {
  bring_up();
  LinkSettings changed = settings;
  changed.stale_timeout = 200ms;
  changed.max_payload = 200;
  link.set_settings(changed);
  CHECK(link.settings().max_payload == settings.max_payload);
  advance(150ms);
  CHECK(link.state() == LinkState::Up);
  advance(60ms);  // the fixture's own stale timeout is 1000 ms
  CHECK(link.state() == LinkState::Stale);
}

TEST_CASE_FIXTURE(Fixture, "an emergency stop jumps the queue and cancels what waited behind it") {
  bring_up();
  events.sent.clear();
  REQUIRE(link.submit(1, as_bytes("DMS\x0A"), now));
  REQUIRE(link.submit(2, as_bytes("DMS\x14"), now));
  REQUIRE(link.submit(3, as_bytes("DRC\x14"), now));
  REQUIRE(link.submit(4, as_bytes("EMG"), now));
  CHECK(events.last_sent() == "EMG");
  CHECK(events.sent.size() == 2);
  REQUIRE(events.finished.size() == 3);
  CHECK(events.finished[0] == std::pair<CommandToken, std::string>{2, "cancelled by an emergency stop"});
  CHECK(events.finished[1] == std::pair<CommandToken, std::string>{3, "cancelled by an emergency stop"});
  CHECK(events.finished[2] == std::pair<CommandToken, std::string>{1, ""});
  uno_sends("NAK");
  CHECK(events.last_sent() == "EMG");  // a NAK now resends the emergency stop
}

TEST_CASE_FIXTURE(Fixture, "an emergency stop goes out while the link is stale, other commands do not") {
  bring_up();
  advance(1000ms);
  REQUIRE(link.state() == LinkState::Stale);
  CHECK(link.submit(1, as_bytes("EMG"), now));
  CHECK(events.last_sent() == "EMG");
  CHECK_FALSE(link.submit(2, as_bytes("DST"), now));
}

TEST_CASE_FIXTURE(Fixture, "losing the port fails every pending command with the reason") {
  bring_up();
  REQUIRE(link.submit(1, as_bytes("DGO"), now));
  REQUIRE(link.submit(2, as_bytes("DGC"), now));
  link.port_closed("/dev/ttyACM0 was unplugged");
  CHECK(link.state() == LinkState::Down);
  REQUIRE(events.finished.size() == 2);
  CHECK(events.finished[0].second == "the robot link went down: /dev/ttyACM0 was unplugged");
  CHECK_FALSE(link.next_deadline());
}

TEST_CASE_FIXTURE(Fixture, "the command queue is bounded") {
  bring_up();
  for (std::size_t i = 0; i <= settings.max_queued_commands; ++i) {
    REQUIRE(link.submit(i, as_bytes("DGO"), now));
  }
  auto full = link.submit(999, as_bytes("DGO"), now);
  REQUIRE_FALSE(full);
  CHECK(full.error().message.find("queue is full") != std::string::npos);
}

TEST_CASE_FIXTURE(AckingFixture, "with acknowledgements required, a window without ACK resends, then fails") {
  REQUIRE(acking.submit(1, as_bytes("DGO"), now));
  REQUIRE(acking.submit(2, as_bytes("DGC"), now));
  for (int i = 0; i < 3; ++i) no_answer();
  CHECK(events.sent.size() == 7);  // the first try and three resends, each after a flush
  CHECK(std::count(events.sent.begin(), events.sent.end(), payload_of("DGO")) == 4);
  CHECK(events.finished.empty());
  no_answer();
  REQUIRE(events.finished.size() == 1);
  CHECK(events.finished[0] == std::pair<CommandToken, std::string>{
                                  1, "the robot did not acknowledge this command (4 tries); it was dropped"});
  CHECK(events.last_sent() == "DGC");
  acking.bytes_received(encode_frame(as_bytes("ACK")), now);
  CHECK(events.finished.back() == std::pair<CommandToken, std::string>{2, "ack"});
}

TEST_CASE_FIXTURE(AckingFixture,
                  "a duplicate ACK after a noisy exchange is a stray - not a reboot, not the next command's") {
  REQUIRE(acking.submit(1, as_bytes("DGO"), now));
  REQUIRE(acking.submit(2, as_bytes("DGC"), now));
  // The first try's ACK is lost; the resend is acknowledged...
  no_answer();
  CHECK(events.sent.size() == 3);
  CHECK(events.last_sent() == "DGO");
  acking.bytes_received(encode_frame(as_bytes("ACK")), now);
  CHECK(events.finished.back() == std::pair<CommandToken, std::string>{1, "ack"});
  // ...and the next command waits while the first try's late ACK may still come.
  CHECK(events.sent.size() == 3);
  acking.bytes_received(encode_frame(as_bytes("ACK")), now + 1ms);
  CHECK(acking.stats().stray_acks == 1);
  CHECK(acking.stats().reboots == 0);
  CHECK(acking.state() == LinkState::Up);
  now += 10ms;
  acking.tick(now);
  CHECK(events.last_sent() == "DGC");
  CHECK(events.finished.size() == 1);  // DGC is not confirmed by the stray
}

TEST_CASE_FIXTURE(Fixture, "an ACK long after any noise still means a reboot") {
  bring_up();
  Bytes broken = encode_frame(as_bytes("DMC"));
  broken.back() ^= 1;
  link.bytes_received(broken, now);  // we NAK: one stray ACK may come within a window
  advance(50ms);
  uno_sends("ACK");
  advance(settings.reboot_confirm);
  CHECK(link.stats().reboots == 1);
  CHECK(link.state() == LinkState::Handshaking);
}

TEST_CASE_FIXTURE(Fixture, "an emergency stop does not wait for a quiet period") {
  bring_up();
  REQUIRE(link.submit(1, as_bytes("DGO"), now));
  uno_sends("NAK");  // resend: a stray may follow
  uno_sends("ACK");
  REQUIRE(link.submit(2, as_bytes("DGC"), now));
  REQUIRE(link.submit(3, as_bytes("EMG"), now));
  CHECK(events.last_sent() == "EMG");
}

TEST_CASE_FIXTURE(Fixture, "an unexplained ACK followed by sensor data is a stray - commands held meanwhile go out") {
  bring_up();
  events.sent.clear();
  uno_sends("ACK");
  REQUIRE(link.submit(1, as_bytes("DGO"), now));
  CHECK(events.sent.empty());  // held while a reboot is suspected
  SensorReading reading;
  link.bytes_received(encode_frame(encode_sensor_payload(reading)), now + 30ms);
  CHECK(events.last_sent() == "DGO");
  advance(500ms);
  CHECK(link.stats().reboots == 0);
  CHECK(link.stats().stray_acks == 1);
  CHECK(link.state() == LinkState::Up);
}

TEST_CASE_FIXTURE(Fixture, "an emergency stop is not held by a suspected reboot") {
  bring_up();
  uno_sends("ACK");
  REQUIRE(link.submit(1, as_bytes("EMG"), now));
  CHECK(events.last_sent() == "EMG");
}

TEST_CASE_FIXTURE(AckingFixture, "with acknowledging firmware a damaged sensor packet is not NAKed - other damage is") {
  Bytes sensor = encode_frame(encode_sensor_payload(SensorReading{}));
  sensor.back() ^= 0x01;
  acking.bytes_received(sensor, now);
  CHECK(events.sent.empty());
  CHECK(acking.stats().damaged_sensors_not_naked == 1);
  Bytes dmc = encode_frame(as_bytes("DMC"));
  dmc.back() ^= 0x01;
  acking.bytes_received(dmc, now);
  CHECK(events.last_sent() == "NAK");
}

TEST_CASE_FIXTURE(AckingFixture, "with acknowledging firmware no NAK goes out while a command awaits its ACK") {
  REQUIRE(acking.submit(1, as_bytes("DGO"), now));
  REQUIRE(acking.submit(2, as_bytes("DGC"), now));
  Bytes damaged = encode_frame(as_bytes("DMC"));
  damaged.back() ^= 0x01;
  acking.bytes_received(damaged, now);
  CHECK(events.last_sent() == "DGO");  // the NAK is owed, not sent
  CHECK(acking.stats().naks_deferred == 1);
  acking.bytes_received(encode_frame(as_bytes("ACK")), now);
  // Settled: now the NAK goes out, and the next command waits while its answer may be an old ACK.
  CHECK(events.last_sent() == "NAK");
  acking.bytes_received(encode_frame(as_bytes("ACK")), now + 1ms);
  CHECK(acking.stats().stray_acks == 1);
  now += 10ms;
  acking.tick(now);
  CHECK(events.last_sent() == "DGC");
  CHECK(events.finished.size() == 1);
}

TEST_CASE_FIXTURE(AckingFixture, "a NAK after the command was settled, with nothing sent since, resends it") {
  REQUIRE(acking.submit(1, as_bytes("DGO"), now));
  acking.bytes_received(encode_frame(as_bytes("ACK")), now);  // a stray came first...
  REQUIRE(events.finished.size() == 1);
  acking.bytes_received(encode_frame(as_bytes("NAK")), now);  // ...then the Uno's NAK for the damaged DGO
  CHECK(events.sent.size() == 2);
  CHECK(events.last_sent() == "DGO");
  acking.bytes_received(encode_frame(as_bytes("ACK")), now);
  CHECK(events.finished.size() == 1);  // the client was answered once
  CHECK(acking.stats().commands_delivered == 1);
}

TEST_CASE_FIXTURE(Fixture, "a late NAK resends the last command when nothing was sent since - within the retry bound") {
  bring_up();
  events.sent.clear();
  REQUIRE(link.submit(1, as_bytes("DGO"), now));
  advance(10ms);  // the window passes without a NAK: sent, not confirmed
  REQUIRE(events.finished.size() == 1);
  CHECK(events.finished[0].second.empty());
  for (unsigned i = 0; i < settings.nak_retries; ++i) {
    uno_sends("NAK");
    CHECK(events.last_sent() == "DGO");
    advance(10ms);
  }
  CHECK(events.sent.size() == 1 + settings.nak_retries);
  CHECK(link.stats().late_resends == settings.nak_retries);
  uno_sends("NAK");  // its resends are spent
  CHECK(events.sent.size() == 1 + settings.nak_retries);
  CHECK(link.stats().unexpected_naks == 1);
  CHECK(events.finished.size() == 1);  // the client was answered once
}

TEST_CASE_FIXTURE(Fixture, "a late NAK after another frame went out is not about the command") {
  bring_up();
  REQUIRE(link.submit(1, as_bytes("DGO"), now));
  advance(10ms);
  link.bytes_received(Bytes{0xBD, 0xBD, 0xBD, 3, 'D', 'M', 'C', 0x00}, now);  // damaged: the Pi NAKs it
  REQUIRE(events.last_sent() == "NAK");
  const std::size_t sent = events.sent.size();
  advance(10ms);
  uno_sends("NAK");  // resends the Pi's NAK, not DGO
  CHECK(events.sent.size() == sent + 1);
  CHECK(events.last_sent() == "NAK");
  CHECK(link.stats().late_resends == 0);
}

TEST_CASE_FIXTURE(Fixture, "a late NAK resends a move to distance only when it can be about nothing else") {
  bring_up();
  SUBCASE("the Uno said nothing else since: resent") {
    REQUIRE(link.submit(1, as_bytes("DMD\x14\x05"), now));
    advance(10ms);
    uno_sends("NAK");
    CHECK(events.last_sent() == "DMD");
    CHECK(link.stats().late_resends == 1);
  }
  SUBCASE("a sensor packet came in between: not resent, counted") {
    REQUIRE(link.submit(1, as_bytes("DRD\x14\x5A"), now));
    advance(10ms);
    link.bytes_received(encode_frame(encode_sensor_payload({})), now);
    const std::size_t sent = events.sent.size();
    uno_sends("NAK");
    CHECK(events.sent.size() == sent);
    CHECK(link.stats().late_naks_not_resent == 1);
    CHECK(link.stats().late_resends == 0);
  }
}

TEST_CASE_FIXTURE(AckingFixture, "a move the Uno acknowledged is never resent on a late NAK") {
  REQUIRE(acking.submit(1, as_bytes("DRA\x28\x1E\x2C\x01"), now));
  acking.bytes_received(encode_frame(as_bytes("ACK")), now);
  REQUIRE(events.finished.size() == 1);
  CHECK(events.finished[0].second == "ack");
  const std::size_t sent = events.sent.size();
  acking.bytes_received(encode_frame(as_bytes("NAK")), now + 1ms);
  CHECK(events.sent.size() == sent);
  CHECK(acking.stats().late_naks_not_resent == 1);
}

TEST_CASE_FIXTURE(AckingFixture,
                  "a move whose answer came damaged is not resent when its ACK does not come: it fails") {
  REQUIRE(acking.submit(1, as_bytes("DMD\x14\x05"), now));
  REQUIRE(events.last_sent() == "DMD");
  // A damaged 3-byte frame: perhaps the move's own ACK.
  acking.bytes_received(Bytes{0xBD, 0xBD, 0xBD, 3, 'A', 'C', 'K', 0x00}, now + 1ms);
  no_answer();
  REQUIRE(events.finished.size() == 1);
  CHECK(events.finished[0].second.find("was not sent again") != std::string::npos);
  CHECK(acking.stats().resends_withheld == 1);
  CHECK(events.last_sent() == "NAK");  // the owed NAK: the Uno resends its answer
  // An idempotent command in the same case is resent as before.
  REQUIRE(acking.submit(2, as_bytes("DGO"), now));
  now += 10ms;
  acking.tick(now);
  acking.bytes_received(Bytes{0xBD, 0xBD, 0xBD, 3, 'A', 'C', 'K', 0x00}, now);
  no_answer();
  CHECK(events.last_sent() == "DGO");
}

TEST_CASE_FIXTURE(Fixture,
                  "no NAK goes out while a command is on the line: it is owed, and sent once the command is settled") {
  bring_up();
  REQUIRE(link.submit(1, as_bytes("DMD\x14\x05"), now));
  REQUIRE(events.last_sent() == "DMD");
  const std::size_t sent = events.sent.size();
  // A damaged packet from the Uno: NAKing it now would bring back the Uno's
  // last packet, perhaps a NAK of its own that would resend the move.
  link.bytes_received(Bytes{0xBD, 0xBD, 0xBD, 3, 'D', 'M', 'C', 0x00}, now + 1ms);
  CHECK(events.sent.size() == sent);
  CHECK(link.stats().naks_deferred == 1);
  advance(10ms);
  REQUIRE(events.finished.size() == 1);
  CHECK(events.last_sent() == "NAK");
}

TEST_CASE_FIXTURE(AckingFixture, "a move failed on a noisy line leaves a quiet window: its late ACK confirms nothing else") {
  REQUIRE(acking.submit(1, as_bytes("DRD\x14\x5A\x00"), now));
  // Noise that makes no frame: bytes that never became a header.
  acking.bytes_received(Bytes{0xBD, 0x41, 0x43, 0x4B}, now + 1ms);
  no_answer();
  REQUIRE(events.finished.size() == 1);
  CHECK(events.finished[0].second.find("was not sent again") != std::string::npos);
  REQUIRE(acking.submit(2, as_bytes("DGO"), now));
  CHECK(events.last_sent() == "FLU");  // DGO waits while the move's ACK may still come
  acking.bytes_received(encode_frame(as_bytes("ACK")), now + 2ms);
  CHECK(acking.stats().stray_acks == 1);
  CHECK(events.finished.size() == 1);
  now += 10ms;
  acking.tick(now);
  CHECK(events.last_sent() == "DGO");
  acking.bytes_received(encode_frame(as_bytes("ACK")), now);
  REQUIRE(events.finished.size() == 2);
  CHECK(events.finished[1] == std::pair<CommandToken, std::string>{2, "ack"});
}

TEST_CASE_FIXTURE(AckingFixture, "a command swallowed by a frame with a damaged LEN is confirmed by its late ACK, once") {
  REQUIRE(acking.submit(1, as_bytes("DMD\x14\x05"), now));
  REQUIRE(acking.submit(2, as_bytes("DGO"), now));
  // DMD's LEN was damaged upwards: the Uno waits for more bytes and says nothing.
  now += 10ms;
  acking.tick(now);
  CHECK(events.last_sent() == "FLU");
  CHECK(acking.stats().flushes == 1);
  CHECK(events.finished.empty());
  // The flush completes the frame: the Uno rejects it, finds DMD behind its
  // header and carries it out. Its ACK confirms DMD, and DMD is not resent.
  acking.bytes_received(encode_frame(as_bytes("NAK")), now + 24ms);
  CHECK(events.last_sent() == "FLU");
  acking.bytes_received(encode_frame(as_bytes("ACK")), now + 24ms);
  REQUIRE(events.finished.size() == 1);
  CHECK(events.finished[0] == std::pair<CommandToken, std::string>{1, "ack"});
  CHECK(acking.stats().late_acks == 1);
  CHECK(std::count(events.sent.begin(), events.sent.end(), payload_of("DMD\x14\x05")) == 1);
  now += 24ms;
  acking.tick(now);
  CHECK(events.last_sent() == "DGO");
}

TEST_CASE_FIXTURE(AckingFixture, "a NAK after a flush without an ACK resends the command when its window ends") {
  REQUIRE(acking.submit(1, as_bytes("DGO"), now));
  now += 10ms;
  acking.tick(now);
  REQUIRE(events.last_sent() == "FLU");
  acking.bytes_received(encode_frame(as_bytes("NAK")), now + 24ms);
  CHECK(events.last_sent() == "FLU");  // an ACK may still follow the rejected frame's NAK
  now += kFlushWindow;
  acking.tick(now);
  CHECK(events.last_sent() == "DGO");
  acking.bytes_received(encode_frame(as_bytes("ACK")), now);
  CHECK(events.finished.back() == std::pair<CommandToken, std::string>{1, "ack"});
}

TEST_CASE_FIXTURE(Fixture, "firmware that does not acknowledge gets no flush, and a link with flush_bytes 0 neither") {
  bring_up();
  REQUIRE(link.submit(1, as_bytes("DGO"), now));
  advance(10ms);
  CHECK(events.flushes == 0);
  CHECK(events.finished.back().second.empty());
  LinkSettings no_flush = AckingFixture::with_acks(settings);
  no_flush.flush_bytes = 0;
  link.set_settings(no_flush);
  REQUIRE(link.submit(2, as_bytes("DGO"), now));
  advance(10ms);
  CHECK(events.flushes == 0);
  CHECK(events.last_sent() == "DGO");
  CHECK(std::count(events.sent.begin(), events.sent.end(), payload_of("DGO")) == 3);
}

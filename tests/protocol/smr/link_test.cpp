// The SMR's bus link: SMRD's period on the bus (its START and END, the
// polls, the client messages first with one speed per motor), the modules'
// replies read into the period, a module or the whole bus going silent, and
// the power switch, with the time passed in.
#include <doctest/doctest.h>

#include <optional>
#include <string>
#include <vector>

#include "flockbridge/protocol/smr/link.hpp"
#include "support/hex.hpp"

using namespace flockbridge::protocol;
using namespace flockbridge::protocol::smr;
using flockbridge::testing::hex;
using namespace std::chrono_literals;

namespace {

struct Recorder final : LinkEvents {
  std::vector<Bytes> sent;
  std::vector<std::pair<LinkState, std::string>> states;
  std::vector<PeriodStart> starts;
  std::vector<Bytes> start_messages;
  std::vector<Bytes> echoes;
  unsigned ends = 0;
  Bytes relayed;
  std::vector<Period> periods;
  std::vector<std::pair<CommandToken, std::optional<Error>>> finished;
  std::vector<bool> power;

  void transmit(ByteView bytes) override { sent.emplace_back(bytes.begin(), bytes.end()); }
  void link_changed(LinkState state, std::string_view reason) override { states.emplace_back(state, reason); }
  void period_ended() override { ++ends; }
  void period_started(const PeriodStart& start, ByteView start_message, ByteView echoed) override {
    starts.push_back(start);
    start_messages.emplace_back(start_message.begin(), start_message.end());
    echoes.emplace_back(echoed.begin(), echoed.end());
  }
  void bus_messages(ByteView messages) override { relayed.insert(relayed.end(), messages.begin(), messages.end()); }
  void period_complete(const Period& period) override { periods.push_back(period); }
  void command_finished(CommandToken token, const Error* error) override {
    finished.emplace_back(token, error != nullptr ? std::optional<Error>(*error) : std::nullopt);
  }
  void power_switch(bool on) override { power.push_back(on); }
};

/// Every module's reply, as the simulated bus sends them.
Bytes all_replies(int power_digital = power_status::kPowerOn) {
  Bytes bytes = encode_motor(reply::kLeftEncoder, 100, 0, 0);
  const auto add = [&](const Bytes& more) { bytes.insert(bytes.end(), more.begin(), more.end()); };
  add(encode_motor(reply::kRightEncoder, 200, 0, 0));
  add(hex("09 17 01 02 03 04 05 06 07 08"));
  add(hex("07 88 10 20 30 40 50 60"));
  add(encode_power(power_digital, {700, 0, 0, 0, 0}));
  return bytes;
}

struct Fixture {
  Recorder events;
  Link link{LinkSettings{}, events};
  SteadyTime now{};

  Fixture() {
    link.port_opened(now);
    link.tick(now);
  }
  /// The next period begins.
  void next_period() {
    now += 10ms;
    link.tick(now);
  }
  void answer(const Bytes& bytes = all_replies()) { link.bytes_received(bytes, now); }
};

Bytes period_bytes(const Bytes& first) {
  Bytes bytes = first;
  const Bytes polls = encode_polls();
  bytes.insert(bytes.end(), polls.begin(), polls.end());
  bytes.resize(kPeriodBytes, 0);
  return bytes;
}

bool succeeded(const std::pair<CommandToken, std::optional<Error>>& finished, CommandToken token) {
  return finished.first == token && !finished.second;
}

}  // namespace

TEST_CASE("each period: START numbered and stamped, the polls and zeros, END before the next") {
  Fixture f;
  CHECK(f.events.states.back().first == LinkState::Handshaking);
  REQUIRE(f.events.starts.size() == 1);
  CHECK(f.events.starts[0] == PeriodStart{1, 0});
  CHECK(f.events.start_messages[0] == hex("E9 00 01 00 00 00 00 00 00 00"));
  REQUIRE(f.events.sent.size() == 1);
  CHECK(f.events.sent[0] == period_bytes({}));
  CHECK(f.events.ends == 0);
  CHECK(f.link.next_deadline() == f.now + 10ms);

  f.answer();
  CHECK(f.events.states.back() == std::pair{LinkState::Up, std::string{}});
  CHECK(f.events.relayed == all_replies());
  REQUIRE(f.events.periods.size() == 1);  // complete: every module answered
  CHECK(f.events.periods[0].start.tick == 1);
  CHECK(f.events.periods[0].reading.left.encoder == 100);
  CHECK(f.events.periods[0].reading.ir[5] == 0x60);

  f.next_period();
  CHECK(f.events.ends == 1);
  CHECK(f.events.starts.back() == PeriodStart{2, 10000});  // microseconds since the first period
  CHECK(f.events.periods.size() == 1);                     // not delivered twice
  CHECK(f.link.stats().periods == 2);
}

TEST_CASE("a period missing a reply is delivered at its end with what came") {
  Fixture f;
  f.answer(encode_motor(reply::kLeftEncoder, 1, 0, 0));
  CHECK(f.events.periods.empty());
  f.next_period();
  REQUIRE(f.events.periods.size() == 1);
  CHECK(f.events.periods[0].reading.parts == part::kLeft);
  CHECK(f.link.stats().incomplete_periods == 1);
  CHECK(f.link.stats().missed_replies == 4);
}

TEST_CASE("speed commands: the first for each motor in a period wins, the others fail and are echoed") {
  Fixture f;
  REQUIRE(f.link.submit(1, hex("02 11 32 02 12 CE")));
  REQUIRE(f.link.submit(2, hex("02 11 10")));
  REQUIRE(f.link.submit(3, hex("02 12 05")));
  f.next_period();
  CHECK(f.events.sent.back() == period_bytes(hex("02 11 32 02 12 CE")));
  CHECK(f.events.echoes.back() == hex("02 11 32 02 12 CE 02 11 10 02 12 05"));
  REQUIRE(f.events.finished.size() == 3);
  CHECK(f.events.finished[0].first == 2);
  CHECK(f.events.finished[0].second->code == ErrorCode::Refused);
  CHECK(f.events.finished[1].first == 3);
  CHECK(succeeded(f.events.finished[2], 1));
  CHECK(f.link.stats().speed_conflicts == 2);
  CHECK(f.link.stats().commands_sent == 2);

  f.next_period();  // nothing waits
  CHECK(f.events.sent.back() == period_bytes({}));
  CHECK(f.events.echoes.back().empty());
}

TEST_CASE("a stop takes the period from speeds that came before it") {
  Fixture f;
  REQUIRE(f.link.submit(1, hex("02 11 32 02 12 32")));
  REQUIRE(f.link.submit(2, hex("02 11 00 02 12 00"), true));
  f.next_period();
  CHECK(f.events.sent.back() == period_bytes(hex("02 11 00 02 12 00")));
  REQUIRE(f.events.finished.size() == 2);
  CHECK(f.events.finished[0].first == 1);
  CHECK(f.events.finished[0].second->code == ErrorCode::Cancelled);
  CHECK(succeeded(f.events.finished[1], 2));
}

TEST_CASE("two stops in one period both succeed: an emergency stop behind the bridge's own stop is not refused") {
  Fixture f;
  REQUIRE(f.link.submit(1, hex("02 11 00 02 12 00"), true));
  REQUIRE(f.link.submit(2, hex("02 11 00 02 12 00"), true));
  REQUIRE(f.link.submit(3, hex("02 11 00")));
  f.next_period();
  CHECK(f.events.sent.back() == period_bytes(hex("02 11 00 02 12 00")));
  REQUIRE(f.events.finished.size() == 3);
  for (const auto& finished : f.events.finished) CHECK_FALSE(finished.second);
  CHECK(f.link.stats().speed_conflicts == 0);
}

TEST_CASE("other bus messages go after the polls, one a period - the rest is dropped and said so") {
  Fixture f;
  REQUIRE(f.link.submit(1, hex("02 30 01")));
  REQUIRE(f.link.submit(2, hex("02 31 02")));
  REQUIRE(f.link.submit(3, hex("21 73")));  // the RS232 line sensor port: there is none
  f.next_period();
  Bytes expected = encode_polls();
  const Bytes first = hex("02 30 01");
  expected.insert(expected.end(), first.begin(), first.end());
  expected.resize(kPeriodBytes, 0);
  CHECK(f.events.sent.back() == expected);
  CHECK(f.events.echoes.back() == hex("02 30 01 21 73"));
  REQUIRE(f.events.finished.size() == 2);
  CHECK(f.events.finished[0].first == 3);
  CHECK(f.events.finished[0].second.has_value());
  CHECK(f.events.finished[1].first == 1);
  f.next_period();
  CHECK(f.events.echoes.back() == hex("02 31 02"));
  CHECK(f.events.finished.back().first == 2);
  CHECK(f.link.stats().dropped_messages == 1);
}

TEST_CASE("commands that cannot go: bus closed, control messages, half messages, a full queue") {
  Recorder events;
  Link link{LinkSettings{}, events};
  CHECK(link.submit(1, hex("02 11 00")).error().code == ErrorCode::LinkDown);
  link.port_opened(SteadyTime{});
  CHECK(link.submit(1, hex("E1 02")).error().code == ErrorCode::Invalid);
  CHECK(link.submit(1, hex("02 11")).error().code == ErrorCode::Invalid);
  CHECK(link.submit(1, {}).error().code == ErrorCode::Invalid);
  CHECK(link.submit(1, hex("41 00")).error().message.find("not a message for the robot") != std::string::npos);
  for (CommandToken i = 0; i < 64; ++i) REQUIRE(link.submit(10 + i, hex("01 30")));
  CHECK(link.submit(99, hex("01 30")).error().code == ErrorCode::QueueFull);

  link.port_closed("device unplugged");
  CHECK(events.finished.size() == 64);
  CHECK(events.finished[0].second->code == ErrorCode::LinkLost);
  CHECK(link.state() == LinkState::Down);
  CHECK_FALSE(link.next_deadline());
  CHECK(link.shutdown_bytes().empty());
}

TEST_CASE("a silent module is named - a silent bus makes the link stale, and an answer brings it back") {
  Fixture f;
  f.answer();
  Bytes without_ir;
  for (const auto& part : {encode_motor(reply::kLeftEncoder, 1, 0, 0), encode_motor(reply::kRightEncoder, 1, 0, 0),
                           hex("09 17 01 02 03 04 05 06 07 08"), encode_power(1, {0, 0, 0, 0, 0})}) {
    without_ir.insert(without_ir.end(), part.begin(), part.end());
  }
  for (int i = 0; i < 10; ++i) {
    f.next_period();
    f.answer(without_ir);
  }
  f.next_period();
  CHECK(f.link.state() == LinkState::Up);
  CHECK(f.link.reason() == "no answer from the IR sensors");

  for (int i = 0; i < 50; ++i) f.next_period();
  CHECK(f.link.state() == LinkState::Stale);
  CHECK(f.link.reason() == "no module has answered for 500 ms");
  CHECK(f.link.stats().stale == 1);
  const auto changes = f.events.states.size();
  f.next_period();
  CHECK(f.events.states.size() == changes);  // the silence is reported once

  f.answer();
  CHECK(f.link.state() == LinkState::Up);
  CHECK(f.link.reason().empty());
}

TEST_CASE("the power switch: reported off after 25 replies in a row, and on again") {
  Fixture f;
  for (int i = 0; i < 24; ++i) {
    f.answer(all_replies(0));
    f.next_period();
  }
  CHECK(f.events.power.empty());
  f.answer(all_replies(0));
  CHECK(f.events.power == std::vector<bool>{false});
  CHECK(f.link.power_switch_off());
  f.next_period();
  f.answer(all_replies(0));
  CHECK(f.events.power.size() == 1);
  f.next_period();
  f.answer();
  CHECK(f.events.power == std::vector<bool>{false, true});
  CHECK(f.link.stats().power_off_requests == 1);
}

TEST_CASE("a late process does not make up the periods it missed, counts them, and keeps to the grid") {
  Fixture f;
  const SteadyTime first = *f.link.next_deadline() - 10ms;
  f.now += 35ms;
  f.link.tick(f.now);
  CHECK(f.events.starts.back().tick == 2);
  // Due at 10 ms, begun at 35: those due at 20 and 30 never began.
  CHECK(f.link.stats().late_periods == 1);
  CHECK(f.link.stats().skipped_periods == 2);
  CHECK(f.link.next_deadline() == first + 40ms);
  f.now = first + 40ms;
  f.link.tick(f.now);
  CHECK(f.events.starts.back().tick == 3);
  CHECK(f.link.next_deadline() == first + 50ms);
}

TEST_CASE("how late each period began after its deadline is counted against 0.2, 0.5 and 2 ms, and the latest kept") {
  Fixture f;
  const auto begin_after = [&](std::chrono::microseconds late) {
    f.now = *f.link.next_deadline() + late;
    f.link.tick(f.now);
  };
  begin_after(0us);
  begin_after(200us);  // on the mark: not over it
  begin_after(300us);
  begin_after(1500us);
  begin_after(2500us);
  const LinkStats stats = f.link.stats();
  CHECK(stats.started_over_200us == 3);
  CHECK(stats.started_over_500us == 2);
  CHECK(stats.started_over_2ms == 1);
  CHECK(stats.start_late_max_us == 2500);
  begin_after(100us);
  CHECK(f.link.stats().start_late_max_us == 2500);
  CHECK(f.link.stats().started_over_200us == 3);
}

TEST_CASE("a message from the bus cut short is abandoned at the next period") {
  Fixture f;
  f.answer(hex("05 A1 00"));
  f.next_period();
  f.answer(encode_motor(reply::kRightEncoder, 7, 0, 0));
  CHECK(f.link.stats().decoder.incomplete == 1);
  CHECK(f.events.periods.empty());
  f.next_period();
  REQUIRE(f.events.periods.size() == 1);
  CHECK(f.events.periods[0].reading.right.encoder == 7);
}

TEST_CASE("the last words: both motors to zero") {
  Fixture f;
  CHECK(f.link.shutdown_bytes() == hex("02 11 00 02 12 00"));
}

TEST_CASE("only bus messages are relayed: a START, END or unknown type made of noise reaches no client") {
  Fixture f;
  f.answer(hex("E1 01 41 00 E9 00 01 00 00 00 00 00 00 00 05 A1 00 07 00 80"));
  CHECK(f.events.relayed == hex("05 A1 00 07 00 80"));
  CHECK(f.link.stats().foreign_messages == 3);
  CHECK(f.link.stats().decoder.bytes == 20);
}

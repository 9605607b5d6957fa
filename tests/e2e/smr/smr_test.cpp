// The real daemon with --robot smr against the simulated SMR bus
// (flockbridge-sim --robot smr) over a pseudo-terminal, with clients of
// port 24901 that behave as programs built on the SMR library do
// (support/smr/smr_client): periods without gaps for ten of them, the eleventh
// refused, SMRD's arbitration, the stop when a driving client vanishes, a
// client sending garbage next to a good one; and the JSON feed, the
// commands, module loss, the power switch and the stop at shutdown.
#include <doctest/doctest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <csignal>
#include <string>
#include <thread>
#include <vector>

#include "e2e/rig.hpp"
#include "support/smr/smr_client.hpp"

using namespace flockbridge::testing;
using Stream = ChildProcess::Stream;
using nlohmann::json;

namespace {

/// The bridge's period (the rig's: the default).
constexpr std::chrono::milliseconds kPeriod{10};
/// A READY sent less than this before the next period was due came in time
/// for it: the period timer's rounding and a wake-up's delay lie within it.
constexpr std::chrono::milliseconds kReadyMargin{2};

/// What one client's loop of reads found.
struct Run {
  int periods = 0;
  int gaps = 0;       ///< periods missed although the program's READY came in time for them
  int late_gaps = 0;  ///< periods missed after a READY that came too late (the machine held the program up)
  int early_ends = 0;
  std::vector<std::string> violations;
  bool timed_out = false;
  std::vector<SmrClient::State> reads;  ///< every period read, in order
};

/// `count` reads in a row, as a program's loop does them, noting every gap
/// in the ticks, and whether the program's READY came in time for the
/// period it missed.
Run read_periods(SmrClient& client, int count) {
  Run run;
  std::vector<SmrClient::State>& reads = run.reads;
  reads.reserve(static_cast<std::size_t>(count));
  for (int i = 0; i < count; ++i) {
    const auto state = client.read();
    if (!state) {
      run.timed_out = true;
      break;
    }
    reads.push_back(*state);
  }
  run.periods = static_cast<int>(reads.size());
  run.violations = client.violations();
  if (reads.empty()) return run;
  // The bridge's periods are due on a grid of kPeriod (a period held up
  // does not move the next): the program sees the grid, shifted by the
  // shortest delivery, in the earliest any START came for its tick.
  auto grid = reads.front().start_received - kPeriod * reads.front().tick;
  for (const auto& read : reads) grid = std::min(grid, read.start_received - kPeriod * read.tick);
  for (std::size_t i = 1; i < reads.size(); ++i) {
    if (reads[i].ended_early) ++run.early_ends;
    const std::uint32_t missed = reads[i - 1].tick + 1;
    if (reads[i].tick == missed) continue;
    // SMRD's rule: a READY owes the program the first period that begins
    // after it came; one that came after the missed period was due, because
    // the machine held the program up, rightly misses it.
    const bool in_time = reads[i].ready_sent < grid + kPeriod * missed - kReadyMargin;
    ++(in_time ? run.gaps : run.late_gaps);
  }
  return run;
}

/// What the bridge's link has counted so far of a busy machine's doing:
/// periods it began over 0.2 ms late (the machine held its loop up, and a
/// READY that came in time may have been read only after the period it was
/// owed had begun), and modules whose reply missed its period (the machine
/// held the simulated robot up: the period goes out without that module's
/// messages).
struct LinkMarks {
  std::uint64_t begun_late = 0;
  std::uint64_t missed_replies = 0;

  LinkMarks operator-(const LinkMarks& before) const {
    return {begun_late - before.begun_late, missed_replies - before.missed_replies};
  }
};

LinkMarks link_marks(Rig& rig) {
  TcpClient asking = rig.json_client();
  const nlohmann::json link = bridge_stats(asking)["link"];
  return {link["started_over_200us"].get<std::uint64_t>(), link["missed_replies"].get<std::uint64_t>()};
}

/// A program misses a period its READY came in time for only when the
/// bridge was held up (a busy machine): never more such gaps than the
/// periods the bridge began late meanwhile.
void check_gaps(const Run& run, const LinkMarks& meanwhile) {
  if (run.gaps > 0) MESSAGE(run.gaps << " periods missed while the bridge began " << meanwhile.begun_late << " late");
  CHECK(static_cast<std::uint64_t>(run.gaps) <= meanwhile.begun_late);
}

/// The bridge's promise for a program's run of reads: every read a whole
/// period; a period its READY came in time for missed only when the bridge
/// began periods late; a period read short (its END before all four
/// modules' messages) only when a module's reply missed that period, which
/// the bridge counts. A program the machine held up past a period misses it
/// rightly: said, and not the bridge's doing.
void check_run(const Run& run, int count, const LinkMarks& meanwhile) {
  CHECK_FALSE(run.timed_out);
  CHECK(run.periods == count);
  check_gaps(run, meanwhile);
  if (run.late_gaps > 0) MESSAGE(run.late_gaps << " periods missed after a READY the machine held up");
  if (run.early_ends > 0) {
    MESSAGE(run.early_ends << " periods read short while " << meanwhile.missed_replies
                           << " replies missed their period");
  }
  CHECK(static_cast<std::uint64_t>(run.early_ends) <= meanwhile.missed_replies);
  CHECK(run.violations.empty());
  for (const std::string& violation : run.violations) MESSAGE(violation);
}

/// The simulator's state line ("state x_m ... left_speed ... right_speed ...").
std::string sim_state(Rig& rig) {
  rig.sim().send_line("state");
  const auto line = rig.sim().wait_for(Stream::Stdout, "state x_m");
  REQUIRE(line);
  REQUIRE(rig.sim().wait_for(Stream::Stdout, "done state"));
  return *line;
}

/// Waits until the simulator's motors run at these speeds (as on the bus).
bool wait_speeds(Rig& rig, int left, int right) {
  const std::string wanted = "left_speed " + std::to_string(left) + " right_speed " + std::to_string(right) + " ";
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(5);
  while (std::chrono::steady_clock::now() < deadline) {
    if (sim_state(rig).find(wanted) != std::string::npos) return true;
  }
  return false;
}

}  // namespace

TEST_CASE("smr: an SMR program's read gets a whole period: tick, stamp, encoders, line, IR and power") {
  Rig rig(smr_rig());
  SmrClient client(rig.port());
  const LinkMarks before = link_marks(rig);
  // Three reads in a row (the third also brings the power module's reply
  // of the second).
  const Run run = read_periods(client, 3);
  const LinkMarks meanwhile = link_marks(rig) - before;
  REQUIRE_FALSE(run.timed_out);
  REQUIRE(run.reads.size() == 3);
  const SmrClient::State& first = run.reads[0];
  const SmrClient::State& second = run.reads[1];
  CHECK(first.tick > 0);
  // The simulated robot stands on the line with a full battery and its power
  // switch on: seen in a period the line sensor answered in. On a busy
  // machine, or under emulation, a module's answer can miss the link's first
  // period, which then holds none (the bridge promises the period, and says
  // which modules were missing in it; SMRD's programs see zeros).
  const auto on_line =
      std::find_if(run.reads.begin(), run.reads.end(), [](const SmrClient::State& read) { return read.ls[0] > 200; });
  REQUIRE_MESSAGE(on_line != run.reads.end(), "no period of three held the line sensor's answer");
  CHECK(on_line->ls[3] < 100);
  CHECK(on_line->ls[4] < 100);
  // The next period the program was owed: the one after, unless the machine
  // held the program's READY, or the bridge, up past it (under emulation
  // or on a busy machine it can).
  check_gaps(run, meanwhile);
  CHECK(second.tick > first.tick);
  if (run.late_gaps == 0 && run.gaps == 0) CHECK(second.tick == first.tick + 1);
  // The robot's stamp (when the bridge began the period, in microseconds)
  // advances by about 10 ms a period; more when the machine held the bridge
  // up past a period's start, which the bridge counts (link.started_over_200us).
  // A period begun late and the next on time are closer than 10 ms: both
  // bounds hold only when none was late.
  const auto stamp_us = static_cast<std::uint32_t>(second.ts - first.ts) / (second.tick - first.tick);
  if (meanwhile.begun_late == 0) {
    CHECK(stamp_us > 5000);
    CHECK(stamp_us < 40000);
  } else {
    MESSAGE(meanwhile.begun_late << " periods begun late: " << stamp_us << " us a period");
  }
  CHECK(run.violations.empty());
  CHECK(client.disconnect());
}

TEST_CASE("smr: ten SMR programs read 1000 periods each without a gap - an eleventh is refused, the ten unaffected") {
  Rig rig(smr_rig());
  constexpr int kClients = 10;
  constexpr int kPeriods = 1000;
  std::vector<std::unique_ptr<SmrClient>> clients;
  for (int i = 0; i < kClients; ++i) {
    clients.push_back(std::make_unique<SmrClient>(rig.port()));
    REQUIRE(clients.back()->read());  // connected and served before the eleventh comes
  }
  std::vector<Run> runs(kClients);
  const LinkMarks before = link_marks(rig);
  std::vector<std::thread> threads;
  threads.reserve(kClients);
  for (int i = 0; i < kClients; ++i) {
    threads.emplace_back(
        [&, i] { runs[static_cast<std::size_t>(i)] = read_periods(*clients[static_cast<std::size_t>(i)], kPeriods); });
  }
  {
    SmrClient eleventh(rig.port());
    CHECK(rig.expect_log("refused client").find("the limit is 10") != std::string::npos);
    CHECK(eleventh.tcp().wait_closed());
    CHECK(eleventh.tcp().buffer().empty());  // nothing it could not parse: nothing at all
  }
  for (std::thread& thread : threads) thread.join();
  const LinkMarks meanwhile = link_marks(rig) - before;
  for (int i = 0; i < kClients; ++i) {
    CAPTURE(i);
    check_run(runs[static_cast<std::size_t>(i)], kPeriods, meanwhile);
  }
  for (auto& client : clients) CHECK(client->disconnect());
}

TEST_CASE("smr: two programs set speeds: the first drives, the other's speeds are refused and counted") {
  Rig rig(smr_rig());
  SmrClient first(rig.port());
  SmrClient second(rig.port());
  auto json_client = rig.json_client();
  REQUIRE(first.read());
  REQUIRE(second.read());
  first.write(10, 10);
  CHECK(wait_speeds(rig, 10, -10));
  // The second's speeds never reach the bus (no period echoes them), and
  // it reads on as before: it is not told, as SMRD has no word for it.
  second.write(-20, -20);
  for (int i = 0; i < 5; ++i) {
    REQUIRE(second.read());
    for (const std::string& echoed : second.last_other()) CHECK(echoed != bytes({0x02, 0x11, 0xEC}));
  }
  CHECK(wait_speeds(rig, 10, -10));
  const auto stats = bridge_stats(json_client);
  CHECK(stats["control"]["refused"].get<int>() >= 1);
  CHECK(stats["control"]["holder"] == 1);
  CHECK(first.violations().empty());
  CHECK(second.violations().empty());
}

TEST_CASE("smr: a program that stops reading has at most two periods outstanding and holds nobody up") {
  Rig rig(smr_rig());
  SmrClient reader(rig.port());
  REQUIRE(reader.read());
  // Three READYs at once, then nothing more read or said, as a program
  // stuck in its own work: SMRD banks two, so it is owed this period and
  // the next, no more.
  TcpClient stuck(rig.port());
  stuck.send(std::vector<std::uint8_t>{0xE1, 0x02, 0xE1, 0x02, 0xE1, 0x02});
  const LinkMarks before = link_marks(rig);
  const Run run = read_periods(reader, 100);
  check_gaps(run, link_marks(rig) - before);
  CHECK(run.violations.empty());
  CHECK(stuck.drain_available());
  std::size_t starts = 0;
  std::size_t ends = 0;
  const std::string& got = stuck.buffer();
  for (std::size_t at = 0; at < got.size(); at += (static_cast<unsigned char>(got[at]) & 0x1F) + 1U) {
    if (at + 1 >= got.size() || static_cast<unsigned char>(got[at]) >> 5 != 7) continue;
    if (got[at + 1] == 0) ++starts;
    if (got[at + 1] == 1) ++ends;
  }
  CHECK(starts == 2);
  CHECK(ends == 2);
}

TEST_CASE(
    "smr: a program killed while driving: the bridge stops the motors - one that leaves properly stops them itself") {
  Rig rig(smr_rig());
  {
    SmrClient driver(rig.port());
    REQUIRE(driver.read());
    driver.write(30, 30);
    CHECK(wait_speeds(rig, 30, -30));
  }  // gone without a word, as a killed program's socket closes
  rig.expect_log("safety stop");
  CHECK(wait_speeds(rig, 0, 0));

  SmrClient polite(rig.port());
  REQUIRE(polite.read());
  polite.write(-15, 15);
  CHECK(wait_speeds(rig, -15, -15));
  CHECK(polite.disconnect());  // smr_disconnect: zero speeds before it closes
  CHECK(wait_speeds(rig, 0, 0));
}

TEST_CASE("smr: a client sending garbage is disconnected or ignored, and the period stream of a good one goes on") {
  Rig rig(smr_rig());
  SmrClient good(rig.port());
  REQUIRE(good.read());
  const LinkMarks before = link_marks(rig);
  std::atomic<bool> done{false};
  Run run;
  std::thread reader([&] {
    run = read_periods(good, 300);
    done = true;
  });

  // A message of a type with no meaning: the stream cannot be read any further.
  SmrClient bad_type(rig.port());
  bad_type.send_raw({0x43, 0x01, 0x02, 0x03});
  CHECK(rig.expect_log("not SMRD's protocol: a message of type 2").size() > 0);
  CHECK(bad_type.tcp().wait_closed());

  // Random bytes: the first of no known type ends it the same way.
  SmrClient noise(rig.port());
  noise.send_raw({0xE1, 0x05, 0x9B, 0xC3, 0x51, 0x00, 0x00, 0xFF, 0x17});
  CHECK(noise.tcp().wait_closed());

  // A message cut short is dropped once it has waited for its bytes too long.
  SmrClient truncated(rig.port());
  truncated.send_raw({0x05, 0xA1, 0x00});
  CHECK(rig.expect_log("incomplete message discarded: 3 bytes").size() > 0);

  // An unknown control message is logged and ignored.
  truncated.send_raw({0xE1, 0x07});
  CHECK(rig.expect_log("SMRD control message [control: 07] ignored").size() > 0);
  CHECK(truncated.read());

  reader.join();
  CHECK(done);
  check_run(run, 300, link_marks(rig) - before);
}

TEST_CASE("smr: on a noisy bus SMR programs still get every period, and nothing they cannot parse") {
  RigOptions options = smr_rig();
  options.sim_args = {"--ber-to-host", "1e-3", "--seed", "3"};
  Rig rig(options);
  SmrClient program(rig.port());
  REQUIRE(program.read());
  const LinkMarks before = link_marks(rig);
  const Run run = read_periods(program, 300);
  CHECK_FALSE(run.timed_out);
  check_gaps(run, link_marks(rig) - before);
  CHECK(run.violations.empty());
  for (const std::string& violation : run.violations) MESSAGE(violation);
  auto client = rig.json_client();
  const json link = link_stats(client);
  CHECK(link["foreign_messages"].get<long>() + link["missed_replies"].get<long>() > 0);  // the noise was there
  CHECK(link["state"] == "up");
}

TEST_CASE("smr: JSON clients get every period as a sensor message and drive the robot with SI units") {
  Rig rig(smr_rig());
  auto client = rig.json_client();
  auto sensor = client.read_json_type("sensor");
  REQUIRE(sensor);
  const long first_tick = (*sensor)["tick"].get<long>();
  auto next = client.read_json_type("sensor");
  REQUIRE(next);
  // Unthrottled: every period the robot answered in. A period in which no
  // module answered in time (a busy machine's simulator can be that late)
  // has no readings to publish, and its replies are counted as missed.
  const long next_tick = (*next)["tick"].get<long>();
  CHECK(next_tick > first_tick);
  if (next_tick != first_tick + 1) CHECK(link_stats(client)["missed_replies"].get<long>() > 0);
  // A period in which only some modules answered in time names the others in
  // `missing` and leaves their fields out; the fields are checked on a whole one.
  if (next->contains("missing")) CHECK(link_stats(client)["missed_replies"].get<long>() > 0);
  const json whole =
      next->contains("missing") ? sensor_where(client, [](const json& m) { return !m.contains("missing"); }) : *next;
  CHECK(whole["battery_v"].get<double>() == doctest::Approx(12.4).epsilon(0.01));
  CHECK(whole["power"]["inputs"] == json::array({"power_on"}));
  CHECK(whole["line"].size() == 8);
  CHECK(whole["ir"].size() == 6);
  CHECK(whole["wheels"]["left"]["status"] == json::array());

  client.send("{\"cmd\":\"drive\",\"v_mm_s\":200,\"w_deg_s\":0,\"id\":1}\n");
  auto ok = client.read_json_type("ok");
  REQUIRE(ok);
  CHECK(ok->at("id") == 1);
  const json moving = sensor_where(client, [](const json& m) { return m["pose"]["x_mm"].get<double>() > 100; });
  CHECK(moving["v_mm_s"].get<double>() == doctest::Approx(200).epsilon(0.2));
  CHECK(std::abs(moving["pose"]["y_mm"].get<double>()) < 5);
  CHECK(moving["wheels"]["left"]["speed"] == moving["wheels"]["right"]["speed"]);  // as struct smr shows them

  client.send("{\"cmd\":\"stop\",\"id\":2}\n");
  CHECK(client.read_json_type("ok"));
  CHECK(wait_speeds(rig, 0, 0));
  client.send("{\"cmd\":\"drive\",\"v_mm_s\":5000,\"id\":\"fast\"}\n");
  auto refused = client.read_json_type("error");
  REQUIRE(refused);
  CHECK(refused->at("error").get<std::string>().find("faster than the motors go") != std::string::npos);
  client.send("{\"cmd\":\"speeds\",\"left\":12,\"right\":-12,\"id\":3}\n");
  CHECK(client.read_json_type("ok"));
  CHECK(wait_speeds(rig, 12, 12));

  // 100 periods a second pile up while a test looks elsewhere: the answer
  // to subscribe comes after every period sent before it.
  client.send("{\"cmd\":\"subscribe\",\"interval_ms\":100,\"id\":4}\n");
  CHECK(client.read_json_type("ok"));
  check_throttled(client, 0.1);
}

TEST_CASE("smr: a silent module is named, a silent bus makes the link stale, and both recover by themselves") {
  Rig rig(smr_rig());
  auto client = rig.json_client();
  rig.sim_command("module-silent ir on");
  rig.expect_log("robot link up: no answer from the IR sensors");
  // The periods from before the silence may still be on their way, and on a
  // slow machine another module's reply can miss a period's end now and then.
  // A period where only the IR sensors are missing says so; it carries their
  // last answer for the first 10 periods ([smr.link] module_loss_periods),
  // and no IR after that.
  const auto only_ir_missing = [](const json& m) {
    return m.contains("missing") && m["missing"] == json::array({"ir"});
  };
  const json first = sensor_where(client, only_ir_missing);
  CHECK(first.contains("ir"));
  const json partial = sensor_where(client, [&](const json& m) { return only_ir_missing(m) && !m.contains("ir"); });
  CHECK(partial["tick"].get<long>() - first["tick"].get<long>() >= 10);
  CHECK(partial.contains("line"));
  rig.sim_command("module-silent ir off");
  rig.expect_log("robot link up");

  rig.sim_command("silent on");
  rig.expect_log("robot link stale: no module has answered for 500 ms");
  rig.sim_command("silent off");
  rig.expect_log("robot link up");
  CHECK(link_stats(client)["stale"] == 1);

  rig.sim_command("unplug");
  rig.expect_log("robot link down");
  rig.sim_command("replug");
  rig.expect_log("robot link up");
  SmrClient program(rig.port());
  CHECK(program.read());
}

TEST_CASE("smr: the power switch turned off is reported, and nothing is powered off") {
  Rig rig(smr_rig());
  auto client = rig.json_client();
  rig.sim_command("power-switch off");
  auto off = client.read_json_type("power_switch");
  REQUIRE(off);
  CHECK(off->at("on") == false);
  rig.expect_log("the SMR's power switch is off");
  rig.sim_command("power-switch on");
  auto on = client.read_json_type("power_switch");
  REQUIRE(on);
  CHECK(on->at("on") == true);
  CHECK(link_stats(client)["power_off_requests"] == 1);
}

TEST_CASE("smr: stopping the bridge stops the motors") {
  Rig rig(smr_rig());
  auto client = rig.json_client();
  client.send("{\"cmd\":\"speeds\",\"left\":25,\"right\":25}\n");
  CHECK(wait_speeds(rig, 25, -25));
  rig.signal_bridge(SIGTERM);
  CHECK(rig.bridge().wait_exit() == 0);
  CHECK(wait_speeds(rig, 0, 0));
}

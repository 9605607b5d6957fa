#include <doctest/doctest.h>

#include <array>
#include <cmath>
#include <random>
#include <string>

#include "flockbridge/protocol/flockbot/json.hpp"
#include "flockbridge/protocol/flockbot/link.hpp"
#include "flockbridge/protocol/json_codec.hpp"
#include "flockbridge/protocol/json_depth.hpp"

using namespace flockbridge::protocol;
using namespace flockbridge::protocol::flockbot;
using Json = nlohmann::json;
namespace codec = flockbridge::protocol::json;

namespace {

Bytes command_of(std::string_view line) {
  auto parsed = parse_json_request(line);
  REQUIRE_MESSAGE(parsed.request, (parsed.request ? "" : parsed.request.error().message));
  REQUIRE(std::holds_alternative<SendCommand>(parsed.request.value()));
  return std::get<SendCommand>(parsed.request.value()).payload;
}

std::string refusal(std::string_view line) {
  auto parsed = parse_json_request(line);
  return parsed.request ? std::string() : parsed.request.error().message;
}

Bytes b(std::string_view code, std::initializer_list<int> data = {}) {
  Bytes out(code.begin(), code.end());
  for (int v : data) out.push_back(static_cast<Byte>(v));
  return out;
}

}  // namespace

TEST_CASE("every JSON command builds the payload of the protocol tables") {
  CHECK(command_of(R"({"cmd":"claw_open"})") == b("DGO"));
  CHECK(command_of(R"({"cmd":"claw_close"})") == b("DGC"));
  CHECK(command_of(R"({"cmd":"claw_can_close"})") == b("DGG"));
  CHECK(command_of(R"({"cmd":"claw_set","pos":30})") == b("DGS", {30}));
  CHECK(command_of(R"({"cmd":"camera_up"})") == b("DCU"));
  CHECK(command_of(R"({"cmd":"camera_down"})") == b("DCD"));
  CHECK(command_of(R"({"cmd":"camera_forward"})") == b("DCF"));
  CHECK(command_of(R"({"cmd":"camera_set","pos":100})") == b("DCS", {100}));
  CHECK(command_of(R"({"cmd":"lcd_clear"})") == b("DLC"));
  CHECK(command_of(R"({"cmd":"lcd_cursor","row":2,"col":16})") == b("DLU", {2, 16}));
  CHECK(command_of(R"({"cmd":"lcd_write","text":"Hi there"})") == b("DLSHi there", {0}));
  CHECK(command_of(R"({"cmd":"move","speed":-67})") == b("DMS", {0xBD}));
  CHECK(command_of(R"({"cmd":"move_distance","speed":20,"dist":255})") == b("DMD", {20, 255}));
  CHECK(command_of(R"({"cmd":"wheels","left":-100,"right":100})") == b("DMW", {0x9C, 100}));
  CHECK(command_of(R"({"cmd":"rotate","speed":-5})") == b("DRC", {0xFB}));
  CHECK(command_of(R"({"cmd":"arc","speed":50,"dist":128,"deg":359})") == b("DRA", {50, 128, 0x67, 0x01}));
  CHECK(command_of(R"({"cmd":"rotate_degrees","speed":-30,"deg":90})") == b("DRD", {0xE2, 90, 0}));
  CHECK(command_of(R"({"cmd":"stop"})") == b("DST"));
  CHECK(command_of(R"({"cmd":"reset_odometer"})") == b("DMR"));
  CHECK(command_of(R"({"cmd":"emergency"})") == b("EMG"));
  CHECK(command_of(R"({"cmd":"raw","payload":[68,77,83,10]})") == b("DMS", {10}));
}

TEST_CASE("the stats message carries every counter") {
  StatsSnapshot snapshot;
  snapshot.uptime_s = 2.5;
  snapshot.link_state = LinkState::Up;
  LinkStats link;
  link.decoder.bad_checksum = 3;
  link.naks_received = 4;
  snapshot.link_counters = link_counters(link);
  snapshot.commands = {.sent = 12, .acknowledged = 10, .delivered = 11, .confirmed = 10, .unconfirmed = 1, .failed = 1};
  snapshot.bridge.failed[static_cast<std::size_t>(ErrorCode::RateLimited)] = 5;
  snapshot.bridge.clients_refused = 6;
  snapshot.clients.push_back(ClientSnapshot{7, "json", "127.0.0.1:9", 8, 9, 1});
  const Json stats = Json::parse(codec::stats(11, snapshot));
  CHECK(stats["type"] == "stats");
  CHECK(stats["id"] == 11);
  CHECK(stats["link"]["state"] == "up");
  CHECK(stats["link"]["bad_checksum"] == 3);
  CHECK(stats["link"]["naks_received"] == 4);
  CHECK(stats["commands"]["sent"] == 12);
  CHECK(stats["commands"]["acknowledged"] == 10);
  CHECK(stats["commands"]["unconfirmed"] == 1);
  CHECK(stats["commands"]["failed"]["rate_limited"] == 5);
  CHECK(stats["commands"]["failed"].size() == kErrorCodeCount);
  CHECK(stats["clients"]["refused"] == 6);
  CHECK(stats["clients"]["list"][0]["sensor_dropped"] == 9);
  auto request = parse_json_request(R"({"cmd":"stats","id":1})");
  CHECK(std::holds_alternative<StatsRequest>(request.request.value()));
}

TEST_CASE("subscribe and unsubscribe - the id is echoed whatever its type") {
  auto sub = parse_json_request(R"({"cmd":"subscribe","interval_ms":250,"id":"a1"})");
  REQUIRE(sub.request);
  CHECK(std::get<Subscribe>(sub.request.value()).interval_ms == 250);
  CHECK(sub.id == "a1");
  auto every = parse_json_request(R"({"cmd":"subscribe"})");
  CHECK(std::get<Subscribe>(every.request.value()).interval_ms == 0);
  CHECK(every.id.is_null());
  auto unsub = parse_json_request(R"({"cmd":"unsubscribe","id":3})");
  CHECK(std::holds_alternative<Unsubscribe>(unsub.request.value()));
  CHECK(unsub.id == 3);
}

TEST_CASE("JSON refusals name the command, the argument and the rule") {
  CHECK(refusal("not json") == R"(not valid JSON; send one object per line, e.g. {"cmd":"stop"})");
  CHECK(refusal("[1,2]") == R"(a command is a JSON object, e.g. {"cmd":"stop"})");
  CHECK(refusal(R"({"speed":3})").find("missing \"cmd\"") == 0);
  CHECK(refusal(R"({"cmd":"fly"})") == "unknown command 'fly'");
  CHECK(refusal(R"({"cmd":"move"})") == "move: needs 'speed'");
  CHECK(refusal(R"({"cmd":"move","speed":150})") == "move: speed must be from -100 to 100, got 150");
  CHECK(refusal(R"({"cmd":"move","speed":10.5})") == "move: speed must be a whole number");
  CHECK(refusal(R"({"cmd":"move","speed":18446744073709551615})") ==
        "move: speed must be from -100 to 100, got 9223372036854775807");
  CHECK(refusal(R"({"cmd":"subscribe","interval_ms":18446744073709551615})").find("interval_ms must be") !=
        std::string::npos);
  CHECK(refusal(R"({"cmd":"raw","payload":[68,18446744073709551615]})") ==
        "raw: payload must hold whole numbers from 0 to 255");
  CHECK(refusal(R"({"cmd":"move","speed":"fast"})") == "move: speed must be a whole number");
  CHECK(refusal(R"({"cmd":"move","spead":10})") == "move: has no argument 'spead'; it takes speed");
  CHECK(refusal(R"({"cmd":"stop","speed":0})") == "stop: has no argument 'speed'; it takes none");
  CHECK(refusal(R"({"cmd":"lcd_write","text":"seventeen chars!!"})") ==
        "lcd_write: text is 17 characters; the display shows at most 16");
  CHECK(refusal(R"({"cmd":"lcd_write","text":5})") == "lcd_write: text must be a string");
  CHECK(refusal(R"({"cmd":"raw","payload":[67,70,71]})").find("CFG is sent by the bridge") == 0);
  CHECK(refusal(R"({"cmd":"raw","payload":[68,256]})") == "raw: payload must hold whole numbers from 0 to 255");
  CHECK(refusal(R"({"cmd":"subscribe","interval_ms":-1})").find("interval_ms must be") != std::string::npos);
  auto with_id = parse_json_request(R"({"cmd":"move","speed":500,"id":42})");
  CHECK(with_id.id == 42);
}

TEST_CASE("sensor messages carry volts and millimetres beside the raw values when factors are set") {
  SensorReading r;
  r.battery = 505;
  r.ir = {0, 1023, 512, 100, 7};
  r.odometer_left = -100;
  r.odometer_right = 250;
  r.odometer_avg = 75;
  r.wheel_watcher_left = 3;
  r.wheel_watcher_right = -3;
  SensorUnits units;
  units.battery_volts_per_count = 0.0147;
  units.ir_volts_per_count = 5.0 / 1023;
  units.odometer_mm_per_count = 1.25;
  const Json both = Json::parse(sensor_json(r, 1, 0, units));
  CHECK(both["battery"] == 505);            // raw values stay
  CHECK_FALSE(both.contains("battery_v"));  // the common robot model's, which the driver adds
  CHECK(both["ir_v"] == Json::parse("[0, 5, 2.5024, 0.4888, 0.0342]"));
  CHECK(both["odometer_mm"] == Json::parse(R"({"left":-125,"right":312.5,"avg":93.75})"));
  CHECK_FALSE(both.contains("wheel_watcher_mm"));  // no factor, no converted value
  units.wheel_watcher_mm_per_count = 0.5;
  CHECK(Json::parse(sensor_json(r, 1, 0, units))["wheel_watcher_mm"] == Json::parse(R"({"left":1.5,"right":-1.5})"));
  // Rounded to what the sensors resolve: the text carries no float noise.
  CHECK(sensor_json(r, 1, 0, units).find(R"("ir_v":[0.0,5.0,2.5024,0.4888,0.0342])") != std::string::npos);
  for (const char* key : {"ir_v", "odometer_mm", "wheel_watcher_mm"}) {
    CHECK_FALSE(Json::parse(sensor_json(r, 1, 0)).contains(key));
  }
}

TEST_CASE("sensor messages, written directly, read back as the values they carry - for any reading") {
  std::mt19937 random(33);
  std::uniform_int_distribution<int> any16(-32768, 32767);
  std::uniform_int_distribution<int> any_u16(0, 65535);
  std::uniform_int_distribution<int> any8(0, 255);
  std::uniform_real_distribution<double> factor(-3.0, 3.0);
  const auto scaled = [](double raw, double f, double steps) { return std::round(raw * f * steps) / steps; };
  for (int round = 0; round < 2000; ++round) {
    CAPTURE(round);
    SensorReading r;
    r.battery = static_cast<std::uint16_t>(any_u16(random));
    for (auto& ir : r.ir) ir = static_cast<std::uint16_t>(any_u16(random));
    r.l_bump = static_cast<std::uint8_t>(any8(random));
    r.h_bump = static_cast<std::uint8_t>(any8(random));
    r.odometer_left = static_cast<std::int16_t>(any16(random));
    r.odometer_right = static_cast<std::int16_t>(any16(random));
    r.odometer_avg = static_cast<std::int16_t>(any16(random));
    r.wheel_watcher_left = static_cast<std::int16_t>(any16(random));
    r.wheel_watcher_right = static_cast<std::int16_t>(any16(random));
    SensorUnits units;  // every other round without factors
    if (round % 2 == 1) units = {factor(random), factor(random), factor(random), factor(random)};
    const std::uint64_t seq = static_cast<std::uint64_t>(round) * std::uint64_t{1234567891};
    const double ts = 1.7e9 + round * 0.013;

    Json expected{{"type", "sensor"},
                  {"seq", seq},
                  {"ts", ts},
                  {"battery", r.battery},
                  {"ir", r.ir},
                  {"l_bump", r.l_bump},
                  {"h_bump", r.h_bump},
                  {"odometer", {{"left", r.odometer_left}, {"right", r.odometer_right}, {"avg", r.odometer_avg}}},
                  {"wheel_watcher", {{"left", r.wheel_watcher_left}, {"right", r.wheel_watcher_right}}}};
    if (units.battery_volts_per_count != 0) {
      Json volts = Json::array();
      for (const auto ir : r.ir) volts.push_back(scaled(ir, units.ir_volts_per_count, 1e4));
      expected["ir_v"] = volts;
      const double o = units.odometer_mm_per_count;
      expected["odometer_mm"] = {{"left", scaled(r.odometer_left, o, 1e2)},
                                 {"right", scaled(r.odometer_right, o, 1e2)},
                                 {"avg", scaled(r.odometer_avg, o, 1e2)}};
      const double w = units.wheel_watcher_mm_per_count;
      expected["wheel_watcher_mm"] = {{"left", scaled(r.wheel_watcher_left, w, 1e2)},
                                      {"right", scaled(r.wheel_watcher_right, w, 1e2)}};
    }
    const std::string text = sensor_json(r, seq, ts, units);
    CHECK(Json::parse(text) == expected);  // every value, exactly (reals compare as doubles)
    CHECK(text.find("e+") == std::string::npos);
  }
  // Whole reals keep their ".0", so that a reader's language sees a real.
  SensorReading zero;
  CHECK(sensor_json(zero, 1, 2, SensorUnits{1, 1, 1, 1}).find(R"("ts":2.0,"battery":0,)") != std::string::npos);
  CHECK(sensor_json(zero, 1, 2, SensorUnits{1, 1, 1, 1}).find(R"("ir_v":[0.0,)") != std::string::npos);
}

TEST_CASE("the messages the bridge sends, in the documented shapes") {
  SensorReading r;
  r.battery = 780;
  r.ir = {1, 2, 3, 4, 5};
  r.l_bump = 1;
  r.odometer_left = -10;
  r.odometer_right = 12;
  r.odometer_avg = 1;
  r.wheel_watcher_left = -3;
  r.wheel_watcher_right = 4;
  const Json sensor = Json::parse(sensor_json(r, 17, 1700000000.25));
  CHECK(sensor == Json::parse(R"({"type":"sensor","seq":17,"ts":1700000000.25,"battery":780,"ir":[1,2,3,4,5],
      "l_bump":1,"h_bump":0,"odometer":{"left":-10,"right":12,"avg":1},"wheel_watcher":{"left":-3,"right":4}})"));
  CHECK(sensor_json(r, 1, 0).rfind(R"({"type":"sensor",)", 0) == 0);  // "type" first, for people reading

  const std::vector<std::string> commands{"move", "stop"};
  CHECK(codec::hello("abc", LinkState::Up, "", 4, "driver", {"flockbot", "flockbot", commands}) ==
        R"({"type":"hello","version":2,"session":"abc","robot":"flockbot","model":"flockbot","link":"up",)"
        R"("client":4,"role":"driver","access":{"pin":false,"teacher":false},"capabilities":["move","stop"],)"
        R"("geometry":{"footprint":{"radius_mm":null,"length_mm":null,"width_mm":null},"wheel_base_mm":null,)"
        R"("max_v_mm_s":null,"max_w_deg_s":null,"ranges":[],"bumpers":[]}})");
  CHECK(Json::parse(
            codec::hello("abc", LinkState::Down, "no port", 9, "viewer", {"pioneer", "p3dx-sh", {}}, {true, false})) ==
        Json::parse(R"({"type":"hello","version":2,"session":"abc","robot":"pioneer","model":"p3dx-sh",
            "link":"down","reason":"no port","client":9,"role":"viewer","access":{"pin":true,"teacher":false},
            "capabilities":[],"geometry":{"footprint":{"radius_mm":null,"length_mm":null,"width_mm":null},
            "wheel_base_mm":null,"max_v_mm_s":null,"max_w_deg_s":null,"ranges":[],"bumpers":[]}})"));
  // A simulated robot says so, with the room it drives in (and its boxes) when its simulator told it.
  const std::array<double, 4> room{-2000, -1500, 2000, 1500};
  const std::array<double, 4> box{-1400, 500, -1000, 900};
  const Json simulated =
      Json::parse(codec::hello("abc", LinkState::Up, "", 1, "driver", {"smr", "smr", {}, true, room, {box}}));
  CHECK(simulated["simulated"] ==
        Json::parse(R"({"room_mm":[-2000.0,-1500.0,2000.0,1500.0],"boxes_mm":[[-1400.0,500.0,-1000.0,900.0]]})"));
  CHECK(Json::parse(codec::hello("abc", LinkState::Up, "", 1, "driver",
                                 {"flockbot", "flockbot", {}, true, {}}))["simulated"]["room_mm"]
            .is_null());
  CHECK_FALSE(
      Json::parse(codec::hello("abc", LinkState::Up, "", 1, "driver", {"smr", "smr", {}})).contains("simulated"));
  // A replay says so, with its file, when it was recorded and how fast it plays.
  const codec::ReplayDescription replay{"robot-20261127-093012.mcap", 1795752276.5, 2};
  codec::RobotDescription replayed{"smr", "smr", {}};
  replayed.replay = &replay;
  CHECK(Json::parse(codec::hello("abc", LinkState::Up, "", 1, "viewer", replayed))["replay"] ==
        Json::parse(R"({"file":"robot-20261127-093012.mcap","recorded_at":1795752276.5,"speed":2.0})"));
  // A robot plug and play found says where, at which speed and how soon; the USB adapter when it is on one.
  const codec::FoundDescription on_usb{"/dev/serial/by-id/usb-FTDI_FT232R-if00-port0", 9600, 12.345, "0403:6001"};
  codec::RobotDescription found{"pioneer", "p3dx-sh", {}};
  found.found = &on_usb;
  CHECK(Json::parse(codec::hello("abc", LinkState::Up, "", 1, "viewer", found))["found"] ==
        Json::parse(R"({"device":"/dev/serial/by-id/usb-FTDI_FT232R-if00-port0","baud":9600,"took_ms":12.3,)"
                    R"("usb":"0403:6001"})"));
  const codec::FoundDescription on_uart{"/dev/ttyAMA0", 115200, 4100, ""};
  found.found = &on_uart;
  CHECK(Json::parse(codec::hello("abc", LinkState::Up, "", 1, "viewer", found))["found"]["usb"].is_null());
  CHECK_FALSE(Json::parse(codec::hello("abc", LinkState::Up, "", 1, "viewer", replayed)).contains("found"));
  CHECK(Json::parse(codec::link(LinkState::Stale, "quiet")) ==
        Json::parse(R"({"type":"link","state":"stale","reason":"quiet"})"));
  CHECK(Json::parse(flockbot::packet_json(as_bytes("DMC"))) ==
        Json::parse(R"({"type":"packet","tag":"DMC","payload":[68,77,67]})"));
  CHECK(codec::emergency() == R"({"type":"emergency"})");
  CHECK(codec::dropped(12) == R"({"type":"dropped","count":12})");
  CHECK(codec::ok(nullptr) == R"({"type":"ok"})");
  CHECK(codec::ok(7) == R"({"type":"ok","id":7})");
  CHECK(codec::ok(7, true) == R"({"type":"ok","id":7,"confirmed":true})");
  CHECK(codec::ok(nullptr, false) == R"({"type":"ok","confirmed":false})");
  CHECK(codec::error("x", Error{"bad", ErrorCode::LinkDown}) ==
        R"({"type":"error","id":"x","error":"bad","code":"link_down"})");
  CHECK(codec::safety_stop("why") == R"({"type":"safety_stop","reason":"why"})");
  CHECK(codec::error(nullptr, Error{"taken", ErrorCode::Busy}) == R"({"type":"error","error":"taken","code":"busy"})");
  CHECK(codec::lease(codec::LeaseHolder{4, "10.0.3.17:51234", "json", 12.5}) ==
        R"({"type":"lease","holder":{"client":4,"peer":"10.0.3.17:51234","kind":"json","since":12.5}})");
  CHECK(codec::lease(std::nullopt, "gone") == R"({"type":"lease","holder":null,"reason":"gone"})");
  CHECK(codec::lease(std::nullopt) == R"({"type":"lease","holder":null})");
  CHECK(std::holds_alternative<ReleaseControl>(parse_json_request(R"({"cmd":"release"})").request.value()));
  const codec::LatchHold local{"local", 2, "127.0.0.1:4000", "", 3.5, {"teacher", "driver"}};
  CHECK(
      codec::emergency_latch({true, local, {"teacher", "driver"}, "the teacher or a driver", {local}}) ==
      R"({"type":"emergency_latch","latched":true,"by":{"client":2,"peer":"127.0.0.1:4000"},"since":3.5,)"
      R"("source":"local","may_clear":["teacher","driver"],"clear_by":"the teacher or a driver","holds":[)"
      R"({"source":"local","by":{"client":2,"peer":"127.0.0.1:4000"},"since":3.5,"may_clear":["teacher","driver"]}]})");
  // The fleet's stop, with its reason; and a clearing, which names who cleared it.
  const codec::LatchHold fleet{"fleet", 0, "the fleet (teacher)", "end of the lesson", 4.5, {"fleet"}};
  CHECK(codec::emergency_latch({true, fleet, {"fleet"}, "the class hub", {fleet}})
            .find(R"("since":4.5,"source":"fleet","reason":"end of the lesson","may_clear":["fleet"])") !=
        std::string::npos);
  CHECK(codec::emergency_latch({false, {"fleet", 0, "the fleet (teacher)", "", 5.5, {}}, {}, "", {}}) ==
        R"j({"type":"emergency_latch","latched":false,"by":{"client":0,"peer":"the fleet (teacher)"},"since":5.5,)j"
        R"("source":"fleet","may_clear":[],"holds":[]})");
  CHECK(codec::error(nullptr, Error{"held", ErrorCode::Latched}) ==
        R"({"type":"error","error":"held","code":"latched"})");
  const std::vector<codec::WaitingClient> waiting{{5, "10.0.3.17:51234", 2.5}};
  CHECK(codec::pairing(waiting) ==
        R"({"type":"pairing","waiting":[{"client":5,"peer":"10.0.3.17:51234","since":2.5}]})");
  CHECK(codec::pairing({}) == R"({"type":"pairing","waiting":[]})");
  const auto approve = parse_json_request(R"({"cmd":"approve","client":5})").request;
  REQUIRE(approve);
  CHECK(std::get<ApproveClient>(approve.value()).client == 5);
  CHECK_FALSE(parse_json_request(R"({"cmd":"approve","client":"5"})").request);
  CHECK_FALSE(parse_json_request(R"({"cmd":"approve"})").request);
  const auto set = parse_json_request(R"({"cmd":"set","key":"access.lease_idle_ms","value":2000})").request;
  REQUIRE(set);
  CHECK(std::get<ChangeSetting>(set.value()).key == "access.lease_idle_ms");
  CHECK(std::get<ChangeSetting>(set.value()).value == "2000");
  CHECK(std::get<ChangeSetting>(parse_json_request(R"({"cmd":"set","key":"k","value":true})").request.value()).value ==
        "true");
  CHECK_FALSE(parse_json_request(R"({"cmd":"set","key":"k","value":[1]})").request);
  CHECK_FALSE(parse_json_request(R"({"cmd":"set","value":1})").request);
  CHECK(std::holds_alternative<ClearEmergency>(parse_json_request(R"({"cmd":"clear_emergency"})").request.value()));
  // Bytes that are not UTF-8 never make the encoder throw.
  CHECK_NOTHROW((void)flockbot::packet_json(Bytes{'X', 'Y', 'Z', 0xFF, 0xC3}));
  CHECK_NOTHROW((void)codec::error(nullptr, Error{std::string("\xFF\xFE")}));
}

TEST_CASE("a geometry read back from its JSON is the geometry written") {
  RobotGeometry g;
  g.radius_mm = 80;
  g.wheel_base_mm = 120.5;
  g.max_v_mm_s = 300;
  g.ranges = {{"front", RangeKind::Ir, 0, 80, 0, 800}, {"sonar3", RangeKind::Sonar, -10, 100, -20, std::nullopt}};
  g.bumpers = {"front", "rear"};
  CHECK(codec::geometry_from_json(Json::parse(codec::geometry(g).dump())) == g);
  CHECK(codec::geometry_from_json(Json::parse(codec::geometry(RobotGeometry{}).dump())) == RobotGeometry{});
  // What is not a geometry is an unknown one, not an error.
  CHECK(codec::geometry_from_json(Json::parse(R"({"footprint":"round","ranges":[1,{"name":"x"}]})")).ranges.size() ==
        1);
  CHECK(codec::geometry_from_json(Json(nullptr)) == RobotGeometry{});
}

TEST_CASE("hex back to bytes: to_hex's text, either case, with or without spaces - nothing else") {
  CHECK(from_hex(to_hex(as_bytes("DMS\n"))) == Bytes{0x44, 0x4D, 0x53, 0x0A});
  CHECK(from_hex("444d53") == Bytes{0x44, 0x4D, 0x53});
  CHECK(from_hex("") == Bytes{});
  CHECK_FALSE(from_hex("4"));
  CHECK_FALSE(from_hex("4G"));
  CHECK_FALSE(from_hex(" 44"));
  CHECK_FALSE(from_hex("44  53"));
}

TEST_CASE("JSON nested deeper than the bound is refused before it is parsed, whatever the line's length") {
  const auto nested = [](std::size_t levels, std::string_view inside = "1") {
    return std::string(levels, '[') + std::string(inside) + std::string(levels, ']');
  };
  CHECK_FALSE(nests_deeper_than(nested(kJsonDepthLimit)));
  CHECK(nests_deeper_than(nested(kJsonDepthLimit + 1)));
  // Brackets inside strings, escaped quotes included, are text.
  CHECK_FALSE(nests_deeper_than(R"({"id":")" + std::string(1000, '[') + R"(\"[{"})"));
  CHECK(nests_deeper_than(R"({"id":"\\")" + std::string(40, '[')));
  // A command with an id of 80,000 nested arrays: a clear error, no id echoed.
  const std::string line = R"({"cmd":"stop","id":)" + nested(80000) + "}";
  const auto parsed = codec::parse_line(line);
  REQUIRE_FALSE(parsed.object);
  CHECK(parsed.id.is_null());
  CHECK(parsed.object.error().message.find("nested deeper than 32") != std::string::npos);
  // At the bound, the id is echoed as it came.
  const std::string deep_id = nested(kJsonDepthLimit - 1);
  const auto accepted = codec::parse_line(R"({"cmd":"stop","id":)" + deep_id + "}");
  REQUIRE(accepted.object);
  CHECK(accepted.id.dump() == deep_id);
  CHECK(parse_bounded_json<Json>(nested(100000)).is_discarded());
  CHECK(parse_bounded_json<Json>(nested(3)) == Json::parse("[[[1]]]"));
}

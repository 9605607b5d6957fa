// The JSON form of the bridge's own messages (port 2006, one object per
// line), the same for every robot family. Every encoder returns one compact
// JSON object without a line end; the parser reads a client's line as far
// as every family shares it, and turns the bridge's own commands into the
// same ClientRequest that a family's own port gives. Each family's sensor
// messages and robot commands are its driver's (bridge/<family>/) or its
// codecs' (protocol/<family>/), written with the helpers at the end.
#pragma once

#include <array>
#include <charconv>
#include <concepts>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "flockbridge/protocol/bytes.hpp"
#include "flockbridge/protocol/client_request.hpp"
#include "flockbridge/protocol/robot_link.hpp"
#include "flockbridge/protocol/robot_model.hpp"
#include "flockbridge/protocol/stats.hpp"

namespace flockbridge::protocol::json {

/// The JSON clients' protocol version, in hello. 2: a sensor message's "ranges" is
/// {NAME:mm}, each sensor's mounting only in hello.geometry (1: a list of objects,
/// each with its sensor's kind and mounting).
inline constexpr int kVersion = 2;
/// The longest interval a client may ask for in subscribe{interval_ms}.
inline constexpr std::int64_t kMaxIntervalMs = 3'600'000;

/// What a hello says of a replay: the bridge serves a recording, not a robot.
struct ReplayDescription {
  std::string_view file;   ///< the recording's file name
  double recorded_at = 0;  ///< when its first message was recorded (Unix seconds)
  double speed = 1;        ///< how much faster than recorded it plays
};

/// What a hello says of a robot plug and play found (--robot auto, --device
/// auto): where, at which speed, and how long the search took.
struct FoundDescription {
  std::string_view device;  ///< the serial device it answered on
  int baud = 0;             ///< the speed it answered at
  double took_ms = 0;       ///< from the device's opening to the robot's answer
  std::string_view usb;     ///< the USB adapter's "vendor:product"; "": not on USB
};

/// What a hello says about the robot behind the bridge.
struct RobotDescription {
  std::string_view family;                ///< the family's name in the families table
  std::string_view model;                 ///< the family's model, e.g. "p3dx-sh"
  std::span<const std::string> commands;  ///< the JSON commands this robot takes
  bool simulated = false;                 ///< a simulated robot (--simulate)
  /// A simulated robot's room (mm, in its odometry's frame: min x, min y, max x, max y), when known.
  std::optional<std::array<double, 4>> room_mm{};
  std::vector<std::array<double, 4>> boxes_mm{};  ///< the boxes in that room, in the same form
  const RobotGeometry* geometry = nullptr;        ///< what the robot is (hello's "geometry"); none: all unknown
  const ReplayDescription* replay = nullptr;      ///< a replay of a recording; none: a robot
  const FoundDescription* found = nullptr;        ///< how plug and play found the robot; none: it was named
};

/// Which secrets the robot has set: which sign-ins there are to give.
struct AccessDescription {
  bool pin = false;      ///< a driver PIN: viewers become drivers with it
  bool teacher = false;  ///< a teacher's secret
};

/// {"type":"hello","version":2,"session":"...","robot":FAMILY,"model":MODEL,"link":"up",
/// "client":4,"role":"driver","access":{"pin":false,"teacher":false},"capabilities":["move",...]}
/// (+"reason" before "client" when the link is not up); `client` is the connection's number (as
/// lease messages name clients), `role` its role: "viewer" until it gives the driver PIN, when one
/// is set; "access" which secrets are set; "simulated":{"room_mm":[min_x,min_y,max_x,max_y] or
/// null,"boxes_mm":[[min_x,min_y,max_x,max_y],..]} after "link" for a simulated robot;
/// "replay":{"file":"..","recorded_at":..,"speed":1.0} after that for a replay of a recording;
/// "found":{"device":"/dev/ttyUSB0","baud":9600,"took_ms":12.5,"usb":"0403:6001" or null} after
/// that for a robot plug and play found; "geometry" (see geometry()) last.
[[nodiscard]] std::string hello(std::string_view session, LinkState state, std::string_view reason,
                                std::uint64_t client, std::string_view role, const RobotDescription& robot,
                                const AccessDescription& access = {});
/// {"footprint":{"radius_mm":..,"length_mm":..,"width_mm":..},"wheel_base_mm":..,"max_v_mm_s":..,
/// "max_w_deg_s":..,"ranges":[{"name":"front","kind":"ir","deg":0.0,"x_mm":..,"y_mm":..,"max_mm":..}],
/// "bumpers":["front",..]}: what the robot is; null for what is not known.
[[nodiscard]] nlohmann::ordered_json geometry(const RobotGeometry& geometry);
/// The geometry that geometry() wrote (a recorded hello's); what is missing
/// or not a number stays unknown.
[[nodiscard]] RobotGeometry geometry_from_json(const nlohmann::json& json);

/// Writes the robot model's fields of a sensor message, the same for every
/// family: "pose":{"x_mm","y_mm","th_deg"},"v_mm_s","w_deg_s","battery_v",
/// "ranges":{NAME:mm,..},"bumped":[names]. A reading carries only what a
/// reading can change: each range sensor's kind and mounting are in
/// hello.geometry, and its name here is the key that joins the two (keys
/// in the geometry's order; a name is written once, when the encoder is
/// made).
class RobotStateEncoder {
 public:
  explicit RobotStateEncoder(const RobotGeometry& geometry);
  /// Appends the fields, without a leading comma. Lengths are rounded to
  /// 0.1 mm, angles to 0.1 degree, ranges to 1 mm; volts are written as the
  /// driver rounded them (to what its robot reports).
  void append(std::string& out, const RobotState& state) const;
  /// `object` (a family's sensor message: one JSON object's text, with or
  /// without a line end) with the fields added at its end.
  [[nodiscard]] std::string add_to(std::string object, const RobotState& state) const;
  [[nodiscard]] const RobotGeometry& robot_geometry() const noexcept { return geometry_; }

 private:
  RobotGeometry geometry_;
  std::vector<std::string> range_keys_;    ///< "name":
  std::vector<std::string> bumper_names_;  ///< as JSON strings
};

/// The JSON Schema (draft 2020-12) of a family's sensor message: the
/// message's "type", "seq" and "ts", the robot model's fields that
/// RobotStateEncoder writes, and the family's own `properties` beside them.
[[nodiscard]] nlohmann::ordered_json sensor_schema(std::string_view family, const nlohmann::ordered_json& properties,
                                                   const RobotGeometry* geometry = nullptr);
/// A sensor message of protocol version 1 (a recording made before version
/// 2) in version 2's form: "ranges" from a list of objects to {NAME:mm}.
/// Anything else is returned as it is.
[[nodiscard]] std::string upgraded_sensor_message(std::string text);
/// A recorded sensor schema's properties without the robot model's "ranges"
/// (of whichever version it was recorded in): sensor_schema() writes
/// version 2's.
[[nodiscard]] nlohmann::ordered_json upgraded_sensor_properties(nlohmann::ordered_json properties);

/// {"type":"link","state":"...","reason":"..."} (no "reason" when it is empty).
[[nodiscard]] std::string link(LinkState state, std::string_view reason);
/// {"type":"emergency"}
[[nodiscard]] std::string emergency();
/// {"type":"dropped","count":N}
[[nodiscard]] std::string dropped(std::uint64_t count);
/// {"type":"ok","id":..}; "id" only when the command had one (not null).
/// {"type":"ok"}; for a command that went to the robot, with "confirmed":
/// true when the robot acknowledged it, false when it went out and no NAK came
/// in its window (firmware that does not acknowledge cannot confirm).
[[nodiscard]] std::string ok(const nlohmann::json& id, std::optional<bool> confirmed = std::nullopt);
/// {"type":"error","id":..,"error":"...","code":"..."}; "id" only when not null.
[[nodiscard]] std::string error(const nlohmann::json& id, const Error& error);
/// {"type":"safety_stop","reason":"..."}: the bridge stopped the robot on its own.
[[nodiscard]] std::string safety_stop(std::string_view reason);
/// Who holds control of the robot (the lease), as a lease message names it.
struct LeaseHolder {
  std::uint64_t client = 0;
  std::string_view peer;  ///< "10.0.3.17:51234"
  std::string_view kind;  ///< "binary", "json", "websocket", "foxglove"
  double since = 0;       ///< Unix seconds
};
/// {"type":"lease","holder":{"client":4,"peer":"..","kind":"json","since":..}}, or with
/// "holder":null and the "reason" it ended (when there is one).
[[nodiscard]] std::string lease(const std::optional<LeaseHolder>& holder, std::string_view reason = {});
/// {"type":"ok","id":..,"role":"driver"}: the answer to auth ("id" only when not null).
[[nodiscard]] std::string authorised(const nlohmann::json& id, std::string_view role);
/// {"type":"lease_request","client":5,"peer":".."}: to the driver, another client asks it to hand over.
[[nodiscard]] std::string lease_request(std::uint64_t client, std::string_view peer);
/// One stop that holds the robot, or (in a clearing) who cleared it.
struct LatchHold {
  std::string_view source;             ///< "local" (a client of this robot's) or "fleet"
  std::uint64_t client = 0;            ///< 0: the fleet
  std::string_view peer;               ///< the client's address, or "the fleet (teacher)"
  std::string_view reason;             ///< as the fleet's command gave it; may be empty
  double since = 0;                    ///< Unix seconds
  std::vector<std::string> may_clear;  ///< "teacher", "driver", "fleet"
};
/// The emergency latch as clients see it.
struct LatchState {
  bool latched = false;
  LatchHold by;                        ///< the first hold (the fleet's when there is one), or who cleared it
  std::vector<std::string> may_clear;  ///< who may clear every hold alone
  std::string_view clear_by;           ///< the same in words, for people
  std::vector<LatchHold> holds;        ///< every stop that holds the robot
};
/// {"type":"emergency_latch","latched":true,"by":{"client":3,"peer":".."},"since":..,"source":"local",
/// "may_clear":["teacher"],"clear_by":"the teacher","holds":[{"source":"local","by":{..},"since":..,
/// "may_clear":[..]}]}: latched by a client or the fleet; with "latched":false, cleared ("by" who, "source"
/// where from). "reason" when the stop gave one.
[[nodiscard]] std::string emergency_latch(const LatchState& state);
/// A connection on the family's own port waiting to be approved (native_port_mode paired).
struct WaitingClient {
  std::uint64_t client = 0;
  std::string_view peer;
  double since = 0;  ///< Unix seconds
};
/// {"type":"pairing","waiting":[{"client":5,"peer":"..","since":..}]}: the connections waiting, oldest first.
[[nodiscard]] std::string pairing(std::span<const WaitingClient> waiting);
/// {"type":"ok","id":..,"offline":["fb-1"],"note":"..."}: the answer to a class hub's stop or
/// clear that some robots of the fleet did not hear, being offline ("id" only when not null).
[[nodiscard]] std::string fleet_sent(const nlohmann::json& id, const std::vector<std::string>& offline,
                                     std::string_view note);
/// {"type":"stats","id":..,"uptime_s":..,"link":{...},"commands":{...},"sensors":{...},"clients":{...}}
[[nodiscard]] std::string stats(const nlohmann::json& id, const StatsSnapshot& snapshot);

/// Refuses an argument of `cmd` that is not among `allowed` ("cmd" and "id"
/// aside): "move: has no argument 'spead'; it takes speed".
[[nodiscard]] Result<Done> only(std::string_view cmd, const nlohmann::json& object,
                                std::span<const std::string_view> allowed);

/// One line from a client, read as far as every robot's commands share it.
struct ParsedLine {
  nlohmann::json id;              ///< the command's "id", null when it had none (or was unreadable)
  Result<nlohmann::json> object;  ///< the whole command: an object with a string "cmd"
  std::string cmd;                ///< its "cmd"
};

/// Reads one line from a client. Never throws.
[[nodiscard]] ParsedLine parse_line(std::string_view line);

/// The names of the bridge's own requests, which parse_bridge_request reads.
inline constexpr std::array<std::string_view, 14> kBridgeRequests{
    "subscribe", "unsubscribe", "stats", "release",      "take",        "clear_emergency", "approve",
    "set",       "auth",        "fleet", "record_start", "record_stop", "fleet_emergency", "fleet_clear"};

/// The bridge's own requests (subscribe, unsubscribe, stats); nothing when
/// `cmd` names none of them (it is then a command for the robot).
[[nodiscard]] std::optional<Result<ClientRequest>> parse_bridge_request(std::string_view cmd,
                                                                        const nlohmann::json& object);

/// Writing a message as text, for the encoders that run for every packet
/// and would spend ten times the text's cost on a json value's nodes.
/// An integer, as JSON writes it.
template <std::integral Integer>
void append_number(std::string& out, Integer value) {
  std::array<char, 24> text{};
  const auto end = std::to_chars(text.data(), text.data() + text.size(), value).ptr;
  out.append(text.data(), end);
}
/// A real in the shortest decimal that reads back as the same double, with
/// ".0" on a whole number (as nlohmann::json writes one, so a reader's
/// language sees a real either way), and null for what JSON cannot hold.
void append_real(std::string& out, double value);

/// A JSON integer as a long long; unsigned values beyond its range are
/// clamped (so that a range check refuses them instead of wrapping).
[[nodiscard]] std::optional<long long> whole_number(const nlohmann::json& value);
/// "move: speed must be a whole number": an argument's error, in the words clients get.
[[nodiscard]] Error argument_error(std::string_view command, std::string_view argument, std::string_view problem);

}  // namespace flockbridge::protocol::json

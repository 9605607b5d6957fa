// Plug and play (--robot auto, --device auto): the driver that serves
// whichever robot answers on a serial device, as gpsd serves whichever
// receiver is plugged in. It looks at the devices serial.search names
// (serial_candidates.hpp), one at a time, each with every family's own
// probe (SerialProber), serves the first robot that answers with its
// family's own driver (made by the family's make_driver, with the device
// and speed found), and from then on forwards everything to that driver.
// The kernel's notices (DeviceWatch) bring a device plugged in later; when
// the served device goes, the driver it made is stopped and the search
// begins again, so that another family's robot plugged in its place is
// served without a restart. Each change of robot is a RobotChanged event:
// the core gives everyone the new robot's hello.
//
// A device that talks, but as no family's robot does, is left alone until
// it is plugged in again; a silent one (a robot not switched on yet, behind
// an adapter that stays plugged in) is looked at again now and then.
#pragma once

#include <uv.h>

#include <chrono>
#include <deque>
#include <filesystem>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <span>
#include <string>
#include <vector>

#include "flockbridge/bridge/device_watch.hpp"
#include "flockbridge/bridge/driver.hpp"
#include "flockbridge/bridge/robot_family.hpp"
#include "flockbridge/bridge/serial_candidates.hpp"
#include "flockbridge/bridge/serial_prober.hpp"
#include "flockbridge/bridge/uv.hpp"

namespace flockbridge::bridge::autodetect {

/// Where plug and play looks for a robot of `families`: the names their udev
/// rules give, then serial.search's patterns; only the device named when
/// serial.device names one (then only which family is on it is left to find).
[[nodiscard]] CandidateScan search_scan(const Config& config, std::span<const RobotFamily* const> families);

class AutoDriver final : public RobotDriver {
 public:
  /// How often a silent device is looked at again while no robot is served.
  static constexpr std::chrono::seconds kSilentRetry{5};

  /// `families`: those that may be found (the families table's, or the
  /// one robot.family names when only the device is left to find).
  AutoDriver(uv_loop_t* loop, const Config& config, Host& host, std::vector<const RobotFamily*> families);
  AutoDriver(const AutoDriver&) = delete;  // its handles and the prober's callback point at it
  AutoDriver& operator=(const AutoDriver&) = delete;
  AutoDriver(AutoDriver&&) = delete;
  AutoDriver& operator=(AutoDriver&&) = delete;
  ~AutoDriver() override;

  [[nodiscard]] std::string_view family() const noexcept override;
  [[nodiscard]] std::string_view model() const noexcept override;
  [[nodiscard]] std::span<const std::string> commands() const noexcept override;
  [[nodiscard]] std::string_view device_hint() const noexcept override;
  [[nodiscard]] std::string_view native_programs() const noexcept override;
  [[nodiscard]] const protocol::json::FoundDescription* found() const noexcept override;
  [[nodiscard]] std::uint16_t native_port(std::uint16_t configured) const noexcept override;

  [[nodiscard]] protocol::Result<protocol::Done> start() override;
  void stop() override;
  void client_arrived() override;
  [[nodiscard]] std::optional<DriverEvent> next_event() override;
  [[nodiscard]] std::unique_ptr<NativeClient> make_native_client() override;
  [[nodiscard]] std::size_t native_client_limit() const noexcept override;
  [[nodiscard]] protocol::Result<protocol::Bytes> command_from_json(std::string_view cmd,
                                                                    const nlohmann::json& object) const override;
  [[nodiscard]] MotionEffect motion_effect(protocol::ByteView command) const override;
  [[nodiscard]] protocol::Result<protocol::Done> submit(protocol::CommandToken token,
                                                        protocol::ByteView command) override;
  [[nodiscard]] protocol::Result<protocol::Done> reset_pose(protocol::CommandToken token) override;
  [[nodiscard]] const protocol::RobotGeometry& geometry() const override;
  [[nodiscard]] nlohmann::ordered_json sensor_properties() const override;
  [[nodiscard]] protocol::Result<protocol::Done> stop_robot(protocol::CommandToken token) override;
  [[nodiscard]] protocol::LinkState link_state() const noexcept override;
  [[nodiscard]] const std::string& link_reason() const noexcept override;
  void add_stats(protocol::StatsSnapshot& snapshot) const override;
  void reload(const Config& config) override;

 private:
  /// What became of a device the search looked at.
  struct Looked {
    enum class Verdict {
      Other,     ///< it talks, but as no robot does: left alone until it is plugged in again
      Silent,    ///< nothing came: looked at again every kSilentRetry
      Unopened,  ///< it could not be opened (not ours yet, or busy): looked at again at the next change
    };
    std::filesystem::path node;  ///< the device node its name led to then
    Verdict verdict = Verdict::Silent;
    std::string why;  ///< in words, for the link's reason
  };

  /// The devices changed (`again`: or it is time to look at the silent ones
  /// again): forgets those gone, notices the served one's going, and looks
  /// at those not looked at yet.
  void look(bool again);
  void probe_next();
  void probed(const SerialProber::Outcome& outcome);
  void serve(const RobotFamily& family, const SerialProber::Outcome& outcome);
  /// The served robot's device is gone: its driver stops, the search begins again.
  void lost(const std::string& why);
  void searching(std::string reason);
  void queue_event(DriverEvent event);
  [[nodiscard]] Config served_config(const Config& config) const;
  /// serial.search's patterns (or the device named), for a person.
  [[nodiscard]] std::string searched() const;

  uv_loop_t* loop_;
  Config config_;
  Host& host_;
  std::vector<const RobotFamily*> families_;
  CandidateScan scan_;
  DeviceWatch watch_;
  SerialProber prober_;
  UvHandle<uv_timer_t> retry_;
  UvHandle<uv_timer_t> next_;      ///< the next device's look, after the prober's callback
  std::deque<std::string> queue_;  ///< devices to look at, in order
  std::string probing_;            ///< the device being looked at now
  std::map<std::string, Looked> looked_;

  // The robot served, once one is found.
  const RobotFamily* family_ = nullptr;
  std::unique_ptr<RobotDriver> robot_;
  std::filesystem::path robot_node_;
  Config served_;  ///< the configuration its driver was made with
  std::string found_device_;
  std::string found_usb_;
  protocol::json::FoundDescription found_;
  /// Commands the served driver has not answered yet: answered here when it goes.
  std::set<protocol::CommandToken> unanswered_;
  /// Drivers of robots that went, stopped, kept while the connections of
  /// their own programs (whose readers they made) may still be closing.
  std::deque<std::unique_ptr<RobotDriver>> retired_;

  std::deque<DriverEvent> events_;
  std::string reason_ = "looking for a robot";  ///< why no robot is served, while none is
  protocol::RobotGeometry no_geometry_;
  bool started_ = false;
  bool stopped_ = false;
};

}  // namespace flockbridge::bridge::autodetect

// What every driver whose robot link is one of protocol/'s state machines
// shares, whatever the family: the transport to the robot (a serial device,
// tcp:HOST:PORT, or the simulator program's pseudo-terminal under
// --simulate) and its callbacks, the link's one timer, the queue of events
// the core drains, and the order of shutting down.
//
// `Link` is the family's link: it is fed port_opened(now),
// bytes_received(bytes, now), port_closed(reason) and tick(now), says when
// it next needs the time (next_deadline) and its state and reason, and
// reports through `Events` (its LinkEvents), whose transmit() and note()
// this class answers. A family's driver derives from LinkDriver, answers
// the rest of `Events`, and calls stop() from its own destructor (stop()
// asks it for its last words, which a base destructor could not).
#pragma once

#include <uv.h>

#include <deque>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "flockbridge/bridge/driver.hpp"
#include "flockbridge/bridge/log.hpp"
#include "flockbridge/bridge/simulator_process.hpp"
#include "flockbridge/bridge/transport.hpp"
#include "flockbridge/bridge/uv.hpp"

namespace flockbridge::bridge {

template <typename Link, typename Events>
class LinkDriver : public RobotDriver, protected Events, private Transport::Listener {
 public:
  LinkDriver(const LinkDriver&) = delete;
  LinkDriver& operator=(const LinkDriver&) = delete;
  LinkDriver(LinkDriver&&) = delete;
  LinkDriver& operator=(LinkDriver&&) = delete;
  ~LinkDriver() override = default;

  /// Sends the family's last words (stop, close) when there are any, then
  /// closes the transport and the simulator. Safe to call twice.
  void stop() final {
    if (stopped_) return;
    stopped_ = true;
    if (const protocol::Bytes last = last_words(); !last.empty()) transport_->write_now(last);
    transport_->close();
    if (simulator_) simulator_->stop();
    link_timer_.reset();
    deadline_.reset();
    events_.clear();
  }

  [[nodiscard]] std::optional<DriverEvent> next_event() override {
    if (events_.empty()) return std::nullopt;
    DriverEvent event = std::move(events_.front());
    events_.pop_front();
    return event;
  }

  [[nodiscard]] protocol::LinkState link_state() const noexcept final { return link_.state(); }
  /// Why the link is not up; while the robot cannot be reached at all, what
  /// was tried, what happened and what to do about it.
  [[nodiscard]] const std::string& link_reason() const noexcept final {
    return link_.state() == protocol::LinkState::Down && !open_failure_.empty() ? open_failure_ : link_.reason();
  }

  [[nodiscard]] bool simulated() const noexcept final { return config_.simulate; }
  [[nodiscard]] std::optional<std::array<double, 4>> simulated_room() const final {
    return simulator_ ? simulator_->room_mm() : std::nullopt;
  }
  [[nodiscard]] std::vector<std::array<double, 4>> simulated_boxes() const final {
    return simulator_ ? simulator_->boxes_mm() : std::vector<std::array<double, 4>>{};
  }

  /// The link, for tests that look inside.
  [[nodiscard]] const Link& link() const noexcept { return link_; }

 protected:
  /// `link_args` are the link's own (its settings, ...); the events it
  /// reports go to this driver.
  template <typename... LinkArgs>
  LinkDriver(uv_loop_t* loop, const Config& config, Host& host, LinkArgs&&... link_args)
      : loop_(loop),
        config_(config),
        host_(host),
        link_(std::forward<LinkArgs>(link_args)..., static_cast<Events&>(*this)),
        transport_(make_transport(
            loop, Transport::Settings{config.device, config.baud, config.reopen_min, config.reopen_max}, *this)) {}

  /// What goes on the line before it closes at shutdown (empty: nothing).
  [[nodiscard]] virtual protocol::Bytes last_words() = 0;

  /// Starts the link's timer and the transport: under --simulate, first the
  /// simulator program with `simulator_args`, its device then the transport's
  /// (`what` names the simulated robot in the log).
  [[nodiscard]] protocol::Result<protocol::Done> start_link(const std::vector<std::string>& simulator_args,
                                                            const std::string& what) {
    if (link_timer_.template init<LinkDriver, &LinkDriver::on_link_timer>(loop_, this) < 0 ||
        deadline_.template init<LinkDriver, &LinkDriver::on_deadline>(loop_, this) < 0) {
      return protocol::Error{"cannot create the robot link's timer"};
    }
    if (!config_.simulate) {
      transport_->start();
      return protocol::Done{};
    }
    simulator_ = std::make_unique<SimulatorProcess>(loop_, what);
    auto started = simulator_->start(simulator_args, [this] { transport_->start(); });
    if (!started) return started.error();
    transport_->set_path(simulator_->device_path());
    log_info(what + " on " + simulator_->device_path());
    return protocol::Done{};
  }

  /// Queues an event for the core and tells it (never after stop()). The
  /// event is built in its place in the queue, from one of DriverEvent's
  /// kinds: no DriverEvent is made only to be moved (GCC 12 at -O2 takes
  /// the moved-from variant's members for uninitialised).
  template <typename Event>
  void push(Event&& event) {
    if (stopped_) return;
    events_.emplace_back(std::forward<Event>(event));
    host_.driver_has_events();
  }

  /// Gives the link the time at its next deadline; call after anything that
  /// may have moved it.
  void arm_link_timer() {
    if (stopped_) return;
    if (const auto deadline = link_.next_deadline()) {
      link_timer_.start_at(*deadline);
    } else {
      link_timer_.stop();
    }
  }

  /// Writes to the robot (the link's transmit, and commands on their way).
  void transmit(protocol::ByteView bytes) override { transport_->write(bytes); }
  void note(std::string_view what) override { push(driver_event::Note{"link: " + std::string(what)}); }

  uv_loop_t* loop_;
  Config config_;
  Host& host_;
  Link link_;

 private:
  // Transport::Listener
  void transport_opened() final {
    open_failure_.clear();
    link_.port_opened(steady_now());
    arm_link_timer();
  }
  void transport_received(protocol::ByteView bytes) final {
    link_.bytes_received(bytes, steady_now());
    arm_link_timer();
  }
  void transport_closed(std::string_view reason) final {
    link_.port_closed(reason);
    arm_link_timer();
  }
  void transport_open_failed(const OpenFailure& failure) final {
    const std::string_view hint = failure.missing ? device_hint() : std::string_view{};
    open_failure_ = failure.what + ": " + failure.advice + (hint.empty() ? "" : " (" + std::string(hint) + ")") +
                    (failure.or_else.empty() ? "" : ", " + failure.or_else);
    // The state stays down: the reason is news, for the log and every client.
    push(driver_event::LinkChanged{link_.state(), open_failure_});
  }

  // What has arrived is read before any deadline is judged: a process that
  // ran late must not take an answer waiting unread in the kernel for no
  // answer (a window without its ACK, a packet whose bytes stopped), nor a
  // client's message sent in time for one that came too late (a bus
  // program's READY). So the timer only asks for the deadline to be judged
  // after the loop has polled for I/O.
  void on_link_timer() { deadline_.schedule(); }
  void on_deadline() {
    link_.tick(steady_now());
    arm_link_timer();
  }

  std::unique_ptr<SimulatorProcess> simulator_;
  std::unique_ptr<Transport> transport_;  ///< the serial device, or a TCP connection
  DeadlineTimer link_timer_;
  AfterPoll deadline_;  ///< judges the deadline the timer fired for
  std::deque<DriverEvent> events_;
  std::string open_failure_;  ///< why the robot cannot be reached now; empty once it opened
  bool stopped_ = false;
};

}  // namespace flockbridge::bridge

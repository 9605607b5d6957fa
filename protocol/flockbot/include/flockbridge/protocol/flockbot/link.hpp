// The serial link to the Uno as a state machine: start-up handshake, reboot
// and stale-link detection, NAK in both directions, the per-command NAK
// window with bounded retries, and the emergency stop ahead of everything.
//
// Conditions of the problem (protocol decisions, section 2): the Uno resets
// whenever the port is opened and may reset at any time; the link starts when
// the Uno's ACK has been answered with CFG and the Uno has acknowledged it.
// Packets carry no sequence number, so a NAK can only mean "the last packet
// you sent": each command is therefore held alone on the line for a short
// window before the next one goes out, and a NAK inside the window resends it.
// Firmware may or may not acknowledge commands; an ACK inside a window ends it
// early, an ACK outside any window while the link is up means a reboot.
//
// On a noisy line that last rule needs care: every resend, and every NAK the
// Pi sends (the Uno then resends its last packet, which may be an ACK), can
// bring one more ACK, and such an ACK arrives within one window. So after an
// exchange that had a resend or a NAK, the next command waits one window (a
// quiet period), and ACKs in it are counted as strays: neither a reboot nor
// the next command's confirmation. Without that, a duplicate ACK would
// confirm a command that was never received.
//
// Timing alone cannot settle it (a stalled process makes any answer late), so
// a reboot is confirmed by evidence: a rebooted Uno sends nothing but ACK
// until it has CFG. An ACK that nothing explains only raises a suspicion,
// during which no new command is sent (an emergency stop still is); any other
// packet within reboot_confirm clears it, silence confirms the reboot. And
// with acknowledging firmware a damaged sensor packet is not NAKed: a newer
// one follows within a period, while the NAK would make the Uno resend
// whatever it sent last, which after an acknowledged command is an ACK that
// nothing can tell from a new one. For the same reason no NAK is sent while a
// command waits for its ACK (the answer could be the previous command's ACK
// and confirm a command the Uno never received): it is owed, and sent as soon
// as the command is settled.
//
// A NAK that arrives after a command's window (a slow Uno, a late process,
// or a stray ACK that settled the command first), with no frame sent since,
// resends that command: the base rule, "resend the last packet transmitted",
// within the same bound of resends. Commands whose repetition moves the robot
// further (repeats_motion: DMD, DRD, DRA) are the exception: resending one
// the Uno did carry out moves the robot twice. Such a command is resent on a
// late NAK only when that NAK can only be about it: the Uno did not
// acknowledge it and has sent nothing else since it went out (an Uno answers
// a damaged frame as soon as it has read it). And with acknowledging
// firmware, one whose window ends without its ACK while a damaged frame came
// in (perhaps that very ACK) is not resent but fails with no_ack. Both cases
// are counted; the robot then does one move too few rather than one too many.
//
// With acknowledging firmware, a command whose window passes without its ACK
// or a NAK may not have been read yet: a frame whose LEN was damaged upwards
// on the way holds the Uno's decoder, which swallows what follows until it has
// LEN bytes, then rejects the frame and finds the swallowed ones behind its
// header, so their answers come late and together, long after their windows.
// Such an answer, given to the command then on the line, would confirm a
// command the Uno never received. So before such a command is sent again or
// failed, the line is flushed: flush_bytes zero bytes (no frame starts with
// them) complete any frame the Uno is holding, and one more window lets the
// late answers come. An ACK in it is this command's; a NAK in it may be the
// rejected frame's, so only the end of that window decides a resend.
//
// All of this assumes that the Uno answers within one NAK window, which must
// therefore exceed the worst response time of the Uno and of this process.
//
// The controller does no I/O and reads no clock: the caller feeds it bytes,
// events and the current time, arms one timer for next_deadline(), and acts
// on the calls it receives through LinkEvents. Before tick() the caller
// should feed what the line holds: a deadline judged while an answer waits
// unread (the process ran late) would be judged wrong.
#pragma once

#include <chrono>
#include <cstdint>
#include <deque>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "flockbridge/protocol/bytes.hpp"
#include "flockbridge/protocol/flockbot/frame.hpp"
#include "flockbridge/protocol/message_decoder.hpp"
#include "flockbridge/protocol/flockbot/uno_packets.hpp"
#include "flockbridge/protocol/robot_link.hpp"

namespace flockbridge::protocol::flockbot {

/// The robot's settings that CFG carries.
struct RobotConfig {
  std::uint8_t gripper = 0;
  std::uint16_t left_wheel_stop = 1500;
  std::uint16_t right_wheel_stop = 1500;
  std::uint8_t servo_model = 0;
  std::uint8_t id = 1;
  std::uint8_t ip3 = 0;  ///< third octet of the Pi's IPv4 address
  std::uint8_t ip4 = 0;  ///< fourth octet

  friend bool operator==(const RobotConfig&, const RobotConfig&) = default;
};

/// `C F G gripper lstop_lo lstop_hi rstop_lo rstop_hi servo_model id ip3 ip4` (12 bytes).
[[nodiscard]] Bytes encode_config_payload(const RobotConfig& config);

struct LinkSettings {
  std::size_t max_payload = kDefaultMaxPayload;
  /// After opening the port, how long to wait for the Uno's boot ACK before
  /// sending CFG unasked (an Uno that did not reset on open sends none).
  std::chrono::milliseconds boot_wait{2500};
  std::chrono::milliseconds handshake_timeout{500};  ///< CFG -> ACK
  unsigned handshake_retries = 5;                    ///< quick CFG tries before the link is reported down
  std::chrono::milliseconds handshake_slow_interval{5000};
  std::chrono::milliseconds nak_window{10};
  /// A frame from the Uno whose bytes stop coming for this long is abandoned
  /// (a corrupted LEN announced more than was sent), and the bytes behind
  /// its header are searched again. A whole 34-byte frame takes 3 ms at
  /// 115200 baud; USB adapters deliver in bursts a millisecond or so apart.
  std::chrono::milliseconds frame_gap{20};
  unsigned nak_retries = 3;
  /// For firmware that acknowledges every command: a command whose window
  /// ends without an ACK is sent again (up to nak_retries times), and fails
  /// when no try was acknowledged. Off: a window without NAK means delivered.
  bool require_command_ack = false;
  std::chrono::milliseconds stale_timeout{1000};
  /// After an ACK that nothing explains: a packet other than ACK within this
  /// time shows that the Uno did not reboot (a rebooted one waits for CFG).
  std::chrono::milliseconds reboot_confirm{200};
  std::size_t max_queued_commands = 64;
  /// Zero bytes sent to complete a frame the Uno may be holding (see above);
  /// 256 cover any LEN. 0: no flush. Only with require_command_ack.
  std::size_t flush_bytes = 256;
  /// The line's speed, for how long the flush takes to go out.
  unsigned baud = 115200;
};

struct LinkStats {
  FrameDecoderStats decoder;
  std::uint64_t frames_sent = 0;
  std::uint64_t implausible = 0;  ///< passed the checksum, broke the packet table
  std::uint64_t naks_sent = 0;
  std::uint64_t damaged_sensors_not_naked = 0;  ///< with acknowledging firmware, see above
  std::uint64_t naks_deferred = 0;              ///< held back while a command awaited its ACK
  std::uint64_t naks_received = 0;
  std::uint64_t unexpected_naks = 0;  ///< NAKs with nothing to resend (or its resends spent)
  std::uint64_t retransmits = 0;
  std::uint64_t late_resends = 0;  ///< commands resent on a NAK after their window
  /// Commands that repeat motion not resent on a late NAK that might be about something else.
  std::uint64_t late_naks_not_resent = 0;
  /// Commands that repeat motion not resent after a window without their ACK
  /// in which a damaged frame came (the ACK may have been it): failed with no_ack.
  std::uint64_t resends_withheld = 0;
  std::uint64_t stray_acks = 0;  ///< duplicates of an earlier ACK, ignored
  std::uint64_t flushes = 0;     ///< receiver flushes after a window without an answer
  std::uint64_t late_acks = 0;   ///< commands acknowledged after a flush
  std::uint64_t commands_sent = 0;
  std::uint64_t commands_acknowledged = 0;  ///< ended early by an ACK
  std::uint64_t commands_delivered = 0;     ///< finished without an error: confirmed + unconfirmed
  std::uint64_t commands_confirmed = 0;     ///< the Uno acknowledged them
  std::uint64_t commands_unconfirmed = 0;   ///< sent, no NAK in the window, no ACK (firmware that does not acknowledge)
  std::uint64_t commands_failed = 0;
  std::uint64_t commands_cancelled = 0;
  std::uint64_t cfg_sent = 0;
  std::uint64_t reboots = 0;
  std::uint64_t stale = 0;
};

/// The counters of a stats message's "link" object, by name, in order.
[[nodiscard]] std::vector<std::pair<std::string, std::uint64_t>> link_counters(const LinkStats& stats);

/// Reserved: callers' tokens must not be 0 (it marks a settled command sent again).
inline constexpr CommandToken kResentToken = 0;

/// What the controller asks of its owner. Implementations must not call back
/// into the controller from these functions.
class LinkEvents {
 public:
  LinkEvents() = default;
  LinkEvents(const LinkEvents&) = delete;
  LinkEvents& operator=(const LinkEvents&) = delete;
  virtual ~LinkEvents() = default;

  /// Write these bytes (one whole frame) to the serial port.
  virtual void transmit(ByteView frame) = 0;
  /// The link changed state (or the reason for it changed).
  virtual void link_changed(LinkState state, std::string_view reason) = 0;
  /// A plausible packet from the Uno other than ACK and NAK.
  virtual void packet_received(const UnoPacket& packet, ByteView payload) = 0;
  /// A submitted command is done: error is nullptr when it went out and was
  /// not NAKed within its window; `acknowledged` when the Uno's ACK ended the
  /// window early.
  virtual void command_finished(CommandToken token, const Error* error, bool acknowledged) = 0;
  /// A decision worth a line in a debug log (why a reboot was assumed, ...).
  virtual void note(std::string_view /*what*/) {}
};

class Link {
 public:
  Link(LinkSettings settings, RobotConfig robot, LinkEvents& events);

  void port_opened(SteadyTime now);
  void port_closed(std::string_view reason);
  void bytes_received(ByteView bytes, SteadyTime now);

  /// Queues a payload that passed check_command(). Refused at once while the
  /// link is not up (an emergency stop goes out whenever the port is open) or
  /// when the queue is full; otherwise command_finished() follows.
  [[nodiscard]] Result<Done> submit(CommandToken token, ByteView payload, SteadyTime now);

  /// Runs what is due at `now`. Call it when next_deadline() has passed.
  void tick(SteadyTime now);
  [[nodiscard]] std::optional<SteadyTime> next_deadline() const;

  /// Takes effect at the next CFG.
  void set_robot_config(const RobotConfig& robot);
  /// What the next CFG carries.
  [[nodiscard]] const RobotConfig& robot_config() const noexcept { return robot_; }
  /// Sends the current CFG now when the port is open and the robot has
  /// started: commands waiting or in flight fail, and the link reports
  /// Handshaking with `reason` until the ACK. With the port closed, or while
  /// the Uno is still booting, the next handshake sends it anyway.
  void reconfigure(SteadyTime now, std::string_view reason);
  /// New timing and retry settings, used from the next deadline on.
  /// max_payload is fixed at construction (it sizes the frame decoder).
  void set_settings(const LinkSettings& settings);

  [[nodiscard]] LinkState state() const noexcept { return state_; }
  [[nodiscard]] const std::string& reason() const noexcept { return reason_; }
  [[nodiscard]] bool port_open() const noexcept { return port_open_; }
  /// A frame from the Uno is under way (its bytes have not all come).
  [[nodiscard]] bool frame_under_way() const noexcept { return port_open_ && decoder_.in_frame(); }
  [[nodiscard]] LinkStats stats() const;
  [[nodiscard]] const LinkSettings& settings() const noexcept { return settings_; }

 private:
  enum class Phase { Idle, AwaitBootAck, AwaitCfgAck };
  enum class LastSent { Nothing, Cfg, Nak, Command };

  struct Queued {
    CommandToken token;
    Bytes frame;
    bool emergency;
  };
  struct InFlight {
    CommandToken token;
    Bytes frame;
    unsigned resends = 0;
    SteadyTime deadline;
    std::uint64_t noise_mark = 0;  ///< noise_seen() when this try went out
    bool flushed = false;          ///< in the window after a flush
    bool nak_after_flush = false;  ///< a NAK came in that window
  };
  /// The last command sent, until another frame goes out: what a late NAK resends.
  struct LastCommand {
    Bytes frame;
    unsigned resends = 0;
    bool confirmed = false;  ///< the Uno acknowledged it
    bool repeats = false;    ///< repeats_motion()
    bool uno_spoke = false;  ///< the Uno sent a packet other than NAK since it went out
  };

  /// Everything the decoder has thrown away so far: discarded bytes and
  /// rejected frames. When it grows during a window, an answer may have been lost.
  [[nodiscard]] std::uint64_t noise_seen() const noexcept;
  void drain_decoder(SteadyTime now);
  void on_decoder_event(const FrameDecoder::Event& event, SteadyTime now);
  void on_frame(ByteView payload, SteadyTime now);
  void on_ack(SteadyTime now);
  void on_nak(SteadyTime now);
  /// A NAK with no command in flight: resend the last command, if it may be.
  void on_late_nak(SteadyTime now);
  void on_bad_frame(ByteView payload, SteadyTime now);
  void confirm_reboot(SteadyTime now);
  void send_nak(SteadyTime now);
  /// One more ACK may come within a window: hold back the next command.
  void expect_possible_stray(SteadyTime now);
  void send(ByteView frame, LastSent kind);
  void send_cfg(SteadyTime now);
  void handshake_timed_out(SteadyTime now);
  void go_stale(SteadyTime now);
  /// Fails what waits with `failure`, reports `state` and sends CFG.
  void restart_handshake(SteadyTime now, LinkState state, std::string reason, const std::string& failure);
  void start_next(SteadyTime now);
  void finish_in_flight(const Error* error, bool acknowledged = false);
  /// Sends the command in flight again, or fails it with `code` when its
  /// resends are spent.
  void retry_in_flight(SteadyTime now, ErrorCode code, std::string_view what);
  /// The window of the command in flight has passed without ACK or NAK.
  void in_flight_unanswered(SteadyTime now);
  /// Sends flush_bytes zero bytes and gives the command in flight one more window.
  void flush_receiver(SteadyTime now);
  void fail_all(const std::string& reason);
  void set_state(LinkState state, std::string reason);

  LinkSettings settings_;
  RobotConfig robot_;
  Bytes cfg_frame_;  ///< robot_, framed once
  LinkEvents& events_;
  FrameDecoder decoder_;
  LinkStats stats_;

  LinkState state_ = LinkState::Down;
  std::string reason_ = "serial port not open";
  bool port_open_ = false;
  Phase phase_ = Phase::Idle;
  unsigned cfg_attempts_ = 0;
  SteadyTime handshake_deadline_{};
  SteadyTime last_received_{};
  SteadyTime last_bytes_{};  ///< when bytes last came, for frame_gap
  LastSent last_sent_ = LastSent::Nothing;
  unsigned nak_resends_ = 0;
  /// ACKs that may still come from an earlier exchange, until quiet_until_.
  bool nak_owed_ = false;  ///< a NAK held back while a command awaits its ACK
  unsigned possible_strays_ = 0;
  SteadyTime quiet_until_{};
  /// Set while an unexplained ACK waits for the evidence of a reboot.
  std::optional<SteadyTime> reboot_suspected_until_;
  std::deque<Queued> queue_;
  std::optional<InFlight> in_flight_;
  std::optional<LastCommand> last_command_;
};

}  // namespace flockbridge::protocol::flockbot

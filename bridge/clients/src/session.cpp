#include "flockbridge/bridge/session.hpp"

#include <algorithm>
#include <utility>

#include "flockbridge/bridge/client_socket.hpp"
#include "flockbridge/bridge/log.hpp"
#include "flockbridge/bridge/overloaded.hpp"
#include "flockbridge/bridge/uv.hpp"
#include "flockbridge/bridge/wire.hpp"
#include "flockbridge/protocol/json_codec.hpp"

namespace flockbridge::bridge {
namespace {

bool is_blank(protocol::ByteView line) {
  return std::all_of(line.begin(), line.end(), [](protocol::Byte b) { return b == ' ' || b == '\t'; });
}

}  // namespace

std::string_view client_kind_name(ClientKind kind) noexcept {
  switch (kind) {
    case ClientKind::Native:
      return "binary";
    case ClientKind::Json:
      return "json";
    case ClientKind::WebSocket:
      return "websocket";
    case ClientKind::Foxglove:
      return "foxglove";
  }
  return "json";
}

Session::Session(Host& host, std::uint64_t id, ClientKind kind, const Config& config,
                 protocol::BridgeCounters& counters, std::unique_ptr<NativeClient> native)
    : config_(config),
      counters_(counters),
      host_(host),
      id_(id),
      kind_(kind),
      native_(std::move(native)),
      last_input_(steady_now()),
      queue_(config.queue_limit),
      limiter_(config.command_rate, config.command_burst),
      extended_(kind != ClientKind::Native) {}

void Session::start(SharedBuffer greeting) {
  if (encoding() == Encoding::Json) subscribe(0);
  if (greeting) send(std::move(greeting));
  if (!closing_) start_transport();
}

void Session::refuse(SharedBuffer refusal) {
  refusing_ = true;
  send(std::move(refusal));
  after_write();  // a client in the original dialect is not told, only closed
}

void Session::knock(SharedBuffer notice, SteadyTime until) {
  knocking_until_ = until;
  subscribed_ = false;
  send(std::move(notice));
}

void Session::let_in() {
  if (!std::exchange(knocking_until_, std::nullopt)) return;
  if (encoding() == Encoding::Json) subscribe(0);
}

void Session::close(std::string_view reason, CloseKind kind) {
  if (closing_) return;
  closing_ = true;
  close_kind_ = kind;
  switch (kind) {
    case CloseKind::Normal:
    case CloseKind::Protocol:
    case CloseKind::Shutdown:
      break;
    case CloseKind::Stalled:
      ++counters_.clients_closed_stalled;
      break;
    case CloseKind::Behind:
      ++counters_.clients_closed_behind;
      break;
    case CloseKind::Dead:
      ++counters_.clients_dead;
      break;
  }
  close_transport(reason, kind);
  log_event(LogLevel::Info, log_cause::kConnections,
            "client " + std::to_string(id_) + " (" + std::string(client_kind_name(kind_)) + ", " + peer_ +
                ") closed: " + std::string(reason));
  host_.session_closed(*this);
}

void Session::handle_message(protocol::ByteView body) {
  if (is_blank(body)) return;
  auto parsed = protocol::json::parse_line(std::string_view(reinterpret_cast<const char*>(body.data()), body.size()));
  if (!parsed.object) {
    reply_error(parsed.id, parsed.object.error());
    return;
  }
  auto request = protocol::json::parse_bridge_request(parsed.cmd, parsed.object.value());
  if (!request) {
    host_.session_robot_command(*this, parsed.cmd, parsed.object.value(), parsed.id);
  } else if (!*request) {
    reply_error(parsed.id, request->error());
  } else {
    host_.session_request(*this, std::move(*request).value(), parsed.id);
  }
}

void Session::handle_native_bytes(protocol::ByteView bytes, SteadyTime now) {
  note_input(now);
  native_->feed(bytes, now);
  while (!closing_) {
    auto input = native_->next();
    if (!input) break;
    std::visit(Overloaded{
                   [&](protocol::ClientRequest& request) { host_.session_request(*this, std::move(request), nullptr); },
                   [&](native_input::Reply& reply) { queue_message(std::move(reply.message)); },
                   [&](native_input::Release&) { host_.session_released(*this); },
                   [&](native_input::BridgeMessages& choice) { choose_messages(choice); },
                   [&](native_input::Disconnect& disconnect) { close(disconnect.reason, CloseKind::Protocol); },
                   [&](protocol::Error& error) { reply_error(nullptr, error); },
               },
               *input);
  }
}

void Session::expire_native_input(SteadyTime now) {
  if (const std::size_t dropped = native_->expire(now, config_.message_timeout); dropped > 0) {
    report_incomplete(dropped);
  }
}

void Session::report_incomplete(std::size_t bytes) {
  reply_error(nullptr, protocol::Error{"incomplete message discarded: " + std::to_string(bytes) +
                                       " bytes did not make a whole message within " +
                                       std::to_string(config_.message_timeout.count()) + " ms"});
}

void Session::choose_messages(native_input::BridgeMessages& choice) {
  extended_ = choice.wanted;
  log_event(LogLevel::Info, log_cause::kConnections,
            "client " + std::to_string(id_) + " (" + peer_ + ") " +
                (extended_ ? "asked for the bridge's own messages (" + choice.asked + ")"
                           : "asked for the original dialect only (" + choice.asked + ")"));
  if (choice.answer) queue_message(std::move(choice.answer));
}

void Session::input_over(std::string lost) {
  if (closing_ || input_over_waiting_) return;
  input_over_waiting_ = true;
  lost_ = std::move(lost);
  host_.session_input_over(*this);
}

void Session::finish_input_over() {
  if (!std::exchange(input_over_waiting_, false) || closing_) return;
  if (!lost_.empty()) {
    close(lost_, CloseKind::Dead);
    return;
  }
  input_closed_ = true;
  subscribed_ = false;
  finish_if_done();
}

void Session::send(SharedBuffer message, MessageOrigin origin) {
  if (closing_ || !message) return;
  if (!extended() && native_ && !native_->admit(*message, origin)) {
    ++withheld_;
    return;
  }
  queue_message(std::move(message));
}

void Session::queue_message(SharedBuffer message) {
  if (!queue_.push(std::move(message))) {
    close("too far behind: " + std::to_string(queue_.size()) + " messages waiting", CloseKind::Behind);
    return;
  }
  flush();
}

bool Session::send_sensor(SharedBuffer message, SteadyTime now, bool hold) {
  if (closing_) return false;
  last_sensor_ = now;
  ++counters_.sensor_messages_sent;
  if (queue_.push_sensor(std::move(message), writing_)) ++counters_.sensor_messages_dropped;
  if (hold) return !std::exchange(output_held_, true);
  flush();
  return false;
}

void Session::flush_output(SendBatch& batch) {
  output_held_ = false;
  if (!closing_ && !add_write(batch)) flush();
}

bool Session::wants_sensor(SteadyTime now) const noexcept {
  return subscribed_ && !closing_ && !refusing_ && !knocking_until_ &&
         (interval_.count() == 0 || now - last_sensor_ >= interval_);
}

void Session::subscribe(std::uint32_t interval_ms) {
  subscribed_ = true;
  interval_ = std::chrono::milliseconds{interval_ms};
  last_sensor_ = {};
}

void Session::reply_ok(const nlohmann::json& id, std::optional<bool> confirmed) {
  host_.session_answered(*this, id, nullptr, confirmed, extended());
  send(encode(notice::Done{confirmed}, id));
}

void Session::reply_error(const nlohmann::json& id, const protocol::Error& error) {
  ++counters_.failed[static_cast<std::size_t>(error.code)];
  ++refused_;
  host_.session_answered(*this, id, &error, std::nullopt, extended());
  if (!extended()) {
    // The client would die on ERR: the operator hears of it instead.
    log_event(LogLevel::Info, log_cause::kRefusedCommands,
              "client " + std::to_string(id_) + " (" + peer_ + ", original dialect, not told): " + error.message);
    return;
  }
  log_debug("client " + std::to_string(id_) + ": " + error.message);
  send(encode(notice::Failed{error}, id));
}

SharedBuffer Session::encode(const Notice& notice, const nlohmann::json& id) const {
  if (kind_ == ClientKind::Native) return native_ ? native_->encode(notice) : nullptr;
  return wire::json_notice(notice, id);
}

std::string Session::address() const {
  return address_of(peer_);
}

void Session::log_event(LogLevel level, std::string_view cause, std::string_view message) const {
  log_about(level, {cause, address()}, message);
}

protocol::ClientSnapshot Session::snapshot() const {
  return {id_,
          std::string(client_kind_name(kind_)),
          peer_,
          commands_,
          queue_.dropped_total(),
          queue_.size(),
          refused_,
          withheld_,
          extended()};
}

std::vector<SharedBuffer> Session::take_output(std::size_t most) {
  std::vector<SharedBuffer> taken;
  take_output(most, taken);
  return taken;
}

void Session::take_output(std::size_t most, std::vector<SharedBuffer>& into) {
  if (!extended()) {
    queue_.take(most, into);  // no dropped notice: the original dialect has none
    return;
  }
  queue_.take(most, into, [this](std::uint64_t dropped) { return encode(notice::Dropped{dropped}); });
}

void Session::set_writing(bool writing) noexcept {
  if (writing && !writing_) write_started_ = steady_now();
  writing_ = writing;
}

void Session::after_write() {
  if (closing_ || writing_ || !queue_.empty()) return;
  if (refusing_) {
    close("refused: too many clients");
    return;
  }
  finish_if_done();
}

void Session::command_finished() {
  if (pending_commands_ > 0) --pending_commands_;
  finish_if_done();
}

void Session::finish_if_done() {
  if (input_closed_ && !closing_ && !writing_ && queue_.empty() && pending_commands_ == 0) close("disconnected");
}

void Session::housekeeping(SteadyTime now) {
  if (closing_) return;
  if (writing_ && now - write_started_ >= config_.stall_timeout) {
    close("not reading: a write has waited " +
              std::to_string(std::chrono::duration_cast<std::chrono::milliseconds>(now - write_started_).count()) +
              " ms",
          CloseKind::Stalled);
    return;
  }
  if (knocking_until_ && now >= *knocking_until_) {
    close("refused: too many clients, and the teacher's secret did not come");
    return;
  }
  transport_housekeeping(now);
}

}  // namespace flockbridge::bridge

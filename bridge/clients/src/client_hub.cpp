#include "flockbridge/bridge/client_hub.hpp"

#include <algorithm>
#include <utility>

#include "flockbridge/bridge/log.hpp"

namespace flockbridge::bridge {

ClientHub::ClientHub(const LoopTurns& turns, std::chrono::nanoseconds share, bool ring)
    : writes_(ring), writing_share_(turns, share), ending_share_(turns, share) {}

int ClientHub::init(uv_loop_t* loop) {
  return ender_.init<ClientHub, &ClientHub::end_departed>(loop, this);
}

void ClientHub::close_all(std::string_view reason) {
  ender_.reset();
  departed_.clear();
  held_.clear();
  for (auto& [id, session] : by_id_) session->close(reason, Session::CloseKind::Shutdown);
  list_.clear();
  by_id_.clear();
  closed_.clear();
}

Session& ClientHub::add(std::unique_ptr<Session> session) {
  const std::uint64_t id = session->id();
  Session& added = *by_id_.emplace(id, std::move(session)).first->second;
  list_.push_back(&added);
  return added;
}

Session* ClientHub::find(std::uint64_t id) const {
  const auto found = by_id_.find(id);
  return found == by_id_.end() ? nullptr : found->second.get();
}

Session* ClientHub::live(std::uint64_t id) const {
  Session* session = find(id);
  return session == nullptr || session->closing() ? nullptr : session;
}

std::size_t ClientHub::active(ClientKind kind) const {
  return static_cast<std::size_t>(std::count_if(list_.begin(), list_.end(), [&](const Session* s) {
    return s->kind() == kind && !s->closing() && !s->refusing() && !s->knocking();
  }));
}

std::size_t ClientHub::knocking(ClientKind kind) const {
  return static_cast<std::size_t>(std::count_if(list_.begin(), list_.end(), [&](const Session* s) {
    return s->kind() == kind && s->knocking() && !s->closing();
  }));
}

void ClientHub::hold(Session& session) {
  // Programs on the robot's own port run control loops: theirs first.
  if (session.kind() == ClientKind::Native) {
    held_.push_front(&session);
  } else {
    held_.push_back(&session);
  }
}

bool ClientHub::flush() {
  // A thousand clients' writes take milliseconds (on loopback each send
  // also does the receiver's TCP work): written in one go, they would hold
  // up whatever the robot's link is due to do meanwhile, such as starting
  // the next period of a robot whose bus the bridge polls. So a loop turn
  // writes sessions' output for its share of time and leaves the rest for
  // the next turn, after the loop has polled: the link's timer and the
  // robot's bytes come first, then new driver events, then the writing goes
  // on where it stopped. The share is a time, not a number of clients,
  // because a client's write may carry one message or many. Up to a batch's
  // worth of clients go between two readings of the clock: a thousand
  // readings a message would cost more than the share is worth.
  const bool ring = writes_.uses_ring();
  while (!held_.empty() && writing_share_.has_time()) {
    for (std::size_t taken = 0; taken < SendBatch::kCapacity && !held_.empty(); ++taken) {
      Session* session = held_.front();
      held_.pop_front();
      session->flush_output(writes_);
    }
    for (const SendBatch::Result& result : writes_.send()) static_cast<Session*>(result.owner)->write_sent(result);
  }
  if (ring && !writes_.uses_ring()) log_warning("client writes: " + writes_.summary());
  return !held_.empty();
}

void ClientHub::depart(Session& session, bool first) {
  // A class leaving at once (a lesson's end, a Wi-Fi drop's timeouts) is
  // ended a share at a time, as a class connecting at once is accepted:
  // each departure costs its close, its log line and the bookkeeping, and
  // a thousand in one loop turn would hold the robot's link up for
  // milliseconds. The rest wait for the turns after the loop has polled.
  if (departed_.empty() && ending_share_.has_time()) {
    session.finish_input_over();
    return;
  }
  if (first) {
    departed_.push_front(&session);
  } else {
    departed_.push_back(&session);
  }
  ender_.schedule();
}

void ClientHub::end_departed() {
  while (!departed_.empty() && ending_share_.has_time()) {
    Session* session = departed_.front();
    departed_.pop_front();
    session->finish_input_over();
  }
  if (!departed_.empty()) ender_.schedule();
}

void ClientHub::forget_closed() {
  std::erase_if(list_, [](const Session* session) { return session->closing(); });
  std::erase_if(held_, [](const Session* session) { return session->closing(); });
  std::erase_if(departed_, [](const Session* session) { return session->closing(); });
  for (const std::uint64_t id : closed_) by_id_.erase(id);
  closed_.clear();
}

void ClientHub::housekeeping(SteadyTime now) {
  // The list, not the map: a thousand clients ten times a second.
  for (Session* session : list_) session->housekeeping(now);
}

}  // namespace flockbridge::bridge

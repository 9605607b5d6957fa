#include "support/command_audit.hpp"

#include <cstdio>
#include <optional>
#include <stdexcept>

namespace flockbridge::testing {
namespace {

std::string text_of(int number) {
  char text[16];
  std::snprintf(text, sizeof(text), "n%05d", number);
  return text;
}

/// The number in an "rx 44 4C 53 6E 3x 3x 3x 3x 3x 00" line (D L S "n12345" NUL), if it is one.
std::optional<int> number_in(const std::string& hex) {
  // "44 4C 53 " then 6 characters of 3 hex digits each, then "00".
  if (hex.rfind("44 4C 53 6E ", 0) != 0 || hex.size() != 29 || hex.substr(hex.size() - 2) != "00") return std::nullopt;
  int number = 0;
  for (int i = 0; i < 5; ++i) {
    const std::string byte = hex.substr(12 + 3 * static_cast<std::size_t>(i), 2);
    if (byte[0] != '3' || byte[1] < '0' || byte[1] > '9') return std::nullopt;
    number = number * 10 + (byte[1] - '0');
  }
  return number;
}

}  // namespace

std::string without_timestamp(const std::string& line) {
  if (line.empty() || line[0] != '[') return line;
  const std::size_t end = line.find("] ");
  return end == std::string::npos ? line : line.substr(end + 2);
}

CommandAudit audit_commands(TcpClient& client, ChildProcess& sim, int count, int window,
                            const std::function<void(const nlohmann::json&)>& other) {
  CommandAudit audit;
  std::vector<int> outcome(static_cast<std::size_t>(count), 0);  // 0 none, 1 ok, 2 error
  int next = 0;
  int answered = 0;
  while (answered < count) {
    std::string batch;
    while (next < count && next - answered < window) {
      batch += "{\"cmd\":\"lcd_write\",\"text\":\"" + text_of(next) + "\",\"id\":" + std::to_string(next) + "}\n";
      ++next;
    }
    if (!batch.empty()) client.send(batch);
    auto message = client.read_json(std::chrono::seconds(30));
    if (!message) break;  // the rest count as unanswered
    const auto& type = (*message)["type"];
    if ((type == "ok" || type == "error") && message->contains("id") && (*message)["id"].is_number_integer()) {
      const int id = (*message)["id"];
      if (id >= 0 && id < count && outcome[static_cast<std::size_t>(id)] == 0) {
        outcome[static_cast<std::size_t>(id)] = type == "ok" ? 1 : 2;
        if (type == "error") ++audit.failed_by_code[(*message)["code"].get<std::string>()];
        ++answered;
      }
      continue;
    }
    other(*message);
  }

  // The last answers can arrive before this process has read the simulator's
  // last "rx" lines (it prints them, then acknowledges). A console command
  // answered after them marks the end of what it printed so far.
  sim.send_line("counters");
  sim.wait_for(ChildProcess::Stream::Stdout, "done counters");

  // "rx <hex>" for every frame the Uno accepted; "rx-damaged <hex> was <hex>"
  // right after it when that frame was damaged on the way (so its "rx" line
  // did not show what the client sent).
  std::vector<int> received(static_cast<std::size_t>(count), 0);
  std::vector<int> damaged(static_cast<std::size_t>(count), 0);
  const auto in_range = [&](std::optional<int> n) { return n && *n >= 0 && *n < count; };
  for (const std::string& raw : sim.lines(ChildProcess::Stream::Stdout)) {
    const std::string line = without_timestamp(raw);
    if (line.rfind("rx 44 4C 53", 0) == 0) {
      if (const auto n = number_in(line.substr(3)); in_range(n)) ++received[static_cast<std::size_t>(*n)];
    } else if (line.rfind("rx-damaged ", 0) == 0) {
      ++audit.damaged_frames;
      const std::size_t was = line.find(" was ");
      if (was == std::string::npos) continue;
      if (const auto got = number_in(line.substr(11, was - 11)); in_range(got))
        --received[static_cast<std::size_t>(*got)];
      if (const auto meant = number_in(line.substr(was + 5)); in_range(meant))
        ++damaged[static_cast<std::size_t>(*meant)];
    }
  }
  audit.sent = count;
  for (std::size_t i = 0; i < outcome.size(); ++i) {
    const int got = received[i];
    audit.answered_ok += outcome[i] == 1;
    audit.answered_error += outcome[i] == 2;
    audit.unanswered += outcome[i] == 0;
    audit.delivered_exact += got > 0;
    audit.delivered_twice += got > 1 ? got - 1 : 0;
    if (outcome[i] == 1 && got == 0 && damaged[i] == 0) {
      ++audit.lost_without_word;
      audit.lost_ids.push_back(static_cast<int>(i));
    }
    audit.damaged_accepted += outcome[i] == 1 && got == 0 && damaged[i] > 0;
    audit.failed_but_delivered += outcome[i] == 2 && got > 0;
  }
  return audit;
}

}  // namespace flockbridge::testing

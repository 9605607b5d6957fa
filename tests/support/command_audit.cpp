#include "support/command_audit.hpp"

#include <cstdio>
#include <optional>
#include <stdexcept>

namespace flockbridge::testing {
namespace {

/// Command `number` of the audit: its JSON name and form, and the payload
/// the Uno receives, in the simulator's hex.
struct Numbered {
  std::string name;
  std::string json;
  std::string hex;
};

std::string hex_of(std::initializer_list<int> bytes) {
  std::string text;
  char byte[4];
  for (const int b : bytes) {
    std::snprintf(byte, sizeof(byte), "%02X", b & 0xFF);
    if (!text.empty()) text += ' ';
    text += byte;
  }
  return text;
}

Numbered command_of(int number) {
  const int speed = 1 + number % 100;
  const int high = number / 100;
  switch (number % 4) {
    case 1:
      return {"move_distance",
              R"({"cmd":"move_distance","speed":)" + std::to_string(speed) + R"(,"dist":)" + std::to_string(high % 256),
              hex_of({'D', 'M', 'D', speed, high % 256})};
    case 2: {
      const int deg = high % 360;
      return {"rotate_degrees",
              R"({"cmd":"rotate_degrees","speed":)" + std::to_string(speed) + R"(,"deg":)" + std::to_string(deg),
              hex_of({'D', 'R', 'D', speed, deg & 0xFF, deg >> 8})};
    }
    case 3: {
      const int dist = high % 129;
      const int deg = (high / 129) % 360;
      return {"arc",
              R"({"cmd":"arc","speed":)" + std::to_string(speed - 1) + R"(,"dist":)" + std::to_string(dist) +
                  R"(,"deg":)" + std::to_string(deg),
              hex_of({'D', 'R', 'A', speed - 1, dist, deg & 0xFF, deg >> 8})};
    }
    default: {
      char text[16];
      std::snprintf(text, sizeof(text), "n%05d", number);
      std::string hex = hex_of({'D', 'L', 'S'});
      for (const char c : std::string(text)) hex.append(" ").append(hex_of({c}));
      return {"lcd_write", R"({"cmd":"lcd_write","text":")" + std::string(text) + "\"", hex + " 00"};
    }
  }
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
  std::vector<Numbered> commands;
  std::map<std::string, int> number_of;  // by payload hex
  for (int i = 0; i < count; ++i) {
    commands.push_back(command_of(i));
    number_of.emplace(commands.back().hex, i);
  }
  std::vector<int> outcome(static_cast<std::size_t>(count), 0);  // 0 none, 1 ok, 2 error
  std::vector<bool> confirmed(static_cast<std::size_t>(count), false);
  int next = 0;
  int answered = 0;
  while (answered < count) {
    std::string batch;
    while (next < count && next - answered < window) {
      batch += commands[static_cast<std::size_t>(next)].json + ",\"id\":" + std::to_string(next) + "}\n";
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
        confirmed[static_cast<std::size_t>(id)] = message->value("confirmed", false);
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
  const auto number_in = [&](const std::string& hex) -> std::optional<int> {
    const auto found = number_of.find(hex);
    return found == number_of.end() ? std::nullopt : std::optional<int>(found->second);
  };
  for (const std::string& raw : sim.lines(ChildProcess::Stream::Stdout)) {
    const std::string line = without_timestamp(raw);
    if (line.rfind("rx ", 0) == 0) {
      if (const auto n = number_in(line.substr(3))) ++received[static_cast<std::size_t>(*n)];
    } else if (line.rfind("rx-damaged ", 0) == 0) {
      ++audit.damaged_frames;
      const std::size_t was = line.find(" was ");
      if (was == std::string::npos) continue;
      if (const auto got = number_in(line.substr(11, was - 11))) --received[static_cast<std::size_t>(*got)];
      if (const auto meant = number_in(line.substr(was + 5))) ++damaged[static_cast<std::size_t>(*meant)];
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
    KindAudit& kind = audit.by_kind[commands[i].name];
    ++kind.sent;
    kind.confirmed += outcome[i] == 1 && confirmed[i];
    kind.unconfirmed += outcome[i] == 1 && !confirmed[i];
    kind.failed += outcome[i] == 2;
    kind.duplicated += got > 1 ? got - 1 : 0;
    if (outcome[i] == 1 && got == 0 && damaged[i] == 0) {
      ++audit.lost_without_word;
      ++kind.lost_without_word;
      audit.lost_ids.push_back(static_cast<int>(i));
    }
    audit.damaged_accepted += outcome[i] == 1 && got == 0 && damaged[i] > 0;
    audit.failed_but_delivered += outcome[i] == 2 && got > 0;
  }
  return audit;
}

}  // namespace flockbridge::testing

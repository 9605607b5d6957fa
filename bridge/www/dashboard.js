// The flockbridge dashboard: what the bridge says, shown; what the person
// does, sent. Its parts are modules of their own, no build step and nothing
// from the internet: the connection (connection.js), what the page knows
// (state.js), who may do what (access.js), hold to drive (drive.js), the
// robot model's view, the same for every family (robot-view.js), and each
// family's own panel (families.js and its family-*.js).
import { byWhom, inWords, openSignIn, showLatch, showLease, showPairing, showRole, signIn } from "./access.js";
import { connect, send, sendQuietly } from "./connection.js";
import { bindDriveControls, isMotion, release, stopDriving } from "./drive.js";
import { everyFamily, familyRow, hasPanel } from "./families.js";
import { $, capital, log, setStatus } from "./page.js";
import { onRobotModel, resetRobotView, showGeometry, showWorld } from "./robot-view.js";
import { state, stats } from "./state.js";

const STALE_MS = 1500;  // no sensor packet for this long: the readings are old
const MAX_LATENCIES = 2000;
const CLIENTS_MS = 2000;  // how often the client list is asked for
// What needs the robot there: the drive buttons (but Stop) and its own commands.
const ROBOT_CONTROLS = "[data-drive]:not([data-drive=stop]), [data-command], [data-command-on], #claw-set, " +
                       "#camera-set, #lcd-form button, #speed";

state.family = familyRow("");

// ---- messages from the bridge -------------------------------------------

function handle(message) {
  switch (message.type) {
    case "hello": {
      // The same bridge's hello again: plug and play serves another robot (or lost its own).
      const again = state.session !== null && message.session === state.session;
      if (state.session !== null && message.session !== state.session) {
        for (const row of everyFamily) row.forget?.();  // another bridge (or the same one restarted)
      }
      state.session = message.session;
      $("session").textContent = message.session;
      state.me = message.client ?? null;
      state.access = message.access || { pin: true, teacher: true };
      showRole(message.role || "driver");
      showLease({ holder: null });
      showLatch({ latched: false });  // a latch and waiting programs are told right after hello
      showPairing([]);
      showRecording({ active: false });  // a recording under way is told right after hello
      if (state.secret) signIn();
      showWorld(message);
      showRobot(message.robot || "", message.model || "");
      showGeometry();
      state.family.showHello?.(message);
      showReplay(message.replay || null);
      showFound(message.found || null);
      stats.lastSeq = null;
      setLink(message.link, message.reason || "");
      log(again ? "The bridge serves another robot now: " + $("robot-title").textContent + "."
                : "Connected to the bridge (session " + message.session + ").");
      break;
    }
    case "sensor":
      onSensor(message);
      break;
    case "link":
      setLink(message.state, message.reason || "");
      log("Robot link " + message.state + (message.reason ? ": " + message.reason : "") + ".",
          message.state === "up" ? "" : "warning");
      break;
    case "dropped":
      stats.dropped += message.count;
      $("dropped").textContent = String(stats.dropped);
      break;
    case "ok":
      if (message.role) {
        showRole(message.role);
        log("Signed in: you are " + (message.role === "teacher" ? "the teacher" : "a driver") + ".");
      }
      break;
    case "lease":
      showLease(message);
      break;
    case "lease_request":
      log("Client #" + message.client + " (" + message.peer + ") asks to drive: press Release to hand over.",
          "warning");
      break;
    case "pairing":
      showPairing(message.waiting);
      break;
    case "recording":
      if (message.active !== state.recording) log(message.active ? "Recording started by " + message.by + "." : "Recording stopped.");
      showRecording(message);
      break;
    case "emergency_latch":
      showLatch(message);
      if (message.latched) stopDriving();
      log(message.latched ? "Emergency stop latched by " + byWhom(message) + (message.reason ? " (" + message.reason + ")" : "") + "."
                          : "Emergency stop cleared by " + byWhom(message) + ".",
          message.latched ? "error" : "");
      break;
    case "stats":
      showControl(message.control);
      showClients(message.clients || {}, message.control ? message.control.holder : null);
      break;
    case "error":
      if (isMotion(message.id)) stopDriving();
      if (message.id !== undefined && message.id === state.authId) state.secret = null;  // ask again, not again and again
      log(inWords(message), "error");
      break;
    case "safety_stop":
      stopDriving();
      log("The bridge stopped the robot: " + message.reason, "warning");
      break;
    case "emergency":
      stopDriving();
      log("The robot sent an emergency stop.", "error");
      break;
    case "packet":
      if (message.tag === "DMC") log("The robot finished its move.");
      break;
    default:
      break;  // newer bridges may send more: skip what is not known
  }
}

/** Shows the panels and commands of the robot's family. */
function showRobot(name, model) {
  state.family = familyRow(name);
  resetRobotView();
  state.family.reset?.();
  if (state.family.interval_ms) sendQuietly({ cmd: "subscribe", interval_ms: state.family.interval_ms });
  // "auto": plug and play has found no robot yet (docs/plug-and-play.md).
  const title = name === "auto" ? "Looking for a robot" : state.family.title(name, model);
  $("robot-title").textContent = title;
  document.title = title + " – flockbridge";
  const shown = hasPanel(name) ? name : "";
  for (const element of document.querySelectorAll("[data-family]")) {
    element.hidden = element.dataset.family !== shown;
  }
}

/** Where plug and play found the robot: its device, speed and how long it took (docs/plug-and-play.md). */
function showFound(found) {
  const element = $("found");
  element.hidden = !found;
  if (!found) return;
  element.textContent = "Found on " + found.device + " at " + found.baud + " baud in " +
      (found.took_ms / 1000).toFixed(2) + " s" + (found.usb ? " (USB " + found.usb + ")" : "");
}

/** A replay of a recording, not a robot: which file, recorded when, how fast (docs/recording.md). */
function showReplay(replay) {
  const element = $("replay");
  element.hidden = !replay;
  state.replaying = Boolean(replay);
  // A recording cannot be driven, handed over or recorded again: no such controls.
  for (const selector of ["[data-drive]:not([data-drive=stop])", "#take", "#record", ".slider", "[data-testid=drive-help]"]) {
    for (const e of document.querySelectorAll(selector)) e.classList.toggle("in-replay", state.replaying);
  }
  updateRobotControls();
  if (!replay) return;
  const when = new Date(replay.recorded_at * 1000).toLocaleString();
  element.textContent = "Replay of " + replay.file + " (recorded " + when + (replay.speed !== 1 ? ", " + replay.speed + "× speed" : "") + ")";
}

/** Whether the run is being recorded: the red dot, and the button's word. */
function showRecording(message) {
  state.recording = message.active === true;
  $("recording").hidden = !state.recording;
  $("recording-by").textContent = state.recording && message.by ? "(started by " + message.by + ")" : "";
  $("record").textContent = state.recording ? "Stop recording" : "Record";
}

/** Who drives, on a robot whose own port lets one program drive at a time. */
function showControl(control) {
  if (!control || !state.family.control) return;
  $("control").textContent =
      (control.holder === null ? "Nobody holds control" : "Client #" + control.holder + " drives") +
      (control.refused > 0 ? "; " + control.refused + " motion commands of others refused" : "");
}

/** The client list; only a count when the bridge keeps the list for the teacher. */
function showClients(clients, holder) {
  const rows = $("client-rows");
  rows.replaceChildren();
  // Without the list, there are no columns to show: only how many.
  document.querySelector("[data-testid=clients] thead").hidden = !clients.list;
  if (!clients.list) {
    const row = document.createElement("tr");
    const cell = document.createElement("td");
    cell.colSpan = 7;
    cell.textContent = (clients.connected ?? 0) + " connected; the teacher sees who they are.";
    row.append(cell);
    rows.append(row);
    return;
  }
  for (const c of clients.list) {
    const row = document.createElement("tr");
    let kind = c.kind;
    if (c.kind === "binary") kind = state.family.nativeClient(c);
    if (holder !== null && holder !== undefined && c.id === holder) kind += ", driving";
    const labels = [...document.querySelectorAll("[data-testid=clients] thead th")].map((th) => th.textContent);
    [c.id, kind, c.peer, c.commands, c.refused ?? 0, c.withheld ?? 0, c.sensor_dropped].forEach((value, i) => {
      const cell = document.createElement("td");
      cell.textContent = String(value);
      cell.dataset.label = labels[i] || "";
      row.append(cell);
    });
    if ((c.refused ?? 0) > 0) row.className = "has-refused";
    rows.append(row);
  }
}

/**
 * Whether the robot can be commanded: its link up, and no replay. The
 * drive buttons and the robot's own commands are offered only then; the
 * emergency stop and Stop always are.
 */
function updateRobotControls() {
  const present = state.linkState === "up" && !state.replaying;
  for (const element of document.querySelectorAll("button, input, select")) {
    if (element.id === "emergency") continue;  // always
    const needsRobot = element.matches(ROBOT_CONTROLS);
    element.disabled = !state.connected || (needsRobot && !present);
    if (needsRobot) {
      element.title = present ? "" : state.replaying ? "A replay of a recording: nothing to drive" : "The robot is not connected";
    }
  }
}

function setLink(link, reason) {
  state.linkState = link;
  updateRobotControls();
  if (link !== "up") release();
  state.family.showLink?.(link);
  const labels = { up: "Robot connected", handshaking: "Robot starting", stale: "Robot silent", down: "Robot not connected" };
  const kinds = { up: "ok", handshaking: "warn", stale: "warn", down: "bad" };
  setStatus($("link"), labels[link] || "Robot: unknown", kinds[link] || "unknown");
  // Why not, and what to do: in a line of its own, where there is room for it.
  const help = link !== "up" && reason ? capital(reason) + "." : "";
  $("link-help").textContent = help;
  $("link-help").hidden = help === "";
}

function onSensor(s) {
  const now = Date.now();
  state.lastSensorAt = now;
  $(state.family.panel).classList.remove("stale");
  $("robot-panel").classList.remove("stale");
  $(state.family.stale).textContent = "";
  stats.sensors += 1;
  if (typeof s.ts === "number") {
    // Both clocks are wall clocks; performance.now() has finer steps than Date.now().
    stats.latencies.push((performance.timeOrigin + performance.now()) / 1000 - s.ts);
    if (stats.latencies.length > MAX_LATENCIES) stats.latencies.shift();
  }
  if (stats.lastSeq !== null && s.seq > stats.lastSeq + 1 && !state.family.interval_ms) {
    // Packets sent while this page was throttled or behind (a page that subscribed to fewer skips some).
    stats.dropped += s.seq - stats.lastSeq - 1;
    $("dropped").textContent = String(stats.dropped);
  }
  stats.lastSeq = s.seq;
  state.rateWindow.push(now);
  while (state.rateWindow.length && now - state.rateWindow[0] > 1000) state.rateWindow.shift();
  state.family.onSensor(s, now, state.rateWindow.length);
  if (s.ranges && typeof s.ranges === "object") onRobotModel(s, now);  // the robot model's fields
}

/** Whether the page is connected to the bridge: without it, nothing but the emergency stop is offered. */
function setControlsEnabled(enabled) {
  state.connected = enabled;
  updateRobotControls();
}

// Readings that stopped coming are shown as old, never as if they were live.
setInterval(() => {
  if (state.lastSensorAt === 0) return;
  const age = Date.now() - state.lastSensorAt;
  if (age < STALE_MS) return;
  $(state.family.panel).classList.add("stale");
  $("robot-panel").classList.add("stale");
  $(state.family.stale).textContent = "No new readings for " + Math.round(age / 1000) + " s: these are the last ones.";
  state.rateWindow.length = 0;
  $(state.family.rate).textContent = "0";
}, 500);

// The bridge's clients, from its stats, asked for quietly (no id, so an
// answer never reads as the answer to a command).
setInterval(() => sendQuietly({ cmd: "stats" }), CLIENTS_MS);

// ---- what the person does -------------------------------------------------

bindDriveControls();
for (const button of document.querySelectorAll("[data-command]")) {
  button.addEventListener("click", () => send({ cmd: button.dataset.command }));
}
for (const button of document.querySelectorAll("[data-command-on]")) {
  button.addEventListener("click", () => send({ cmd: button.dataset.commandOn, on: button.dataset.on === "true" }));
}
$("emergency").addEventListener("click", () => {
  if (send({ cmd: "emergency" }) !== null) {
    stopDriving();
    log("Emergency stop sent.", "warning");
  }
});
$("clear-emergency").addEventListener("click", () => send({ cmd: "clear_emergency" }));
$("sign-in").addEventListener("click", () => openSignIn("pin"));
$("teacher-sign-in").addEventListener("click", () => openSignIn("teacher"));
$("take").addEventListener("click", () => send({ cmd: state.driving ? "release" : "take" }));
$("record").addEventListener("click", () => send({ cmd: state.recording ? "record_stop" : "record_start" }));
$("secret-form").addEventListener("submit", (event) => {
  event.preventDefault();
  state.secret = { kind: state.secretKind, value: $("secret").value };
  $("secret").value = "";
  $("secret-form").hidden = true;
  signIn();
});
$("claw-set").addEventListener("click", () => send({ cmd: "claw_set", pos: Number($("claw-pos").value) }));
$("camera-set").addEventListener("click", () => send({ cmd: "camera_set", pos: Number($("camera-pos").value) }));
$("lcd-form").addEventListener("submit", (event) => {
  event.preventDefault();
  const text = $("lcd-text").value;
  if (!/^[ -~]{0,16}$/.test(text)) {
    log("The display takes at most 16 plain characters (letters, digits, punctuation, spaces).", "error");
    return;
  }
  if (send({ cmd: "lcd_cursor", row: Number($("lcd-row").value), col: 1 }) !== null) send({ cmd: "lcd_write", text });
});

window.flockbridge = { stats, send };
setControlsEnabled(false);
connect({
  opened: () => setControlsEnabled(true),
  message: handle,
  closed: () => {
    stopDriving();  // nothing can be held over a connection that is gone
    setControlsEnabled(false);
  },
  unreachable: () => setLink("unknown", ""),
});

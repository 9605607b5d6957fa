// The flockbridge dashboard: one WebSocket to the bridge's /ws feed, which
// speaks the JSON messages of port 2006 (one object per message). No build
// step and nothing from the internet: this file is all there is.
"use strict";

(() => {
  const RECONNECT_MIN_MS = 500;
  const RECONNECT_MAX_MS = 5000;
  const SILENCE_MS = 3000;       // no message for this long: say so
  const STALE_MS = 1500;         // no sensor packet for this long: the readings are old
  const PLOT_SECONDS = 20;
  const MAX_LOG = 50;
  const MAX_LATENCIES = 2000;
  const CLIENTS_MS = 2000;       // how often the client list is asked for
  const TRACE_SECONDS = 60;      // the robot's path shown
  const ECHO_SECONDS = 5;        // what its range sensors saw, shown this long
  const SMR_INTERVAL_MS = 50;
  // Hold to drive: while a drive key or button is held its command goes
  // again this often, each with a dead-man time after which the bridge
  // stops the robot by itself; so a page that is hidden, frozen or cut off
  // stops its robot within DEADMAN_MS even when it cannot say so. A page
  // that has heard nothing from the bridge for HOLD_QUIET_MS stops driving.
  const HOLD_REPEAT_MS = 150;
  const DEADMAN_MS = 500;
  const HOLD_QUIET_MS = 700;
  // What the page does differently for each robot family, from hello's
  // "robot": its sensor panel (where its staleness note and rate go), its
  // title, how it shows a sensor message, what the programs on its own port
  // are called in the client list, and how it drives. The rest of the page
  // names no family. A family the page has no row for gets ANY_FAMILY: its
  // readings as they come, each field on a line.
  //   interval_ms: what the page subscribes to, for a robot that sends more
  //                than a page wants to draw (the page then counts no gaps);
  //   control:     its own port lets one program drive at a time (stats' "control").
  const FAMILIES = {
    flockbot: {
      panel: "sensors-panel", stale: "stale", rate: "rate",
      title: () => "Flockbot",
      onSensor: onFlockbotSensor,
      nativeClient: (c) => (c.extensions === false ? "binary (original)" : "binary"),
      motion: percentMotion,
    },
    pioneer: {
      panel: "pioneer-panel", stale: "pioneer-stale", rate: "pioneer-rate",
      title: (model) => (model.startsWith("amigo") ? "AmigoBot" : "Pioneer") + (model ? " " + model : ""),
      onSensor: onPioneerSensor,
      nativeClient: () => "ARIA (8101)",
      motion: driveMotion,
      control: true,
    },
    smr: {
      panel: "smr-panel", stale: "smr-stale", rate: "smr-rate",
      title: () => "SMR",
      onSensor: onSmrSensor,
      nativeClient: () => "SMR program (24901)",
      motion: driveMotion,
      interval_ms: SMR_INTERVAL_MS,  // 100 periods a second, shown 20 times a second
    },
  };
  const ANY_FAMILY = {
    panel: "readings-panel", stale: "readings-stale", rate: "readings-rate",
    onSensor: onAnySensor,
    nativeClient: () => "native",
    motion: driveMotion,
  };

  const $ = (id) => document.getElementById(id);

  // What the page has seen, for the person and for tests (window.flockbridge).
  const stats = {
    connects: 0,
    sensors: 0,
    dropped: 0,
    lastSeq: null,
    latencies: [],  // seconds from the bridge receiving a packet to this page
  };

  let socket = null;
  let attempts = 0;
  let reconnectTimer = null;
  let lastMessageAt = 0;
  let nextId = 1;
  let motion = null;  // what the drive controls last asked for
  let motionId = null;  // the id of that command, to notice when it is refused
  let held = null;  // the direction whose key or button is held down
  let holdTimer = null;
  let heldTick = 0;  // when the held command last went
  let session = null;
  let lastSensorAt = 0;
  let family = ANY_FAMILY;  // the robot's row of FAMILIES, from hello
  let me = null;  // this connection's client number, from hello
  let role = null;  // "viewer", "driver" or "teacher": this connection's
  let recording = false;  // whether the bridge records the run (docs/recording.md)
  let access = { pin: false, teacher: false };  // which secrets the robot has set, from hello
  let latch = null;  // the latched emergency stop, as the bridge last told it; null when free
  let waitingPrograms = [];  // programs on the robot's own port waiting to be approved
  let driving = false;  // this connection holds the robot's control lease
  // The PIN or teacher's secret given on this page, kept in memory only (never
  // stored, never in a URL) to sign in again after a reconnect.
  let secret = null;  // {kind: "pin" | "teacher", value}
  let secretKind = "pin";  // what the open sign-in form asks for
  let authId = null;  // the id of the last auth, to notice when it is refused
  const history = [];  // {t, odoL, odoR, wwL, wwR}
  const trace = [];    // the robot's path, from its pose: {t, x, y, th}
  const echoes = new Map();  // where each range sensor last saw something, by name: {t, x, y}
  const sonar = new Map();  // a Pioneer's sonar's latest reading, by disc: {deg, mm, t}
  let room = null;  // a simulated robot's room: [min x, min y, max x, max y] in mm, from hello
  let boxes = [];  // the boxes in it, the same way
  let geometry = null;  // what the robot is, from hello (the robot model's geometry)
  let connected = false;  // to the bridge
  let linkState = "unknown";  // the robot link's, from hello and link messages
  let replaying = false;  // the bridge replays a recording (hello's replay)
  // What needs the robot there: the drive buttons (but Stop) and its own commands.
  const ROBOT_CONTROLS = "[data-drive]:not([data-drive=stop]), [data-command], [data-command-on], #claw-set, " +
                         "#camera-set, #lcd-form button, #speed";
  let lastModel = null;  // the robot model's fields of the latest reading
  const rateWindow = [];

  // ---- connection ----------------------------------------------------------

  function setStatus(element, text, kind) {
    element.textContent = text;
    element.className = "status status-" + kind;
  }

  function connect() {
    clearTimeout(reconnectTimer);
    const scheme = location.protocol === "https:" ? "wss://" : "ws://";
    setStatus($("connection"), "Connecting to the bridge…", "connecting");
    try {
      socket = new WebSocket(scheme + location.host + "/ws");
    } catch (error) {
      scheduleReconnect("cannot open a connection: " + error.message);
      return;
    }
    socket.onopen = () => {
      attempts = 0;
      stats.connects += 1;
      lastMessageAt = Date.now();
      setStatus($("connection"), "Bridge connected", "ok");
      setControlsEnabled(true);
    };
    socket.onmessage = (event) => {
      lastMessageAt = Date.now();
      let message;
      try {
        message = JSON.parse(event.data);
      } catch (error) {
        log("The bridge sent something that is not JSON: " + String(event.data).slice(0, 80), "error");
        return;
      }
      handle(message);
    };
    socket.onclose = (event) => {
      socket = null;
      stopDriving();  // nothing can be held over a connection that is gone
      setControlsEnabled(false);
      const why = event.reason ? ": " + event.reason : event.code === 1006 ? " (connection lost)" : "";
      scheduleReconnect("the bridge closed the connection" + why);
    };
    socket.onerror = () => {
      // onclose follows with what can be known.
    };
  }

  function scheduleReconnect(reason) {
    const delay = Math.min(RECONNECT_MAX_MS, RECONNECT_MIN_MS * 2 ** attempts);
    attempts += 1;
    setStatus($("connection"), "Bridge unreachable, retrying in " + Math.ceil(delay / 1000) + " s", "bad");
    setLink("unknown", "");
    if (attempts === 1) log("Lost the bridge: " + reason + ". Retrying until it is back.", "warning");
    reconnectTimer = setTimeout(connect, delay);
  }

  // Readings that stopped coming are shown as old, never as if they were live.
  setInterval(() => {
    if (lastSensorAt === 0) return;
    const age = Date.now() - lastSensorAt;
    if (age < STALE_MS) return;
    $(family.panel).classList.add("stale");
    $("robot-panel").classList.add("stale");
    $(family.stale).textContent = "No new readings for " + Math.round(age / 1000) + " s: these are the last ones.";
    rateWindow.length = 0;
    $(family.rate).textContent = "0";
  }, 500);

  // A connection can stay open while nothing arrives (a network that went
  // away without a word): say so, and start again.
  setInterval(() => {
    if (!socket || socket.readyState !== WebSocket.OPEN) return;
    const silent = Date.now() - lastMessageAt;
    if (silent > 2 * SILENCE_MS) {
      log("Nothing from the bridge for " + Math.round(silent / 1000) + " s: reconnecting.", "warning");
      socket.close();
    } else if (silent > SILENCE_MS) {
      setStatus($("connection"), "No data from the bridge for " + Math.round(silent / 1000) + " s", "warn");
    }
  }, 500);

  // ---- messages from the bridge -------------------------------------------

  function handle(message) {
    switch (message.type) {
      case "hello":
        if (session !== null && message.session !== session) {
          history.length = 0;  // another bridge (or the same one restarted): its packets start again
          schedulePlot();
        }
        session = message.session;
        $("session").textContent = message.session;
        me = message.client ?? null;
        access = message.access || { pin: true, teacher: true };
        showRole(message.role || "driver");
        showLease({ holder: null });
        showLatch({ latched: false });  // a latch and waiting programs are told right after hello
        showPairing([]);
        showRecording({ active: false });  // a recording under way is told right after hello
        if (secret) signIn();
        room = message.simulated && Array.isArray(message.simulated.room_mm) ? message.simulated.room_mm : null;
        boxes = message.simulated && Array.isArray(message.simulated.boxes_mm) ? message.simulated.boxes_mm : [];
        geometry = message.geometry || null;
        showRobot(message.robot || "", message.model || "");
        showGeometry();
        showReplay(message.replay || null);
        stats.lastSeq = null;
        setLink(message.link, message.reason || "");
        log("Connected to the bridge (session " + message.session + ").");
        break;
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
        if (message.active !== recording) log(message.active ? "Recording started by " + message.by + "." : "Recording stopped.");
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
        if (message.id !== undefined && message.id === motionId) stopDriving();
        if (message.id !== undefined && message.id === authId) secret = null;  // ask again, not again and again
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

  // The bridge's clients, from its stats, asked for quietly (no id, so an
  // answer never reads as the answer to a command).
  setInterval(() => {
    if (socket && socket.readyState === WebSocket.OPEN) socket.send(JSON.stringify({ cmd: "stats" }));
  }, CLIENTS_MS);

  /** Shows the panels and commands of the robot's family. */
  function showRobot(name, model) {
    const known = Object.hasOwn(FAMILIES, name);
    const shown = known ? name : "";
    family = known ? FAMILIES[name] : ANY_FAMILY;
    trace.length = 0;
    echoes.clear();
    sonar.clear();
    lastModel = null;
    $("robot-panel").hidden = true;  // until a reading with the robot model's fields comes
    $("sonar").replaceChildren();
    if (family.interval_ms) socket.send(JSON.stringify({ cmd: "subscribe", interval_ms: family.interval_ms }));
    const title = known ? family.title(model) : (name || "Robot") + (model && model !== name ? " " + model : "");
    $("robot-title").textContent = title;
    document.title = title + " – flockbridge";
    for (const element of document.querySelectorAll("[data-family]")) {
      element.hidden = element.dataset.family !== shown;
    }
  }

  /** This connection's role: the sign-in buttons it needs, and the buttons it may use. */
  function showRole(newRole) {
    role = newRole;
    $("role").textContent = role === "viewer" ? "watching (the PIN lets you drive)" : role;
    $("sign-in").hidden = !(role === "viewer" && access.pin);
    $("teacher-sign-in").hidden = role === "teacher" || !access.teacher;
    // A viewer may only watch and stop: no button that could only fail.
    $("take").hidden = role === "viewer";
    // Recording is the teacher's or a driver's to start and stop.
    $("record").hidden = role === "viewer";
    showClear();
    showPairing(waitingPrograms);
  }

  /** Whether the run is being recorded: the red dot, and the button's word. */
  /** A replay of a recording, not a robot: which file, recorded when, how fast (docs/recording.md). */
  function showReplay(replay) {
    const element = $("replay");
    element.hidden = !replay;
    replaying = Boolean(replay);
    // A recording cannot be driven, handed over or recorded again: no such controls.
    for (const selector of ["[data-drive]:not([data-drive=stop])", "#take", "#record", ".slider", "[data-testid=drive-help]"]) {
      for (const e of document.querySelectorAll(selector)) e.classList.toggle("in-replay", replaying);
    }
    updateRobotControls();
    if (!replay) return;
    const when = new Date(replay.recorded_at * 1000).toLocaleString();
    element.textContent = "Replay of " + replay.file + " (recorded " + when + (replay.speed !== 1 ? ", " + replay.speed + "× speed" : "") + ")";
  }

  function showRecording(message) {
    recording = message.active === true;
    $("recording").hidden = !recording;
    $("recording-by").textContent = recording && message.by ? "(started by " + message.by + ")" : "";
    $("record").textContent = recording ? "Stop recording" : "Record";
  }

  /** Who sent an emergency stop, or cleared it, in words. */
  function byWhom(message) {
    if (message.by.client === 0) return message.by.peer;
    return (message.by.client === me ? "you" : "client #" + message.by.client) + " (" + message.by.peer + ")";
  }

  /** An error from the bridge, in words for the person at this page (the bridge's words are for programs). */
  function inWords(error) {
    if (error.code === "denied" && role === "viewer" && error.id !== authId) {
      return access.pin ? "You are watching this robot. To drive it, press “Drive…” and give the robot's PIN."
                        : "You are watching this robot, and may only stop it.";
    }
    if (error.code === "link_down") {
      // Why, and what to do, is said once, at the top of the page.
      return "Not sent: the robot is not connected" + ($("link-help").hidden ? "." : " (see the top of the page).");
    }
    if (error.code === "latched") {
      return "Not sent: the emergency stop is latched." + (latch && latch.clear_by ? " " + capital(latch.clear_by) + " may clear it." : "");
    }
    // What the bridge tells programs to send ({"cmd":...}) is not for people.
    return String(error.error).replace(/:?\s*(with\s+)?\{"cmd".*?\}( or)?/g, "").replace(/[:;,]\s*$/, "") || "Refused.";
  }

  function capital(text) {
    return text.charAt(0).toUpperCase() + text.slice(1);
  }

  /** Who holds the robot's control lease. */
  function showLease(lease) {
    const holder = lease.holder;
    driving = holder !== null && holder.client === me;
    $("driver").textContent = holder === null ? "Nobody drives."
        : driving ? "You drive."
        : "Client #" + holder.client + " (" + holder.peer + ", " + holder.kind + ") drives, since " +
          new Date(holder.since * 1000).toLocaleTimeString() + ".";
    $("take").textContent = driving ? "Release" : "Take control";
  }

  /** The connections on the robot's own port waiting to be approved (native_port_mode paired). */
  function showPairing(waiting) {
    waitingPrograms = waiting;
    const list = $("pairing-list");
    list.replaceChildren();
    for (const w of waiting) {
      const item = document.createElement("li");
      item.textContent = "Client #" + w.client + " from " + w.peer + ", since " +
                         new Date(w.since * 1000).toLocaleTimeString();
      // Approving takes the PIN: a viewer is shown the list, not a button that would fail.
      if (role !== "viewer") {
        const approve = document.createElement("button");
        approve.type = "button";
        approve.textContent = "Approve";
        approve.dataset.testid = "approve-" + w.client;
        approve.addEventListener("click", () => send({ cmd: "approve", client: w.client }));
        item.append(approve);
      }
      list.append(item);
    }
    $("pairing").hidden = waiting.length === 0;
  }

  /** The latched emergency stop: who stopped the robot, and who may clear it. */
  function showLatch(message) {
    latch = message.latched ? message : null;
    $("latch").hidden = !latch;
    if (latch) {
      const holds = latch.holds && latch.holds.length ? latch.holds : [latch];
      $("latch-by").textContent = holds.map((hold) =>
        "by " + byWhom(hold) + (hold.reason ? " (" + hold.reason + ")" : "") + " at " +
        new Date(hold.since * 1000).toLocaleTimeString()).join(", and ");
      $("latch-who").textContent = latch.clear_by ? capital(latch.clear_by) + " may clear it." : "";
    }
    showClear();
  }

  /** Clear is offered only to whom the latch's rules let clear it. */
  function showClear() {
    const mayClear = latch !== null && (latch.may_clear || ["teacher", "driver"]).includes(role);
    $("clear-emergency").hidden = !mayClear;
  }

  function signIn() {
    authId = send({ cmd: "auth", [secret.kind]: secret.value });
  }

  function openSignIn(kind) {
    secretKind = kind;
    $("secret-label").textContent = kind === "pin" ? "The robot's PIN" : "The teacher's secret";
    $("secret-form").hidden = false;
    $("secret").focus();
  }

  /** Who drives, on a robot whose own port lets one program drive at a time. */
  function showControl(control) {
    if (!control || !family.control) return;
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
      if (c.kind === "binary") kind = family.nativeClient(c);
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
    const present = linkState === "up" && !replaying;
    for (const element of document.querySelectorAll("button, input, select")) {
      if (element.id === "emergency") continue;  // always
      const needsRobot = element.matches(ROBOT_CONTROLS);
      element.disabled = !connected || (needsRobot && !present);
      if (needsRobot) {
        element.title = present ? "" : replaying ? "A replay of a recording: nothing to drive" : "The robot is not connected";
      }
    }
  }

  function setLink(state, reason) {
    linkState = state;
    updateRobotControls();
    if (state !== "up") release();
    $("sonar-none").hidden = state !== "up" || sonar.size > 0;
    const labels = { up: "Robot connected", handshaking: "Robot starting", stale: "Robot silent", down: "Robot not connected" };
    const kinds = { up: "ok", handshaking: "warn", stale: "warn", down: "bad" };
    setStatus($("link"), labels[state] || "Robot: unknown", kinds[state] || "unknown");
    // Why not, and what to do: in a line of its own, where there is room for it.
    const help = state !== "up" && reason ? capital(reason) + "." : "";
    $("link-help").textContent = help;
    $("link-help").hidden = help === "";
  }

  function onSensor(s) {
    const now = Date.now();
    lastSensorAt = now;
    $(family.panel).classList.remove("stale");
    $("robot-panel").classList.remove("stale");
    $(family.stale).textContent = "";
    stats.sensors += 1;
    if (typeof s.ts === "number") {
      // Both clocks are wall clocks; performance.now() has finer steps than Date.now().
      stats.latencies.push((performance.timeOrigin + performance.now()) / 1000 - s.ts);
      if (stats.latencies.length > MAX_LATENCIES) stats.latencies.shift();
    }
    if (stats.lastSeq !== null && s.seq > stats.lastSeq + 1 && !family.interval_ms) {
      // Packets sent while this page was throttled or behind (a page that subscribed to fewer skips some).
      stats.dropped += s.seq - stats.lastSeq - 1;
      $("dropped").textContent = String(stats.dropped);
    }
    stats.lastSeq = s.seq;
    rateWindow.push(now);
    while (rateWindow.length && now - rateWindow[0] > 1000) rateWindow.shift();
    family.onSensor(s, now);
    if (Array.isArray(s.ranges)) onRobotModel(s, now);
  }

  // ---- the robot model: the same fields from every family --------------------

  /** A value, or what to say when the bridge does not know it. */
  function known(value, show) {
    return typeof value === "number" ? show(value) : "not known";
  }

  /** The robot model's panel: pose, speeds, battery, bumpers, and the view from above. */
  function onRobotModel(s, now) {
    lastModel = s;
    $("robot-panel").hidden = false;
    const pose = s.pose;
    $("pose-x").textContent = pose ? pose.x_mm.toFixed(0) : "–";
    $("pose-y").textContent = pose ? pose.y_mm.toFixed(0) : "–";
    $("pose-th").textContent = pose ? pose.th_deg.toFixed(1) : "–";
    $("pose-unknown").hidden = Boolean(pose);
    $("robot-v").textContent = known(s.v_mm_s, (v) => v.toFixed(0));
    $("robot-w").textContent = known(s.w_deg_s, (w) => w.toFixed(1));
    $("robot-battery").textContent = known(s.battery_v, (v) => v.toFixed(2) + " V");
    const bumped = s.bumped || [];
    $("robot-bumped").textContent = bumped.length ? "pressed: " + bumped.join(", ") : "none pressed";
    $("robot-bumped").classList.toggle("pressed", bumped.length > 0);
    showRanges(s.ranges);
    if (pose) addToTrace(pose, now);
    // Where each sensor's ray ends, in the room: its mounting turned by the pose.
    const at = pose || { x_mm: 0, y_mm: 0, th_deg: 0 };
    for (const r of s.ranges) {
      if (typeof r.mm !== "number" || typeof r.deg !== "number") continue;
      const heading = (at.th_deg * Math.PI) / 180;
      const sx = at.x_mm + (r.x_mm || 0) * Math.cos(heading) - (r.y_mm || 0) * Math.sin(heading);
      const sy = at.y_mm + (r.x_mm || 0) * Math.sin(heading) + (r.y_mm || 0) * Math.cos(heading);
      const axis = heading + (r.deg * Math.PI) / 180;
      echoes.set(r.name, { t: now, x: sx + r.mm * Math.cos(axis), y: sy + r.mm * Math.sin(axis) });
    }
    for (const [name, echo] of echoes) if (now - echo.t > ECHO_SECONDS * 1000) echoes.delete(name);
    $("view").dataset.echoes = String(echoes.size);
    $("view").dataset.points = String(trace.length);
    scheduleView();
  }

  /** Every range reading as a number: each sensor's name (where it looks) and its mm. */
  function showRanges(ranges) {
    const box = $("robot-ranges");
    if (box.children.length !== ranges.length) {
      box.replaceChildren(...ranges.map(() => {
        const item = document.createElement("span");
        item.className = "range";
        return item;
      }));
    }
    ranges.forEach((r, i) => {
      box.children[i].textContent = String(r.name).replaceAll("_", " ") + " " +
        (typeof r.mm === "number" ? Math.round(r.mm) : "–");
    });
  }

  /** What the robot has, from hello's geometry: no Bumpers row on a robot without any, where its IR sensors look. */
  function showGeometry() {
    const bumpers = geometry && Array.isArray(geometry.bumpers) ? geometry.bumpers : null;
    for (const e of document.querySelectorAll('[data-has="bumpers"]')) e.hidden = bumpers !== null && bumpers.length === 0;
    const ranges = geometry && Array.isArray(geometry.ranges) ? geometry.ranges : [];
    for (const e of document.querySelectorAll('[data-has="ranges"]')) e.hidden = ranges.length === 0;
    const ir = ranges.filter((r) => r.kind === "ir" && typeof r.deg === "number");
    $("ir-places").textContent = ir.length === 5
      ? "In the order of the sensor packet, where each looks: " +
        ir.map((r, i) => "IR " + i + " " + direction(r.deg) + " (" + Math.round(r.deg) + "°)").join(", ") +
        ". Nearer reads higher."
      : "In the order of the sensor packet (ir0 to ir4); nearer reads higher. Where each sits on the robot is not " +
        "configured ([flockbot.geometry]).";
  }

  /** A robot the page has no panel for: each field of its readings on a line, as the bridge sent it. */
  function onAnySensor(s) {
    $("readings-rate").textContent = String(rateWindow.length);
    const list = $("readings");
    list.replaceChildren();
    for (const [key, value] of Object.entries(s)) {
      if (key === "type" || key === "ts") continue;
      const term = document.createElement("dt");
      term.textContent = key;
      const description = document.createElement("dd");
      description.textContent = typeof value === "object" ? JSON.stringify(value) : String(value);
      list.append(term, description);
    }
  }

  /** Adds a pose to the path and forgets what is older than the path shows. */
  function addToTrace(pose, now) {
    trace.push({ t: now, x: pose.x_mm, y: pose.y_mm, th: pose.th_deg });
    while (trace.length && now - trace[0].t > TRACE_SECONDS * 1000) trace.shift();
  }

  function onSmrSensor(s, now) {
    $("smr-tick").textContent = String(s.tick);
    $("smr-rate").textContent = String(rateWindow.length);
    if (s.power) {
      // The switch off is the alarm (SMRD powered the computer off); the others are news.
      const on = s.power.inputs.includes("power_on");
      $("smr-power-on").textContent = on ? "power switch on" : "power switch off";
      $("smr-power-on").classList.toggle("lit", on);
      $("smr-power-on").classList.toggle("pressed", !on);
      $("smr-external").classList.toggle("lit", s.power.inputs.includes("external_power"));
      $("smr-charging").classList.toggle("lit", s.power.inputs.includes("charging"));
    }
    const wheel = (w) => w ? `speed ${w.speed}, encoder ${w.encoder}` + (w.status && w.status.length ? " (" + w.status.join(", ") + ")" : "") : "no answer";
    if (s.wheels) {
      $("smr-left").textContent = wheel(s.wheels.left);
      $("smr-right").textContent = wheel(s.wheels.right);
    }
    $("smr-missing").textContent = s.missing ? "no answer from: " + s.missing.join(", ") : "all answering";
    if (!s.power) {
      for (const id of ["smr-power-on", "smr-external", "smr-charging"]) $(id).classList.remove("lit", "pressed");
    }
    if (s.line) {
      for (let i = 0; i < 8; i++) {
        const cell = $("ls" + i);
        const value = s.line[i];
        cell.textContent = String(value);
        cell.style.background = `rgb(${value}, ${value}, ${value})`;
        cell.classList.toggle("dark", value < 128);
      }
    }
    if (s.ir) {
      for (let i = 0; i < 6; i++) {
        $("sir" + i).style.height = Math.min(100, (s.ir[i] / 255) * 100).toFixed(1) + "%";
        $("sir" + i + "-value").textContent = String(s.ir[i]);
      }
    }
  }

  function onFlockbotSensor(s, now) {
    $("seq").textContent = String(s.seq);
    $("rate").textContent = String(rateWindow.length);
    // Volts when the bridge is configured with a factor ([flockbot.units]), else the Uno's raw count.
    $("battery").textContent =
      typeof s.battery_v === "number" ? `${s.battery_v.toFixed(2)} V` : `${s.battery} (raw count)`;
    $("battery-meter").value = s.battery;
    for (let i = 0; i < 5; i++) {
      const value = s.ir[i];
      $("ir" + i).style.height = Math.min(100, (value / 1023) * 100).toFixed(1) + "%";
      $("ir" + i + "-value").textContent = String(value);
    }
    $("l_bump").classList.toggle("pressed", s.l_bump !== 0);
    $("h_bump").classList.toggle("pressed", s.h_bump !== 0);
    $("odo-left").textContent = String(s.odometer.left);
    $("odo-right").textContent = String(s.odometer.right);
    $("odo-avg").textContent = String(s.odometer.avg);
    $("ww-left").textContent = String(s.wheel_watcher.left);
    $("ww-right").textContent = String(s.wheel_watcher.right);

    history.push({ t: now, odoL: s.odometer.left, odoR: s.odometer.right, wwL: s.wheel_watcher.left, wwR: s.wheel_watcher.right });
    while (history.length && now - history[0].t > PLOT_SECONDS * 1000) history.shift();
    schedulePlot();
  }

  function onPioneerSensor(s, now) {
    $("pioneer-seq").textContent = String(s.seq);
    $("pioneer-rate").textContent = String(rateWindow.length);
    $("pioneer-motors").textContent = s.motors ? "on" : "off";
    const stalled = ["left", "right"].filter((side) => s.stall && s.stall[side]);
    $("stall").textContent = stalled.length ? stalled.join(" and ") + " wheel stalled" : "turning freely";
    $("stall").classList.toggle("pressed", stalled.length > 0);
    for (const reading of s.sonar || []) {
      if (typeof reading.deg === "number") sonar.set(reading.n, { deg: reading.deg, mm: reading.mm, t: now });
    }
    showSonar(now);
  }

  /** Where a sensor looks, in words, from its angle (counter-clockwise from the front). */
  function direction(deg) {
    const a = ((deg % 360) + 540) % 360 - 180;  // -180..180
    const side = a > 0 ? "left" : "right";
    const m = Math.abs(a);
    if (m <= 15) return "front";
    if (m < 75) return "front " + side;
    if (m <= 105) return side;
    if (m < 165) return "rear " + side;
    return "rear";
  }

  /** A Pioneer's sonar: one bar per disc, fuller the nearer its echo, named by where it looks. */
  function showSonar(now) {
    const box = $("sonar");
    const discs = [...sonar.entries()].sort((a, b) => a[0] - b[0]);
    $("sonar-none").hidden = discs.length > 0 || linkState !== "up";
    if (box.children.length !== discs.length) {
      box.replaceChildren();
      for (const [n, disc] of discs) {
        const cell = document.createElement("div");
        cell.className = "sonar-disc";
        cell.innerHTML = '<div class="ir-bar"><div class="fill"></div><span></span></div><span class="ir-name"></span>';
        cell.querySelector(".ir-name").textContent = direction(disc.deg) + " " + Math.round(disc.deg) + "°";
        cell.dataset.disc = String(n);
        box.append(cell);
      }
    }
    discs.forEach(([, disc], i) => {
      const cell = box.children[i];
      const old = now - disc.t > ECHO_SECONDS * 1000;
      cell.classList.toggle("old", old);
      cell.querySelector(".fill").style.height = (100 * (1 - Math.min(disc.mm, 5000) / 5000)).toFixed(1) + "%";
      cell.querySelector(".ir-bar span").textContent = (disc.mm / 1000).toFixed(2) + " m";
    });
  }

  // ---- the plot -------------------------------------------------------------

  /** A function that draws with `draw` at the next frame, however often it is called before then. */
  function onNextFrame(draw) {
    let pending = false;
    return () => {
      if (pending) return;
      pending = true;
      requestAnimationFrame(() => {
        pending = false;
        draw();
      });
    };
  }

  /** The canvas, sized to its box in device pixels and cleared: its context, size and pixel ratio. */
  function clearedCanvas(id) {
    const canvas = $(id);
    const ratio = window.devicePixelRatio || 1;
    const width = canvas.clientWidth * ratio;
    const height = canvas.clientHeight * ratio;
    if (canvas.width !== width || canvas.height !== height) {
      canvas.width = width;
      canvas.height = height;
    }
    const g = canvas.getContext("2d");
    g.clearRect(0, 0, width, height);
    return { g, width, height, ratio };
  }

  const schedulePlot = onNextFrame(drawPlot);

  function drawPlot() {
    const { g, width, height, ratio } = clearedCanvas("plot");
    $("plot-legend").hidden = history.length < 2;  // a key only for lines that are drawn
    if (history.length < 2) return;
    const keys = [["odoL", "#2456c7"], ["odoR", "#1b7f3b"], ["wwL", "#a86400"], ["wwR", "#8a3ab9"]];
    let low = Infinity;
    let high = -Infinity;
    for (const point of history) {
      for (const [key] of keys) {
        low = Math.min(low, point[key]);
        high = Math.max(high, point[key]);
      }
    }
    if (high - low < 10) {
      high += 5;
      low -= 5;
    }
    const end = history[history.length - 1].t;
    const x = (t) => width - ((end - t) / (PLOT_SECONDS * 1000)) * width;
    const y = (v) => height - 4 * ratio - ((v - low) / (high - low)) * (height - 8 * ratio);
    g.lineWidth = 2 * ratio;
    for (const [key, colour] of keys) {
      g.strokeStyle = colour;
      g.beginPath();
      history.forEach((point, i) => (i ? g.lineTo(x(point.t), y(point[key])) : g.moveTo(x(point.t), y(point[key]))));
      g.stroke();
    }
    g.fillStyle = "#5d6677";
    g.font = 11 * ratio + "px system-ui, sans-serif";
    g.fillText(String(high), 4 * ratio, 12 * ratio);
    g.fillText(String(low), 4 * ratio, height - 6 * ratio);
  }

  // ---- the robot seen from above ----------------------------------------------

  const scheduleView = onNextFrame(drawView);

  /**
   * The robot from above, as its geometry says it is (its footprint, its range
   * sensors' rays), at its pose in the odometry's frame, with its path, what
   * its range sensors saw lately, a grid of metres, and the walls of a
   * simulated robot's room; the legend names only what is drawn.
   */
  function drawView() {
    const { g, width, height, ratio } = clearedCanvas("view");
    const s = lastModel;
    if (!s) return;
    const pose = s.pose || { x_mm: 0, y_mm: 0, th_deg: 0 };
    const footprint = (geometry && geometry.footprint) || {};
    const long = typeof footprint.length_mm === "number" && typeof footprint.width_mm === "number";
    const radius = footprint.radius_mm || (long ? Math.max(footprint.length_mm, footprint.width_mm) / 2 : 150);
    const extent = trace.length ? Math.max(...trace.map((p) => Math.hypot(p.x - trace[0].x, p.y - trace[0].y))) : 0;
    const shown = {
      walls: room !== null,
      trace: extent > 20,
      ranges: s.ranges.some((r) => typeof r.mm === "number" && typeof r.deg === "number"),
      unknown: !s.pose,
    };
    for (const key of document.querySelectorAll("#robot-panel [data-key]")) key.hidden = !shown[key.dataset.key];
    // The view holds the room (when known), the path and the echoes, at least 2 m across, x to the right, y up.
    const points = [{ x: pose.x_mm, y: pose.y_mm }, ...trace, ...echoes.values()];
    if (room) points.push({ x: room[0], y: room[1] }, { x: room[2], y: room[3] });
    const margin = room ? 200 : 400;
    const minX = Math.min(...points.map((p) => p.x)) - margin;
    const maxX = Math.max(...points.map((p) => p.x)) + margin;
    const minY = Math.min(...points.map((p) => p.y)) - margin;
    const maxY = Math.max(...points.map((p) => p.y)) + margin;
    const span = Math.max(2000, maxX - minX, (maxY - minY) * (width / height));
    const centreX = (minX + maxX) / 2;
    const centreY = (minY + maxY) / 2;
    const scale = width / span;
    const px = (x) => width / 2 + (x - centreX) * scale;
    const py = (y) => height / 2 - (y - centreY) * scale;
    // A metre's squares, with the start's lines darker.
    const left = centreX - span / 2;
    const top = centreY + (height / scale) / 2;
    g.lineWidth = ratio;
    for (let x = Math.ceil(left / 1000) * 1000; x <= left + span; x += 1000) {
      g.strokeStyle = x === 0 ? "#b9c0cc" : "#e3e6ec";
      g.beginPath();
      g.moveTo(px(x), 0);
      g.lineTo(px(x), height);
      g.stroke();
    }
    for (let y = Math.floor(top / 1000) * 1000; y >= top - height / scale; y -= 1000) {
      g.strokeStyle = y === 0 ? "#b9c0cc" : "#e3e6ec";
      g.beginPath();
      g.moveTo(0, py(y));
      g.lineTo(width, py(y));
      g.stroke();
    }
    if (room) {
      g.lineWidth = 4 * ratio;
      g.strokeStyle = "#5d6677";
      g.strokeRect(px(room[0]), py(room[3]), (room[2] - room[0]) * scale, (room[3] - room[1]) * scale);
      g.fillStyle = "#8a93a3";
      for (const box of boxes) g.fillRect(px(box[0]), py(box[3]), (box[2] - box[0]) * scale, (box[3] - box[1]) * scale);
    }
    g.lineWidth = 2 * ratio;
    g.strokeStyle = "#2456c7";
    g.beginPath();
    trace.forEach((p, i) => (i ? g.lineTo(px(p.x), py(p.y)) : g.moveTo(px(p.x), py(p.y))));
    g.stroke();
    g.fillStyle = "#b3261e";
    for (const echo of echoes.values()) g.fillRect(px(echo.x) - 2 * ratio, py(echo.y) - 2 * ratio, 4 * ratio, 4 * ratio);
    // The robot: its footprint turned by its heading, then each range sensor's ray.
    const heading = (pose.th_deg * Math.PI) / 180;
    const c = Math.cos(heading);
    const sn = Math.sin(heading);
    const at = (x, y) => [px(pose.x_mm + x * c - y * sn), py(pose.y_mm + x * sn + y * c)];
    g.fillStyle = "#1d2330";
    g.beginPath();
    if (long && !footprint.radius_mm) {
      const [hl, hw] = [footprint.length_mm / 2, footprint.width_mm / 2];
      [[hl, hw], [-hl, hw], [-hl, -hw], [hl, -hw]].forEach(([x, y], i) => (i ? g.lineTo(...at(x, y)) : g.moveTo(...at(x, y))));
      g.closePath();
    } else {
      g.arc(px(pose.x_mm), py(pose.y_mm), Math.max(4 * ratio, radius * scale), 0, 2 * Math.PI);
    }
    g.fill();
    g.lineWidth = 1.5 * ratio;
    for (const r of s.ranges) {
      if (typeof r.deg !== "number") continue;
      const sees = typeof r.mm === "number";
      const length = sees ? r.mm : r.max_mm || 0;
      if (!length) continue;
      const [x0, y0] = [r.x_mm || 0, r.y_mm || 0];
      const axis = (r.deg * Math.PI) / 180;
      g.strokeStyle = sees ? "rgba(179, 38, 30, 0.8)" : "rgba(93, 102, 119, 0.25)";
      g.beginPath();
      g.moveTo(...at(x0, y0));
      g.lineTo(...at(x0 + length * Math.cos(axis), y0 + length * Math.sin(axis)));
      g.stroke();
    }
    g.strokeStyle = "#ffffff";
    g.lineWidth = 2 * ratio;
    g.beginPath();
    g.moveTo(...at(0, 0));
    g.lineTo(...at(radius, 0));
    g.stroke();
    g.fillStyle = "#5d6677";
    g.font = 11 * ratio + "px system-ui, sans-serif";
    g.fillText((span / 1000).toFixed(1) + " m across", 4 * ratio, height - 6 * ratio);
  }

  // ---- commands -------------------------------------------------------------

  /** Sends a command; returns its id, or null when it could not be sent. */
  function send(command) {
    if (!socket || socket.readyState !== WebSocket.OPEN) {
      log("Not connected to the bridge: \"" + command.cmd + "\" was not sent.", "error");
      return null;
    }
    const id = nextId++;
    socket.send(JSON.stringify({ ...command, id }));
    return id;
  }

  function speed() {
    return Number($("speed").value);
  }

  /** Drives `direction` for as long as its key or button is held (release() ends it). */
  function hold(direction) {
    if (linkState !== "up" || replaying) {
      if (held === null) log(replaying ? "A replay of a recording cannot be driven." : "Not sent: the robot is not connected.", "warning");
      return;
    }
    if (role === "viewer") {
      // Stopping is anyone's; driving takes the PIN. Say so in words, and ask for it.
      log(inWords({ code: "denied" }), "warning");
      if (access.pin) openSignIn("pin");
      return;
    }
    held = direction;
    clearInterval(holdTimer);
    holdTimer = setInterval(sendHeld, HOLD_REPEAT_MS);
    heldTick = Date.now();
    sendHeld();
  }

  /** The held direction's command, again, at the slider's speed now. */
  function sendHeld() {
    if (held === null) return;
    // A page that was itself held up (a busy computer) has not read what
    // came meanwhile: its silence is not the bridge's.
    const now = Date.now();
    const pageStalled = now - heldTick > 3 * HOLD_REPEAT_MS;
    heldTick = now;
    if (!pageStalled && now - lastMessageAt > HOLD_QUIET_MS) {
      release("Nothing heard from the bridge: driving stopped (the robot stops by itself).");
      return;
    }
    const id = send({ ...family.motion(held, speed()), deadman_ms: DEADMAN_MS });
    if (id === null) {
      stopDriving();
      return;
    }
    motion = held;
    motionId = id;
    for (const button of document.querySelectorAll("[data-drive]")) {
      button.classList.toggle("active", button.dataset.drive === motion);
    }
  }

  /** The held key or button was let go, or the page can no longer hold it (`why`, said in the log). */
  function release(why) {
    if (held === null) return;
    stopDriving();
    send({ cmd: "stop" });
    if (why) log(why, "warning");
  }

  /** Stops the robot now, whatever is held (the Stop button, space, Escape). */
  function stopNow() {
    stopDriving();
    send({ cmd: "stop" });
  }

  /** A motion in speeds of percent (move, rotate), as a Flockbot takes them. */
  function percentMotion(direction, s) {
    const moves = { forward: ["move", s], back: ["move", -s], left: ["rotate", s], right: ["rotate", -s] };
    const [cmd, value] = moves[direction];
    return { cmd, speed: value };
  }

  /** A motion as drive takes it: the slider's cm/s in mm/s, and as many degrees a second for turning. */
  function driveMotion(direction, s) {
    const speeds = { forward: [s * 10, 0], back: [-s * 10, 0], left: [0, s], right: [0, -s] };
    const [v, w] = speeds[direction];
    return { cmd: "drive", v_mm_s: v, w_deg_s: w };
  }

  /** The page drives no more, without a word to the bridge (it stopped the robot, or refused the command). */
  /** Nothing is held or driving any more: the repeat ends, the buttons are let go. */
  function stopDriving() {
    held = null;
    clearInterval(holdTimer);
    holdTimer = null;
    motion = null;
    motionId = null;
    for (const button of document.querySelectorAll("[data-drive]")) button.classList.remove("active");
  }

  /** Whether the page is connected to the bridge: without it, nothing but the emergency stop is offered. */
  function setControlsEnabled(enabled) {
    connected = enabled;
    updateRobotControls();
  }

  function log(text, kind) {
    const item = document.createElement("li");
    item.textContent = new Date().toLocaleTimeString() + "  " + text;
    if (kind) item.className = kind;
    const list = $("messages");
    list.prepend(item);
    while (list.children.length > MAX_LOG) list.lastElementChild.remove();
  }

  // The drive buttons drive while pressed (mouse, pen or finger), and stop
  // when let go, even off the button; Stop stops at once.
  for (const button of document.querySelectorAll("[data-drive]")) {
    const direction = button.dataset.drive;
    if (direction === "stop") {
      button.addEventListener("click", stopNow);
      continue;
    }
    button.addEventListener("pointerdown", (event) => {
      if (event.button !== 0 || button.disabled) return;
      event.preventDefault();
      button.setPointerCapture(event.pointerId);
      hold(direction);
    });
    for (const end of ["pointerup", "pointercancel", "lostpointercapture"]) {
      button.addEventListener(end, () => { if (held === direction) release(); });
    }
    button.addEventListener("contextmenu", (event) => event.preventDefault());  // a long press on a phone
  }
  // A page that is not looked at does not drive.
  window.addEventListener("blur", () => release("The page lost the focus: driving stopped."));
  document.addEventListener("visibilitychange", () => {
    if (document.hidden) release("The page was hidden: driving stopped.");
  });
  window.addEventListener("pagehide", () => release());
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
  $("take").addEventListener("click", () => send({ cmd: driving ? "release" : "take" }));
  $("record").addEventListener("click", () => send({ cmd: recording ? "record_stop" : "record_start" }));
  $("secret-form").addEventListener("submit", (event) => {
    event.preventDefault();
    secret = { kind: secretKind, value: $("secret").value };
    $("secret").value = "";
    $("secret-form").hidden = true;
    signIn();
  });
  $("speed").addEventListener("input", () => {
    $("speed-value").textContent = $("speed").value;
    if (held) sendHeld();  // a moving robot takes the new speed at once
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

  const keys = { ArrowUp: "forward", ArrowDown: "back", ArrowLeft: "left", ArrowRight: "right", " ": "stop", Escape: "stop" };
  document.addEventListener("keydown", (event) => {
    const target = event.target;
    if (target instanceof HTMLInputElement && target.type !== "range") return;
    if (target instanceof HTMLSelectElement) return;
    const direction = keys[event.key];
    if (!direction) return;
    event.preventDefault();
    if (event.repeat) return;  // held: the page repeats the command itself
    if (direction === "stop") {
      stopNow();
    } else {
      hold(direction);
    }
  });
  document.addEventListener("keyup", (event) => {
    if (keys[event.key] !== undefined && keys[event.key] === held) release();
  });

  window.flockbridge = { stats, send };
  setControlsEnabled(false);
  connect();
})();

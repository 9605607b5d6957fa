// The class hub's page (/fleet): every robot that announced itself on the
// fleet's MQTT broker, live, through the hub's own WebSocket (/ws), which
// relays what the broker tells it ({"cmd":"fleet"} asks for it). Robots
// that went offline stay, greyed, with how long ago. The teacher stops the
// whole class, or one robot, with {"cmd":"fleet_emergency"}, and clears the
// class's stop with {"cmd":"fleet_clear"}; a robot that is offline gets
// either when it is back.
"use strict";

(() => {
  const RECONNECT_MIN_MS = 500;
  const RECONNECT_MAX_MS = 10000;
  const $ = (id) => document.getElementById(id);

  let socket = null;
  let attempts = 0;
  let nextId = 1;
  let role = null;
  let secret = null;  // the teacher's secret, in memory only, given again after a reconnection
  let robots = [];
  // The robots whose details the teacher opened: still open after the page's next redraw.
  const opened = new Set();
  let clockOffset = 0;  // the hub's clock minus this page's, in seconds

  function send(message) {
    if (!socket || socket.readyState !== WebSocket.OPEN) return null;
    const id = nextId++;
    socket.send(JSON.stringify({ ...message, id }));
    return id;
  }

  function setStatus(element, text, kind) {
    element.textContent = text;
    element.className = "status status-" + kind;
  }

  function notice(text, kind) {
    $("notice").textContent = text;
    $("notice").className = kind || "";
  }

  function connect() {
    const scheme = location.protocol === "https:" ? "wss://" : "ws://";
    setStatus($("connection"), "Connecting to the hub…", "connecting");
    socket = new WebSocket(scheme + location.host + "/ws");
    socket.onopen = () => {
      attempts = 0;
      setStatus($("connection"), "Hub connected", "ok");
      send({ cmd: "fleet" });
      if (secret) send({ cmd: "auth", teacher: secret });
    };
    socket.onmessage = (event) => {
      let message;
      try {
        message = JSON.parse(event.data);
      } catch (error) {
        return;
      }
      handle(message);
    };
    socket.onclose = () => {
      socket = null;
      $("stop-all").disabled = true;
      const delay = Math.min(RECONNECT_MAX_MS, RECONNECT_MIN_MS * 2 ** attempts);
      attempts += 1;
      setStatus($("connection"), "Hub unreachable, retrying in " + Math.ceil(delay / 1000) + " s", "bad");
      setTimeout(connect, delay);
    };
  }

  function handle(message) {
    switch (message.type) {
      case "hello":
        role = message.role;
        showRole();
        break;
      case "fleet":
        clockOffset = message.now - Date.now() / 1000;
        robots = message.robots || [];
        render();
        break;

      case "error":
        notice(String(message.error).replace(/:?\s*\{"cmd".*?\}/g, ""), "error");
        if (message.code === "denied" && secret && String(message.error).includes("wrong")) secret = null;
        break;
      case "ok":
        if (message.role) {  // the answer to auth
          role = message.role;
          showRole();
          notice(role === "teacher" ? "Signed in as the teacher." : "Signed in.", "ok");
        } else if (message.note) {  // a stop or clear that robots offline did not hear
          notice(message.note, "warning");
        }
        break;
      default:
        break;  // the bridge's other messages are not this page's
    }
  }

  function showRole() {
    $("role").textContent = role === "teacher" ? "the teacher" : "watching";
    $("teacher-sign-in").hidden = role === "teacher";
    $("stop-all").disabled = role !== "teacher";
    $("clear-all").hidden = role !== "teacher";
    render();
  }

  function ago(seconds) {
    if (seconds == null) return "";
    const s = Math.max(0, Math.round(Date.now() / 1000 + clockOffset - seconds));
    if (s < 60) return s + " s ago";
    if (s < 3600) return Math.round(s / 60) + " min ago";
    return Math.round(s / 3600) + " h ago";
  }

  function describeEvent(event) {
    if (!event) return "";
    switch (event.type) {
      case "link": return "link " + event.state + (event.reason ? ": " + event.reason : "");
      case "safety_stop": return "safety stop: " + event.reason;
      case "emergency":
        return event.latched ? "emergency stop by " + event.by + (event.reason ? " (" + event.reason + ")" : "")
                             : "emergency stop cleared by " + event.by;
      case "lease": return event.holder ? event.holder.peer + " drives" : "nobody drives";
      default: return event.type || "";
    }
  }

  function cell(row, text, testid, label) {
    const td = document.createElement("td");
    td.textContent = text;
    if (testid) td.dataset.testid = testid;
    td.dataset.label = label;  // a phone shows each row as a card, its cells labelled
    row.appendChild(td);
    return td;
  }

  function button(text, testid, message) {
    const b = document.createElement("button");
    b.type = "button";
    b.textContent = text;
    b.dataset.testid = testid;
    b.addEventListener("click", () => send(message));
    return b;
  }

  /**
   * A robot's state at a glance: "online", "STOPPED" (its emergency stop
   * latched), "no robot link", "offline 3 min ago"; and in full, for the
   * details: who stopped it and who may clear it.
   */
  function stateOf(robot) {
    const status = robot.status || {};
    if (!robot.online) return { short: "offline " + ago(robot.since), kind: "offline", full: "" };
    const latch = status.latch;
    if (status.emergency) {
      if (!latch) return { short: "STOPPED", kind: "stopped", full: "online, stop latched" };
      const clear = latch.source === "fleet"
        ? (latch.local_too ? "Clear here, then on its own dashboard" : "Clear here or its teacher clears it")
        : "cleared on its own dashboard (" + latch.clear_by + ")";
      return {
        short: "STOPPED", kind: "stopped",
        full: "online, stopped by " + latch.by + (latch.reason ? " (" + latch.reason + ")" : "") + "; " + clear,
      };
    }
    if (status.link && status.link.state !== "up") {
      return { short: "robot " + status.link.state, kind: "warn", full: "online; its robot's link is " + status.link.state };
    }
    return { short: "online", kind: "ok", full: "" };
  }

  /** Whether it moves, from its telemetry: "moving", "still", or "" when not known. */
  function motionOf(robot) {
    const t = robot.telemetry || {};
    if (!robot.online || typeof t.v_mm_s !== "number") return "";
    return Math.abs(t.v_mm_s) > 5 || Math.abs(t.w_deg_s || 0) > 2 ? "moving" : "still";
  }

  function render() {
    const body = $("robots");
    body.replaceChildren();
    let online = 0;
    const labels = [...document.querySelectorAll("table.fleet thead th")].map((th) => th.textContent);
    for (const robot of robots) {
      const status = robot.status || {};
      const telemetry = robot.telemetry || {};
      const row = document.createElement("tr");
      row.dataset.robot = robot.robot;
      row.dataset.testid = "robot-" + robot.robot;
      row.className = robot.online ? "online" : "offline";
      if (robot.online) online += 1;
      const name = cell(row, "", null, labels[0]);
      if (robot.online && status.dashboard) {
        const link = document.createElement("a");
        link.href = status.dashboard;
        link.textContent = robot.robot;
        link.target = "_blank";
        link.rel = "noopener";
        name.appendChild(link);
      } else {
        name.textContent = robot.robot;
      }
      cell(row, status.family || "", null, labels[1]);
      const state = stateOf(robot);
      const stateCell = cell(row, "", null, labels[2]);
      const chip = document.createElement("span");
      chip.className = "chip chip-" + state.kind;
      chip.dataset.testid = "state";
      chip.textContent = state.short;
      stateCell.appendChild(chip);
      if (robot.pending) {
        const waiting = document.createElement("div");
        waiting.className = "muted";
        waiting.dataset.testid = "pending-" + robot.robot;
        waiting.textContent = (robot.pending.command === "emergency" ? "A stop" : "A clear") +
          " waits here for it, sent " + ago(robot.pending.since) + ": it goes out when the robot is back.";
        stateCell.appendChild(waiting);
      }
      // A battery only for a robot that is there: an offline robot's last value is not its battery now.
      cell(row, robot.online && telemetry.battery_v != null ? telemetry.battery_v.toFixed(1) + " V" : "", "battery",
           labels[3]);
      cell(row, motionOf(robot), "moving", labels[4]);
      cell(row, robot.online ? (status.lease ? status.lease.peer : "nobody") : "", "driver", labels[5]);
      // The rest on demand: the state in full and the last event.
      const more = cell(row, "", null, labels[6]);
      const lines = [state.full, robot.event ? describeEvent(robot.event) + " (" + ago(robot.event.ts) + ")" : ""];
      if (lines.some((line) => line)) {
        const details = document.createElement("details");
        details.dataset.testid = "details";
        details.open = opened.has(robot.robot);
        details.addEventListener("toggle", () => {
          if (details.open) opened.add(robot.robot); else opened.delete(robot.robot);
        });
        const summary = document.createElement("summary");
        summary.textContent = "why, and the last event";
        details.appendChild(summary);
        [[state.full, "state-full"], [lines[1], "event"]].forEach(([text, testid]) => {
          if (!text) return;
          const line = document.createElement("p");
          line.textContent = text;
          line.dataset.testid = testid;
          details.appendChild(line);
        });
        more.appendChild(details);
      }
      const actions = cell(row, "", null, labels[7]);
      actions.className = "actions";
      if (role === "teacher") {
        actions.appendChild(button("Stop", "stop-" + robot.robot, { cmd: "fleet_emergency", robot: robot.robot }));
        const latch = status.latch;
        if ((latch && latch.source === "fleet") || (robot.pending && robot.pending.command === "emergency")) {
          actions.appendChild(button("Clear", "clear-" + robot.robot, { cmd: "fleet_clear", robot: robot.robot }));
        }
      }
      body.appendChild(row);
    }
    hideEmptyColumns();
    $("empty").hidden = robots.length > 0;
    setStatus($("count"), online + " of " + robots.length + " online", robots.length === 0 ? "unknown" : "ok");
  }

  /** A column with nothing in any row (no robot reports a battery, nobody may act) is not shown. */
  function hideEmptyColumns() {
    const heads = [...document.querySelectorAll("table.fleet thead th")];
    const rows = [...$("robots").rows];
    heads.forEach((th, i) => {
      const empty = rows.every((row) => row.cells[i].textContent.trim() === "" && row.cells[i].children.length === 0);
      th.hidden = empty;
      for (const row of rows) row.cells[i].hidden = empty;
    });
  }

  $("teacher-sign-in").addEventListener("click", () => {
    $("secret-form").hidden = false;
    $("secret").focus();
  });
  $("secret-form").addEventListener("submit", (event) => {
    event.preventDefault();
    secret = $("secret").value;
    $("secret").value = "";
    $("secret-form").hidden = true;
    send({ cmd: "auth", teacher: secret });
  });
  $("stop-all").addEventListener("click", () => {
    if (send({ cmd: "fleet_emergency" }) !== null) notice("Stop sent to every robot.", "ok");
  });
  $("clear-all").addEventListener("click", () => {
    if (send({ cmd: "fleet_clear" }) !== null) notice("The class's stop cleared on every robot.", "ok");
  });
  // "3 min ago" moves on by itself.
  setInterval(render, 5000);
  connect();
})();

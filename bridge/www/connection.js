// The dashboard's one WebSocket to the bridge's /ws feed, which speaks the
// JSON messages of port 2006 (one object per message): it connects, comes
// back after a lost connection (half a second, doubling up to five), notices
// a connection that stays open while nothing arrives, and sends commands
// with their ids.
import { $, log, setStatus } from "./page.js";
import { stats } from "./state.js";

const RECONNECT_MIN_MS = 500;
const RECONNECT_MAX_MS = 5000;
const SILENCE_MS = 3000;  // no message for this long: say so

let socket = null;
let attempts = 0;
let reconnectTimer = null;
let lastMessageAt = 0;
let nextId = 1;
let events = null;

/**
 * Connects, and keeps connecting. `handlers`: opened(), message(object),
 * closed() (the connection is gone), unreachable() (a retry is waited for).
 */
export function connect(handlers) {
  events = handlers;
  open();
}

/** Whether the connection is open. */
export function isOpen() {
  return socket !== null && socket.readyState === WebSocket.OPEN;
}

/** When the bridge last sent anything (Date.now()'s clock). */
export function lastHeard() {
  return lastMessageAt;
}

/** Sends a command; returns its id, or null when it could not be sent. */
export function send(command) {
  if (!isOpen()) {
    log("Not connected to the bridge: \"" + command.cmd + "\" was not sent.", "error");
    return null;
  }
  const id = nextId++;
  socket.send(JSON.stringify({ ...command, id }));
  return id;
}

/** Sends a request without an id, whose answer never reads as a command's; nothing when not connected. */
export function sendQuietly(request) {
  if (isOpen()) socket.send(JSON.stringify(request));
}

function open() {
  clearTimeout(reconnectTimer);
  const scheme = location.protocol === "https:" ? "wss://" : "ws://";
  setStatus($("connection"), "Connecting to the bridge…", "connecting");
  try {
    socket = new WebSocket(scheme + location.host + "/ws");
  } catch (error) {
    retry("cannot open a connection: " + error.message);
    return;
  }
  socket.onopen = () => {
    attempts = 0;
    stats.connects += 1;
    lastMessageAt = Date.now();
    setStatus($("connection"), "Bridge connected", "ok");
    events.opened();
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
    events.message(message);
  };
  socket.onclose = (event) => {
    socket = null;
    events.closed();
    const why = event.reason ? ": " + event.reason : event.code === 1006 ? " (connection lost)" : "";
    retry("the bridge closed the connection" + why);
  };
  socket.onerror = () => {
    // onclose follows with what can be known.
  };
}

function retry(reason) {
  const delay = Math.min(RECONNECT_MAX_MS, RECONNECT_MIN_MS * 2 ** attempts);
  attempts += 1;
  setStatus($("connection"), "Bridge unreachable, retrying in " + Math.ceil(delay / 1000) + " s", "bad");
  events.unreachable();
  if (attempts === 1) log("Lost the bridge: " + reason + ". Retrying until it is back.", "warning");
  reconnectTimer = setTimeout(open, delay);
}

// A connection can stay open while nothing arrives (a network that went
// away without a word): say so, and start again.
setInterval(() => {
  if (!isOpen()) return;
  const silent = Date.now() - lastMessageAt;
  if (silent > 2 * SILENCE_MS) {
    log("Nothing from the bridge for " + Math.round(silent / 1000) + " s: reconnecting.", "warning");
    socket.close();
  } else if (silent > SILENCE_MS) {
    setStatus($("connection"), "No data from the bridge for " + Math.round(silent / 1000) + " s", "warn");
  }
}, 500);

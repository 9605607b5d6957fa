// What every part of the dashboard uses to show things: the page's elements
// by id, the status badges, the message log, and drawing at the next frame.
// No state of the robot's or the bridge's.
const MAX_LOG = 50;

/** The element with this id. */
export const $ = (id) => document.getElementById(id);

/** A status badge: its words and its colour ("ok", "warn", "bad", "connecting", "unknown"). */
export function setStatus(element, text, kind) {
  element.textContent = text;
  element.className = "status status-" + kind;
}

/** A line in the page's message log, newest first ("", "warning" or "error"). */
export function log(text, kind) {
  const item = document.createElement("li");
  item.textContent = new Date().toLocaleTimeString() + "  " + text;
  if (kind) item.className = kind;
  const list = $("messages");
  list.prepend(item);
  while (list.children.length > MAX_LOG) list.lastElementChild.remove();
}

export function capital(text) {
  return text.charAt(0).toUpperCase() + text.slice(1);
}

/** A value, or what to say when the bridge does not know it. */
export function known(value, show) {
  return typeof value === "number" ? show(value) : "not known";
}

/** Where a sensor looks, in words, from its angle (counter-clockwise from the front). */
export function direction(deg) {
  const a = ((deg % 360) + 540) % 360 - 180;  // -180..180
  const side = a > 0 ? "left" : "right";
  const m = Math.abs(a);
  if (m <= 15) return "front";
  if (m < 75) return "front " + side;
  if (m <= 105) return side;
  if (m < 165) return "rear " + side;
  return "rear";
}

/** A function that draws with `draw` at the next frame, however often it is called before then. */
export function onNextFrame(draw) {
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
export function clearedCanvas(id) {
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

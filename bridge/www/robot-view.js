// The robot model's view, the same for every family: pose, speeds, battery,
// bumpers and every range reading as numbers, and the robot seen from above
// (its footprint and range sensors as hello's geometry says, at its pose,
// with its path, what its range sensors saw lately, and a simulated robot's
// room). Every family's driver fills the same fields of a sensor message.
import { $, clearedCanvas, known, onNextFrame } from "./page.js";

const TRACE_SECONDS = 60;  // the robot's path shown
const ECHO_SECONDS = 5;  // what its range sensors saw, shown this long

const trace = [];  // the robot's path, from its pose: {t, x, y, th}
const echoes = new Map();  // where each range sensor last saw something, by name: {t, x, y}
let room = null;  // a simulated robot's room: [min x, min y, max x, max y] in mm, from hello
let boxes = [];  // the boxes in it, the same way
let geometry = null;  // what the robot is, from hello (the robot model's geometry)
let lastModel = null;  // the robot model's fields of the latest reading
let lastRanges = [];  // its range readings, each with its sensor's mounting

/** A new robot (hello): what it is and, when simulated, its room; nothing of the last one's path. */
export function showWorld(hello) {
  room = hello.simulated && Array.isArray(hello.simulated.room_mm) ? hello.simulated.room_mm : null;
  boxes = hello.simulated && Array.isArray(hello.simulated.boxes_mm) ? hello.simulated.boxes_mm : [];
  geometry = hello.geometry || null;
}

/** Forgets the path and the echoes; the panel is hidden until a reading with the model's fields comes. */
export function resetRobotView() {
  trace.length = 0;
  echoes.clear();
  lastModel = null;
  $("robot-panel").hidden = true;
}

/**
 * Each range sensor of hello's geometry (name, kind, deg, x_mm, y_mm,
 * max_mm) with its reading from a sensor message's ranges ({name: mm}):
 * a reading says only what changes, its sensor's mounting is in hello.
 */
function rangeReadings(ranges) {
  const mounted = geometry && Array.isArray(geometry.ranges) ? geometry.ranges : [];
  return mounted.map((r) => ({ ...r, mm: ranges && typeof ranges[r.name] === "number" ? ranges[r.name] : null }));
}

/** The robot model's panel: pose, speeds, battery, bumpers, and the view from above. */
export function onRobotModel(s, now) {
  lastModel = s;
  lastRanges = rangeReadings(s.ranges);
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
  showRanges(lastRanges);
  if (pose) addToTrace(pose, now);
  // Where each sensor's ray ends, in the room: its mounting turned by the pose.
  const at = pose || { x_mm: 0, y_mm: 0, th_deg: 0 };
  for (const r of lastRanges) {
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

/** What the robot has, from hello's geometry: no Bumpers row on a robot without any, no Ranges row on one without range sensors. */
export function showGeometry() {
  const bumpers = geometry && Array.isArray(geometry.bumpers) ? geometry.bumpers : null;
  for (const e of document.querySelectorAll('[data-has="bumpers"]')) e.hidden = bumpers !== null && bumpers.length === 0;
  const ranges = geometry && Array.isArray(geometry.ranges) ? geometry.ranges : [];
  for (const e of document.querySelectorAll('[data-has="ranges"]')) e.hidden = ranges.length === 0;
}

/** Adds a pose to the path and forgets what is older than the path shows. */
function addToTrace(pose, now) {
  trace.push({ t: now, x: pose.x_mm, y: pose.y_mm, th: pose.th_deg });
  while (trace.length && now - trace[0].t > TRACE_SECONDS * 1000) trace.shift();
}

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
    ranges: lastRanges.some((r) => typeof r.mm === "number" && typeof r.deg === "number"),
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
  for (const r of lastRanges) {
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

// The Flockbot's panel: its sensor packet as it came (battery, the five IR
// sensors, the bumpers, odometers and wheel watchers, with a plot of the
// last 20 s), where its IR sensors look, and driving in percent of full
// speed (move, rotate), as the Flockbot takes it.
import { $, clearedCanvas, direction, onNextFrame } from "./page.js";

const PLOT_SECONDS = 20;

const history = [];  // {t, odoL, odoR, wwL, wwR}
const schedulePlot = onNextFrame(drawPlot);

function onSensor(s, now, rate) {
  $("seq").textContent = String(s.seq);
  $("rate").textContent = String(rate);
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

/** A motion in speeds of percent (move, rotate), as a Flockbot takes them. */
function percentMotion(direction, s) {
  const moves = { forward: ["move", s], back: ["move", -s], left: ["rotate", s], right: ["rotate", -s] };
  const [cmd, value] = moves[direction];
  return { cmd, speed: value };
}

/** Where its IR sensors look, from hello's geometry (the configured [flockbot.geometry]). */
function showHello(hello) {
  const ranges = hello.geometry && Array.isArray(hello.geometry.ranges) ? hello.geometry.ranges : [];
  const ir = ranges.filter((r) => r.kind === "ir" && typeof r.deg === "number");
  $("ir-places").textContent = ir.length === 5
    ? "In the order of the sensor packet, where each looks: " +
      ir.map((r, i) => "IR " + i + " " + direction(r.deg) + " (" + Math.round(r.deg) + "°)").join(", ") +
      ". Nearer reads higher."
    : "In the order of the sensor packet (ir0 to ir4); nearer reads higher. Where each sits on the robot is not " +
      "configured ([flockbot.geometry]).";
}

/** Another bridge (or the same one restarted): its packets start again. */
function forget() {
  history.length = 0;
  schedulePlot();
}

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

export const flockbot = {
  panel: "sensors-panel", stale: "stale", rate: "rate",
  title: () => "Flockbot",
  onSensor,
  nativeClient: (c) => (c.extensions === false ? "binary (original)" : "binary"),
  motion: percentMotion,
  showHello,
  forget,
};

// The Pioneer's and AmigoBot's panel: its motors, its wheels' stall, and its
// sonar, one bar per disc named by where it looks (a disc's last echo
// greyed after a few seconds); driven as drive takes it. Its own port lets
// one ARIA program drive at a time.
import { driveMotion } from "./family-any.js";
import { $, direction } from "./page.js";
import { state } from "./state.js";

const ECHO_SECONDS = 5;  // a disc's echo, shown as new this long

const sonar = new Map();  // the sonar's latest reading, by disc: {deg, mm, t}
let discs = [];  // the model's discs from hello's geometry: {n, name, deg}

/** Where each disc looks, from hello's geometry (its ranges sonar0, sonar1, ...). */
function showHello(hello) {
  const ranges = hello.geometry && Array.isArray(hello.geometry.ranges) ? hello.geometry.ranges : [];
  discs = ranges
    .map((r) => ({ n: Number(/^sonar(\d+)$/.exec(r.name)?.[1]), name: r.name, deg: r.deg }))
    .filter((d) => Number.isInteger(d.n) && typeof d.deg === "number");
}

function onSensor(s, now, rate) {
  $("pioneer-seq").textContent = String(s.seq);
  $("pioneer-rate").textContent = String(rate);
  $("pioneer-motors").textContent = s.motors ? "on" : "off";
  const stalled = ["left", "right"].filter((side) => s.stall && s.stall[side]);
  $("stall").textContent = stalled.length ? stalled.join(" and ") + " wheel stalled" : "turning freely";
  $("stall").classList.toggle("pressed", stalled.length > 0);
  // The discs this packet read (sonar_updated), with their readings from the model's ranges.
  const updated = new Set(s.sonar_updated || []);
  for (const disc of discs) {
    const mm = s.ranges ? s.ranges[disc.name] : null;
    if (updated.has(disc.n) && typeof mm === "number") sonar.set(disc.n, { deg: disc.deg, mm, t: now });
  }
  showSonar(now);
}

/** A Pioneer's sonar: one bar per disc, fuller the nearer its echo, named by where it looks. */
function showSonar(now) {
  const box = $("sonar");
  const seen = [...sonar.entries()].sort((a, b) => a[0] - b[0]);
  $("sonar-none").hidden = seen.length > 0 || state.linkState !== "up";
  if (box.children.length !== seen.length) {
    box.replaceChildren();
    for (const [n, disc] of seen) {
      const cell = document.createElement("div");
      cell.className = "sonar-disc";
      cell.innerHTML = '<div class="ir-bar"><div class="fill"></div><span></span></div><span class="ir-name"></span>';
      cell.querySelector(".ir-name").textContent = direction(disc.deg) + " " + Math.round(disc.deg) + "°";
      cell.dataset.disc = String(n);
      box.append(cell);
    }
  }
  seen.forEach(([, disc], i) => {
    const cell = box.children[i];
    const old = now - disc.t > ECHO_SECONDS * 1000;
    cell.classList.toggle("old", old);
    cell.querySelector(".fill").style.height = (100 * (1 - Math.min(disc.mm, 5000) / 5000)).toFixed(1) + "%";
    cell.querySelector(".ir-bar span").textContent = (disc.mm / 1000).toFixed(2) + " m";
  });
}

export const pioneer = {
  panel: "pioneer-panel", stale: "pioneer-stale", rate: "pioneer-rate",
  title: (name, model) => (model.startsWith("amigo") ? "AmigoBot" : "Pioneer") + (model ? " " + model : ""),
  onSensor,
  showHello,
  nativeClient: () => "ARIA (8101)",
  motion: driveMotion,
  control: true,
  showLink: (linkState) => {
    $("sonar-none").hidden = linkState !== "up" || sonar.size > 0;
  },
  reset: () => {
    sonar.clear();
    $("sonar").replaceChildren();
  },
};

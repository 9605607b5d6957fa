// A robot the page has no panel for: each field of its readings on a line,
// as the bridge sent it, and driven as drive takes it. Its row is what every
// family's row (families.js) may have.
import { $ } from "./page.js";

/** A motion as drive takes it: the slider's cm/s in mm/s, and as many degrees a second for turning. */
export function driveMotion(direction, s) {
  const speeds = { forward: [s * 10, 0], back: [-s * 10, 0], left: [0, s], right: [0, -s] };
  const [v, w] = speeds[direction];
  return { cmd: "drive", v_mm_s: v, w_deg_s: w };
}

export const anyFamily = {
  // Where its readings, their staleness note and their rate go.
  panel: "readings-panel", stale: "readings-stale", rate: "readings-rate",
  /** Its name and model, for the page's title. */
  title: (name, model) => (name || "Robot") + (model && model !== name ? " " + model : ""),
  /** Shows a sensor message; `rate`: readings in the last second. */
  onSensor(s, now, rate) {
    $("readings-rate").textContent = String(rate);
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
  },
  /** What the programs on its own port are called in the client list. */
  nativeClient: () => "native",
  /** The command for a held drive button at the slider's speed. */
  motion: driveMotion,
  // Optional: interval_ms (what the page subscribes to, for a robot that
  // sends more than a page wants to draw; the page then counts no gaps),
  // control (its own port lets one program drive at a time: stats'
  // "control"), showHello(hello) (what hello says of it), showLink(state),
  // reset() (another robot is shown), forget() (another bridge's run).
};

// The SMR's panel: its period's tick, the power module's inputs (the switch
// off is the alarm: SMRD powers the computer off), each wheel's speed and
// encoder, the eight line sensors and six IR sensors, and which modules did
// not answer; driven as drive takes it.
import { driveMotion } from "./family-any.js";
import { $ } from "./page.js";

function onSensor(s, now, rate) {
  $("smr-tick").textContent = String(s.tick);
  $("smr-rate").textContent = String(rate);
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

export const smr = {
  panel: "smr-panel", stale: "smr-stale", rate: "smr-rate",
  title: () => "SMR",
  onSensor,
  nativeClient: () => "SMR program (24901)",
  motion: driveMotion,
  interval_ms: 50,  // 100 periods a second, shown 20 times a second
};

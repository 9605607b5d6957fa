// Hold to drive: while a drive key or button is held its command goes
// again every HOLD_REPEAT_MS, each with a dead-man time after which the
// bridge stops the robot by itself; so a page that is hidden, frozen or cut
// off stops its robot within DEADMAN_MS even when it cannot say so. A page
// that has heard nothing from the bridge for HOLD_QUIET_MS stops driving,
// and one that is not looked at (hidden, its focus lost) does too.
import { inWords, openSignIn } from "./access.js";
import { lastHeard, send } from "./connection.js";
import { $, log } from "./page.js";
import { state } from "./state.js";

const HOLD_REPEAT_MS = 150;
const DEADMAN_MS = 500;
const HOLD_QUIET_MS = 700;

let motion = null;  // what the drive controls last asked for
let motionId = null;  // the id of that command, to notice when it is refused
let held = null;  // the direction whose key or button is held down
let holdTimer = null;
let heldTick = 0;  // when the held command last went

/** Whether `id` is the last motion command's: its refusal ends the driving. */
export function isMotion(id) {
  return id !== undefined && id === motionId;
}

function speed() {
  return Number($("speed").value);
}

/** Drives `direction` for as long as its key or button is held (release() ends it). */
function hold(direction) {
  if (state.linkState !== "up" || state.replaying) {
    if (held === null) log(state.replaying ? "A replay of a recording cannot be driven." : "Not sent: the robot is not connected.", "warning");
    return;
  }
  if (state.role === "viewer") {
    // Stopping is anyone's; driving takes the PIN. Say so in words, and ask for it.
    log(inWords({ code: "denied" }), "warning");
    if (state.access.pin) openSignIn("pin");
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
  if (!pageStalled && now - lastHeard() > HOLD_QUIET_MS) {
    release("Nothing heard from the bridge: driving stopped (the robot stops by itself).");
    return;
  }
  const id = send({ ...state.family.motion(held, speed()), deadman_ms: DEADMAN_MS });
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
export function release(why) {
  if (held === null) return;
  stopDriving();
  send({ cmd: "stop" });
  if (why) log(why, "warning");
}

/** Stops the robot now, whatever is held (the Stop button, space, Escape). */
export function stopNow() {
  stopDriving();
  send({ cmd: "stop" });
}

/** Nothing is held or driving any more: the repeat ends, the buttons are let go. */
export function stopDriving() {
  held = null;
  clearInterval(holdTimer);
  holdTimer = null;
  motion = null;
  motionId = null;
  for (const button of document.querySelectorAll("[data-drive]")) button.classList.remove("active");
}

/** Binds the drive buttons, the arrow keys and the speed slider. */
export function bindDriveControls() {
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
  $("speed").addEventListener("input", () => {
    $("speed-value").textContent = $("speed").value;
    if (held) sendHeld();  // a moving robot takes the new speed at once
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
}

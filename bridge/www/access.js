// Who this connection is and who may do what: its role and the sign-in
// it offers (the robot's PIN, the teacher's secret), who drives (the
// control lease), the latched emergency stop and who may clear it, the
// programs waiting to be approved, and the bridge's refusals in words for
// the person at the page.
import { send } from "./connection.js";
import { $, capital } from "./page.js";
import { state } from "./state.js";

/** This connection's role: the sign-in buttons it needs, and the buttons it may use. */
export function showRole(newRole) {
  state.role = newRole;
  $("role").textContent = state.role === "viewer" ? "watching (the PIN lets you drive)" : state.role;
  $("sign-in").hidden = !(state.role === "viewer" && state.access.pin);
  $("teacher-sign-in").hidden = state.role === "teacher" || !state.access.teacher;
  // A viewer may only watch and stop: no button that could only fail.
  $("take").hidden = state.role === "viewer";
  // Recording is the teacher's or a driver's to start and stop.
  $("record").hidden = state.role === "viewer";
  showClear();
  showPairing(state.waitingPrograms);
}

/** Who sent an emergency stop, or cleared it, in words. */
export function byWhom(message) {
  if (message.by.client === 0) return message.by.peer;
  return (message.by.client === state.me ? "you" : "client #" + message.by.client) + " (" + message.by.peer + ")";
}

/** An error from the bridge, in words for the person at this page (the bridge's words are for programs). */
export function inWords(error) {
  if (error.code === "denied" && state.role === "viewer" && error.id !== state.authId) {
    return state.access.pin ? "You are watching this robot. To drive it, press “Drive…” and give the robot's PIN."
                      : "You are watching this robot, and may only stop it.";
  }
  if (error.code === "link_down") {
    // Why, and what to do, is said once, at the top of the page.
    return "Not sent: the robot is not connected" + ($("link-help").hidden ? "." : " (see the top of the page).");
  }
  if (error.code === "latched") {
    return "Not sent: the emergency stop is latched." + (state.latch && state.latch.clear_by ? " " + capital(state.latch.clear_by) + " may clear it." : "");
  }
  // What the bridge tells programs to send ({"cmd":...}) is not for people.
  return String(error.error).replace(/:?\s*(with\s+)?\{"cmd".*?\}( or)?/g, "").replace(/[:;,]\s*$/, "") || "Refused.";
}

/** Who holds the robot's control lease. */
export function showLease(lease) {
  const holder = lease.holder;
  state.driving = holder !== null && holder.client === state.me;
  $("driver").textContent = holder === null ? "Nobody drives."
      : state.driving ? "You drive."
      : "Client #" + holder.client + " (" + holder.peer + ", " + holder.kind + ") drives, since " +
        new Date(holder.since * 1000).toLocaleTimeString() + ".";
  $("take").textContent = state.driving ? "Release" : "Take control";
}

/** The connections on the robot's own port waiting to be approved (native_port_mode paired). */
export function showPairing(waiting) {
  state.waitingPrograms = waiting;
  const list = $("pairing-list");
  list.replaceChildren();
  for (const w of waiting) {
    const item = document.createElement("li");
    item.textContent = "Client #" + w.client + " from " + w.peer + ", since " +
                       new Date(w.since * 1000).toLocaleTimeString();
    // Approving takes the PIN: a viewer is shown the list, not a button that would fail.
    if (state.role !== "viewer") {
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
export function showLatch(message) {
  state.latch = message.latched ? message : null;
  $("latch").hidden = !state.latch;
  if (state.latch) {
    const holds = state.latch.holds && state.latch.holds.length ? state.latch.holds : [state.latch];
    $("latch-by").textContent = holds.map((hold) =>
      "by " + byWhom(hold) + (hold.reason ? " (" + hold.reason + ")" : "") + " at " +
      new Date(hold.since * 1000).toLocaleTimeString()).join(", and ");
    $("latch-who").textContent = state.latch.clear_by ? capital(state.latch.clear_by) + " may clear it." : "";
  }
  showClear();
}

/** Clear is offered only to whom the latch's rules let clear it. */
export function showClear() {
  const mayClear = state.latch !== null && (state.latch.may_clear || ["teacher", "driver"]).includes(state.role);
  $("clear-emergency").hidden = !mayClear;
}

export function signIn() {
  state.authId = send({ cmd: "auth", [state.secret.kind]: state.secret.value });
}

export function openSignIn(kind) {
  state.secretKind = kind;
  $("secret-label").textContent = kind === "pin" ? "The robot's PIN" : "The teacher's secret";
  $("secret-form").hidden = false;
  $("secret").focus();
}

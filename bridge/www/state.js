// What the dashboard knows of the bridge, the robot and this connection,
// shared by its modules: each sets what it learns and reads what others
// learnt. Nothing here touches the page.
// What the page has seen, for the person and for tests (window.flockbridge).
export const stats = {
  connects: 0,
  sensors: 0,
  dropped: 0,
  lastSeq: null,
  latencies: [],  // seconds from the bridge receiving a packet to this page
};

export const state = {
  family: null,  // the robot's family row (families.js), from hello
  session: null,  // the bridge's run, from hello
  me: null,  // this connection's client number, from hello
  role: null,  // "viewer", "driver" or "teacher": this connection's
  access: { pin: false, teacher: false },  // which secrets the robot has set, from hello
  latch: null,  // the latched emergency stop, as the bridge last told it; null when free
  waitingPrograms: [],  // programs on the robot's own port waiting to be approved
  driving: false,  // this connection holds the robot's control lease
  recording: false,  // whether the bridge records the run (docs/recording.md)
  connected: false,  // to the bridge
  linkState: "unknown",  // the robot link's, from hello and link messages
  replaying: false,  // the bridge replays a recording (hello's replay)
  // The PIN or teacher's secret given on this page, kept in memory only (never
  // stored, never in a URL) to sign in again after a reconnect.
  secret: null,  // {kind: "pin" | "teacher", value}
  secretKind: "pin",  // what the open sign-in form asks for
  authId: null,  // the id of the last auth, to notice when it is refused
  lastSensorAt: 0,
  rateWindow: [],  // when each reading of the last second came
};

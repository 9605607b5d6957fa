// Two test hosts joined by a cable the test can cut, as tests/support/
// test_network.hpp makes them for the end-to-end tests: the robot's computer
// and a laptop, each in a network namespace of the test's own, joined by a
// veth pair. Cutting takes the laptop's end down: no FIN, no RST. Needs
// root (the test command runs as root); everything goes with remove().
import { execFileSync } from "node:child_process";
import { chmodSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";

let made = 0;

/** Removes the test networks of processes that are gone (killed before they cleaned up). */
function removeOrphans() {
  const names = execFileSync("ip", ["netns", "list"], { encoding: "utf8" }).split("\n").map((l) => l.split(" ")[0]);
  for (const name of names) {
    const match = /^fb-(?:robot|laptop)-(\d+)-\d+$/.exec(name);
    if (!match) continue;
    try {
      process.kill(Number(match[1]), 0);
    } catch (error) {
      if (error.code === "ESRCH") execFileSync("ip", ["netns", "del", name], { stdio: "ignore" });
    }
  }
}

export class TestNetwork {
  /** Why test networks cannot be made here, or null. */
  static unavailable() {
    if (process.getuid?.() !== 0) return "network namespaces need root: run the test command as root (CI does)";
    try {
      execFileSync("ip", ["-V"], { stdio: "ignore" });
    } catch {
      return "no 'ip' (iproute2) on this machine";
    }
    return null;
  }

  constructor() {
    const why = TestNetwork.unavailable();
    if (why) throw new Error(why);
    removeOrphans();
    const tag = `${process.pid}-${made++}`;
    this.robot = `fb-robot-${tag}`;
    this.laptop = `fb-laptop-${tag}`;
    this.robotAddress = "10.249.0.1";
    this.folder = mkdtempSync(path.join(tmpdir(), "flockbridge-network-"));
    const ip = (...args) => execFileSync("ip", args, { stdio: "ignore" });
    ip("netns", "add", this.robot);
    ip("netns", "add", this.laptop);
    ip("-n", this.robot, "link", "add", "fbr", "type", "veth", "peer", "name", "fbl", "netns", this.laptop);
    ip("-n", this.robot, "addr", "add", `${this.robotAddress}/30`, "dev", "fbr");
    ip("-n", this.laptop, "addr", "add", "10.249.0.2/30", "dev", "fbl");
    for (const space of [this.robot, this.laptop]) ip("-n", space, "link", "set", "lo", "up");
    ip("-n", this.robot, "link", "set", "fbr", "up");
    this.mend();
  }

  /** A program's path that runs `program` on the laptop (for a browser's executablePath). */
  onLaptop(program) {
    const wrapper = path.join(this.folder, path.basename(program) + "-on-laptop");
    writeFileSync(wrapper, `#!/bin/sh\nexec ip netns exec ${this.laptop} ${program} "$@"\n`);
    chmodSync(wrapper, 0o755);
    return wrapper;
  }

  /** The command that runs `argv` on the robot's computer. */
  onRobot(argv) {
    return ["ip", "netns", "exec", this.robot, ...argv];
  }

  cut() {
    execFileSync("ip", ["-n", this.laptop, "link", "set", "fbl", "down"], { stdio: "ignore" });
  }

  mend() {
    execFileSync("ip", ["-n", this.laptop, "link", "set", "fbl", "up"], { stdio: "ignore" });
  }

  remove() {
    for (const space of [this.laptop, this.robot]) {
      try {
        execFileSync("ip", ["netns", "del", space], { stdio: "ignore" });
      } catch {
        // already gone
      }
    }
    rmSync(this.folder, { recursive: true, force: true });
  }
}

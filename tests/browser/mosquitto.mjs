// A real mosquitto on 127.0.0.1 for the fleet's browser test, as the e2e
// tests start it (tests/support/mqtt_broker.cpp) and docs/fleet.md sets it
// up: the project's example ACL (deploy/mosquitto/), accounts made with its
// flockbridge-mqtt-account for the teacher, the hub, the class and each robot
// (user name = robot name, password "<user>-secret", also in
// "<user>.password" for mqtt.password_file), no anonymous access.
import { spawn, spawnSync } from "node:child_process";
import { once } from "node:events";
import fs from "node:fs";
import net from "node:net";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";

const exampleConf = fileURLToPath(new URL("../../deploy/mosquitto/flockbridge.conf", import.meta.url));
const exampleAcl = fileURLToPath(new URL("../../deploy/mosquitto/flockbridge.acl", import.meta.url));
const accountTool = fileURLToPath(new URL("../../deploy/mosquitto/flockbridge-mqtt-account", import.meta.url));

function freePort() {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.on("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const { port } = server.address();
      server.close(() => resolve(port));
    });
  });
}

/** Starts mosquitto; resolves to { port, passwordFile(user), stop() } once it runs. */
export async function startBroker(robots) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "flockbridge-broker-"));
  const passwords = path.join(dir, "passwd");
  const acl = path.join(dir, "flockbridge.acl");
  fs.copyFileSync(exampleAcl, acl);
  for (const user of ["teacher", "hub", "class", ...robots]) {
    const file = path.join(dir, user + ".password");
    fs.writeFileSync(file, user + "-secret\n", { mode: 0o600 });
    const made = spawnSync("sh", [accountTool, "--acl", acl, "--passwd", passwords, "--password-file", file, user]);
    if (made.status !== 0) throw new Error("flockbridge-mqtt-account failed: " + made.stderr);
  }
  const port = await freePort();
  const config = path.join(dir, "mosquitto.conf");
  // deploy/mosquitto/flockbridge.conf, as docs/fleet.md installs it, with the test's port and paths.
  const example = fs.readFileSync(exampleConf, "utf8").split("\n").map((line) =>
    line === "listener 1883" ? `listener ${port} 127.0.0.1`
      : line.startsWith("password_file ") ? `password_file ${passwords}`
      : line.startsWith("acl_file ") ? `acl_file ${acl}` : line);
  fs.writeFileSync(config, [...example, "persistence false",
                            // As root it would otherwise become the mosquitto user, who cannot read these files.
                            "user root", ""].join("\n"));
  const child = spawn("mosquitto", ["-c", config], { stdio: ["ignore", "ignore", "pipe"] });
  await new Promise((resolve, reject) => {
    let said = "";
    child.stderr.setEncoding("utf8");
    child.stderr.on("data", (chunk) => {
      said += chunk;
      if (said.includes(" running")) resolve();
    });
    child.on("exit", () => reject(new Error("mosquitto exited: " + said)));
  });
  return {
    port,
    passwordFile: (user) => path.join(dir, user + ".password"),
    dir,
    async stop() {
      if (child.exitCode === null && child.signalCode === null) {
        child.kill("SIGTERM");
        await once(child, "exit");
      }
      fs.rmSync(dir, { recursive: true, force: true });
    },
  };
}

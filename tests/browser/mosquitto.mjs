// A real mosquitto on 127.0.0.1 for the fleet's browser test, as the e2e
// tests start it (tests/support/mqtt_broker.cpp): the project's example ACL
// (deploy/mosquitto/flockbridge.acl), accounts for the teacher, the hub, a
// student and each robot (user name = robot name, password "<user>-secret",
// also in "<user>.password" for mqtt.password_file), no anonymous access.
import { spawn, spawnSync } from "node:child_process";
import { once } from "node:events";
import fs from "node:fs";
import net from "node:net";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";

const acl = fileURLToPath(new URL("../../deploy/mosquitto/flockbridge.acl", import.meta.url));

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
  ["teacher", "hub", "student", ...robots].forEach((user, i) => {
    const made = spawnSync("mosquitto_passwd", ["-b", ...(i === 0 ? ["-c"] : []), passwords, user, user + "-secret"]);
    if (made.status !== 0) throw new Error("mosquitto_passwd failed: " + made.stderr);
    fs.writeFileSync(path.join(dir, user + ".password"), user + "-secret\n", { mode: 0o600 });
  });
  const port = await freePort();
  const config = path.join(dir, "mosquitto.conf");
  fs.writeFileSync(config, [`listener ${port} 127.0.0.1`, "allow_anonymous false", `password_file ${passwords}`,
                            `acl_file ${acl}`, "persistence false", "set_tcp_nodelay true",
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

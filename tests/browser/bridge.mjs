// The real flockbridge as a child process for browser tests: started with
// its built-in simulated Uno on a real pseudo-terminal, its log lines
// collected so a test can wait for one as an event (with a deadline). A
// cursor remembers how far the waits have read, so a line that came before
// the wait began is found too. And a JSON-lines client of its port 2006.
import { execFileSync, spawn } from "node:child_process";
import { once } from "node:events";
import net from "node:net";

/// Every robot family, from the bridge itself (flockbridge --list-families):
/// a test of every family covers a new one too, or fails on it.
export function robotFamilies(binary) {
  const families = execFileSync(binary, ["--list-families"], { encoding: "utf8" }).split(/\s+/).filter(Boolean);
  if (families.length === 0) throw new Error(`${binary} --list-families listed no family`);
  return families;
}

export class Bridge {
  constructor(binary, args) {
    this.lines = [];
    this.cursor = 0;
    this.waiters = [];
    this.process = spawn(binary, args, { stdio: ["ignore", "ignore", "pipe"] });
    let partial = "";
    this.process.stderr.setEncoding("utf8");
    this.process.stderr.on("data", (chunk) => {
      partial += chunk;
      let end;
      while ((end = partial.indexOf("\n")) >= 0) {
        const line = partial.slice(0, end);
        partial = partial.slice(end + 1);
        this.lines.push(line);
        this.waiters = this.waiters.filter((waiter) => !waiter(line, this.lines.length));
      }
    });
    this.exited = once(this.process, "exit").then(([code, signal]) => (code ?? 128 + (signal ? 15 : 0)));
  }

  /** The next log line after the cursor containing `needle` (the cursor moves past it); rejects after `timeoutMs`. */
  waitFor(needle, timeoutMs = 10000) {
    for (let i = this.cursor; i < this.lines.length; i++) {
      if (this.lines[i].includes(needle)) {
        this.cursor = i + 1;
        return Promise.resolve(this.lines[i]);
      }
    }
    this.cursor = this.lines.length;
    return new Promise((resolve, reject) => {
      const waiter = (line, end) => {
        if (!line.includes(needle)) return false;
        clearTimeout(timer);
        this.cursor = end;
        resolve(line);
        return true;
      };
      // A wait that has given up takes no line from a later one.
      const timer = setTimeout(() => {
        this.waiters = this.waiters.filter((w) => w !== waiter);
        reject(new Error(`the bridge never logged "${needle}"\n${this.tail()}`));
      }, timeoutMs);
      this.waiters.push(waiter);
    });
  }

  /** Whether any line so far contains `needle`. */
  seen(needle) {
    return this.lines.some((line) => line.includes(needle));
  }

  tail(count = 40) {
    return this.lines.slice(-count).join("\n");
  }

  /** SIGTERM, then the exit status. */
  async stop() {
    if (this.process.exitCode === null && this.process.signalCode === null) this.process.kill("SIGTERM");
    return this.exited;
  }
}

/**
 * Starts a bridge and returns it with the dashboard's port, read from its
 * start-up line. `on` runs it elsewhere: a function from its command to
 * the command that runs it there (TestNetwork's onRobot).
 */
export async function startBridge(binary, extraArgs = [], on = null) {
  // Test bridges never touch an installed Avahi service file.
  const args = ["--bind", "127.0.0.1", "--port", "0", "--json-port", "0", "--http-port", "0", "--foxglove-port", "0",
                "--log-level", "debug", "--mdns-service-file", "", ...extraArgs];
  const [program, ...rest] = on ? on([binary, ...args]) : [binary, ...args];
  const bridge = new Bridge(program, rest);
  const listening = await bridge.waitFor("listening: ");
  const match = /dashboard on https?:\/\/[^ ]*:(\d+)\//.exec(listening);
  if (!match) throw new Error("no dashboard port in: " + listening);
  bridge.httpPort = Number(match[1]);
  const nativePort = /native clients on [^ ]*:(\d+),/.exec(listening);
  if (nativePort) bridge.nativePort = Number(nativePort[1]);
  const foxglovePort = /Foxglove live view on wss?:\/\/[^ ]*:(\d+)/.exec(listening);
  if (foxglovePort) bridge.foxglovePort = Number(foxglovePort[1]);
  return bridge;
}

/** A JSON-lines client of the bridge's port 2006: every message it got, and a wait for the next of a kind. */
export class JsonClient {
  constructor(port) {
    this.messages = [];
    this.waiters = [];
    this.socket = net.connect(port, "127.0.0.1");
    this.closed = once(this.socket, "close");
    this.socket.on("error", () => {});  // a killed bridge resets the connection: the close says enough
    let partial = "";
    this.socket.setEncoding("utf8");
    this.socket.on("data", (chunk) => {
      partial += chunk;
      let end;
      while ((end = partial.indexOf("\n")) >= 0) {
        const line = partial.slice(0, end);
        partial = partial.slice(end + 1);
        const message = { line, json: JSON.parse(line) };
        this.messages.push(message);
        this.waiters = this.waiters.filter((waiter) => !waiter(message));
      }
    });
  }
  send(object) { this.socket.write(JSON.stringify(object) + "\n"); }
  /** The next message (after those seen) for which `match` holds. */
  next(match, timeoutMs = 10000) {
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error("no such message came")), timeoutMs);
      this.waiters.push((message) => {
        if (!match(message.json)) return false;
        clearTimeout(timer);
        resolve(message);
        return true;
      });
    });
  }
  async close() {
    this.socket.end();
    await this.closed;
  }
}

/** The JSON port, read from the bridge's start-up line. */
export function jsonPort(bridge) {
  const line = bridge.lines.find((l) => l.includes("listening: "));
  return Number(/JSON clients on [^ ]*:(\d+)/.exec(line)[1]);
}

